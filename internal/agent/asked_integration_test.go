package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

const deniedScript = `{"rules": [
  {"name": "worker-denied", "when": ["TASK-DENIED"], "replies": [
    {"tool_calls": [{"name": "question", "args": {"questions": [{"question": "Which database should I use?", "header": "db", "options": [{"label": "sqlite", "description": "a file"}]}]}}, {"name": "read", "args": {"filePath": "{{workdir}}/.env"}}]},
    {"text": "` + "```" + `horizon-report\n{\"status\": \"continue\", \"summary\": \"went on without them\"}\n` + "```" + `"}
  ]}
]}`

// A worker's denied tool calls are recorded on its result, though no
// request ever reaches /permission or /question: a deny rule answers at
// once (reading .env), and the question tool is not offered at all (the
// call comes back as OpenCode's "invalid" tool). The worker goes on.
func TestWorkerDeniedCallsAreRecorded(t *testing.T) {
	h := newHarness(t, deniedScript)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, WriteAgentFiles(h.confDir))
	s := h.start(ctx)
	repo := gitRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".env"), []byte("SECRET=1\n"), 0o600))
	res, err := s.RunSession(ctx, SessionRequest{Directory: repo, Agent: AgentWorker, Model: "fake/fake-coder", Prompt: "TASK-DENIED: go"}, nil)
	require.NoError(t, err)
	rep, _, err := ParseReport(res.Text)
	require.NoError(t, err, "the worker went on to report: %q", res.Text)
	require.Equal(t, horizon.ReportContinue, rep.Status)
	require.Equal(t, []horizon.Ask{
		{Kind: horizon.AskQuestion, Text: "(the question tool is not offered; the question was not kept)"},
		{Kind: horizon.AskPermission, Text: "read: " + filepath.Join(repo, ".env")},
	}, res.Asked)
}
