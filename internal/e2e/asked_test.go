package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// A worker denied the same permission on two attempts (it reads the
// lane's .env, which its agent may not) is blocked permission_denied with
// the request as evidence, and `horizon status` shows what it asked; a
// worker that reports a blocker in a spelling the prompt once taught
// ("external-service") pauses its run at once, not retried.
func TestAskedTwiceBlocksAndPromptSpellingsPause(t *testing.T) {
	needsE2E(t)
	report := func(body string) string { return "```horizon-report\n" + body + "\n```" }
	readEnv := []fakemodel.Reply{
		{ToolCalls: []fakemodel.ToolCall{{Name: "read", Args: map[string]any{"filePath": "{{workdir}}/.env"}}}},
		{Text: report(`{"status": "continue", "summary": "could not read the settings; add.sh left as it is"}`)},
	}
	w := newWorld(t, &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "worker-env", When: []string{"ENV-GOAL", "# Task (attempt"}, Replies: readEnv},
		{Name: "worker-service", When: []string{"SERVICE-GOAL", "# Task (attempt"}, Replies: []fakemodel.Reply{{Text: report(
			`{"status": "blocked", "summary": "the registry is down", "blocker": {"type": "external-service", "evidence": "npm ERR! 503 Service Unavailable: registry.npmjs.org"}}`)}}},
	}})
	repo, _ := fixture(t)
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".env"), []byte("ADD_MODE=sum\n"), 0o600))
	git(t, repo, "add", "-f", ".env")
	git(t, repo, "commit", "-qm", "settings")

	// Detached, and waited for with a generous deadline: the first
	// preflight on a loaded machine takes minutes.
	blocked := func(s horizon.RunState) bool { return s.Status == horizon.StatusBlocked || s.Status.Terminal() }
	out, code := w.run(context.Background(), "start", "--detach", "--single", "--repo", repo, "--model", demo.Model, "ENV-GOAL: "+goal)
	require.Equal(t, 0, code, out)
	id := runIDRe.FindString(out)
	require.NotEmpty(t, id, out)
	s := w.waitStatus(id, 15*time.Minute, blocked)
	require.Equal(t, horizon.StatusBlocked, s.Status)
	require.Equal(t, horizon.BlockerPermissionDenied, s.Blocker.Type)
	require.Contains(t, s.Blocker.Evidence, ".env")
	require.Contains(t, s.Blocker.Evidence, "attempts 1, 2")
	require.Len(t, s.Attempts, 2)
	require.Equal(t, horizon.AskPermission, s.Attempts[0].Asked[0].Kind)
	require.Contains(t, s.Attempts[0].Asked[0].Text, "read: ")
	text, code := w.run(context.Background(), "status", id)
	require.Equal(t, 0, code, text)
	require.Contains(t, text, "attempt 1 asked permission: read: ")
	require.Contains(t, text, "attempt 2 asked permission: read: ")

	out, code = w.run(context.Background(), "start", "--detach", "--single", "--repo", repo, "--model", demo.Model, "SERVICE-GOAL: "+goal)
	require.Equal(t, 0, code, out)
	id = runIDRe.FindString(out)
	s = w.waitStatus(id, 15*time.Minute, blocked)
	require.Equal(t, horizon.StatusBlocked, s.Status)
	require.Equal(t, horizon.BlockerUnavailableService, s.Blocker.Type)
	require.Len(t, s.Attempts, 1, "paused on the first report, not retried")
}
