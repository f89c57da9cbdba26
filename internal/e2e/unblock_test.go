package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// A worker's typed blocker with evidence blocks the run (start exits 1,
// status blocked, a handoff names it); `horizon unblock` with a note lets
// it go on, and the next worker brief carries the note.
func TestBlockedRunWaitsForUnblock(t *testing.T) {
	needsE2E(t)
	script := demoScript(t)
	fix := script.Rules[0] // demo worker-1: reads, fixes, reports
	fix.Name, fix.When = "worker-after-unblock", []string{"# Task (attempt 2 of", "CREDENTIAL-NOW-SET"}
	auditor := script.Rules[3] // demo auditor-2 accepts
	auditor.When = []string{"# Audit (attempt 2)"}
	w := newWorld(t, &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "worker-blocked", When: []string{"# Task (attempt 1 of"}, Replies: []fakemodel.Reply{{Text: "I cannot reach the package registry.\n\n```horizon-report\n{\"status\": \"blocked\", \"summary\": \"need a token\", \"blocker\": {\"type\": \"missing_credential\", \"evidence\": \"npm ERR! 401 Unauthorized: NPM_TOKEN is not set\"}}\n```"}}},
		fix, auditor,
	}})
	repo, _ := fixture(t)

	out, code := w.run(context.Background(), "start", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "blocked")
	id := runIDRe.FindString(out)
	s := w.status(id)
	require.Equal(t, horizon.StatusBlocked, s.Status)
	require.Equal(t, horizon.BlockerMissingCredential, s.Blocker.Type)
	require.FileExists(t, s.Handoff)

	o, code := w.run(context.Background(), "unblock", id, "f1")
	require.Equal(t, 2, code, o, "the note is required")
	o, code = w.run(context.Background(), "unblock", id, "f1", "--note", "CREDENTIAL-NOW-SET: NPM_TOKEN added")
	require.Equal(t, 0, code, o)
	s = w.waitStatus(id, 2*time.Minute, func(s horizon.RunState) bool {
		return s.Status == horizon.StatusCompleted || s.Status == horizon.StatusFailed
	})
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Contains(t, s.Attempts[1].Guidance, "CREDENTIAL-NOW-SET")
}
