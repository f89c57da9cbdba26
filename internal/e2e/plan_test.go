package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// `horizon plan`: the lead (read-only) plans the goal; its first plan is
// invalid (an unknown kind) and goes back with the problem named; the
// second is printed as a validated plan of two milestones.
func TestPlanGoesBackToTheLeadUntilValid(t *testing.T) {
	needsE2E(t)
	bad := "```horizon-plan\n{\"milestones\": [{\"title\": \"All\", \"features\": [{\"id\": \"f1\", \"title\": \"Fix add\", \"kind\": \"huge\"}]}], \"ambiguity\": \"LOW\"}\n```"
	good := "```horizon-plan\n{\"milestones\": [{\"title\": \"Fix\", \"features\": [{\"id\": \"f1\", \"title\": \"Make add.sh add\", \"acceptance\": [\"add 2 3 prints 5\"], \"paths\": [\"add.sh\"], \"kind\": \"bounded\"}]}, {\"title\": \"Cover\", \"features\": [{\"id\": \"f2\", \"title\": \"Test negative numbers\", \"acceptance\": [\"add -2 -3 prints -5\"], \"paths\": [\"tests/**\"], \"kind\": \"bounded\"}]}], \"ambiguity\": \"LOW\", \"assumptions\": [\"integer arithmetic\"]}\n```"
	w := newWorld(t, &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "lead-retry", When: []string{"# Plan", "previous plan was rejected", "huge"}, Replies: []fakemodel.Reply{{Text: good}}},
		{Name: "lead-first", When: []string{"# Plan"}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "read", Args: map[string]any{"filePath": "{{workdir}}/add.sh"}}}},
			{Text: bad},
		}},
	}})
	repo, head := fixture(t)

	out, code := w.stdout("plan", "--repo", repo, "--model", demo.Model, "--json", goal)
	require.Equal(t, 0, code, out)
	var res struct {
		Plan struct {
			Milestones []struct {
				Title    string `json:"title"`
				Features []struct {
					ID, Kind string
				} `json:"features"`
			} `json:"milestones"`
			Assumptions []string `json:"assumptions"`
		} `json:"Plan"`
		Tries    int
		Rejected []string
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	require.Equal(t, 2, res.Tries)
	require.Len(t, res.Rejected, 1)
	require.Contains(t, res.Rejected[0], "huge")
	require.Len(t, res.Plan.Milestones, 2)
	require.Equal(t, "f2", res.Plan.Milestones[1].Features[0].ID)
	require.Equal(t, []string{"integer arithmetic"}, res.Plan.Assumptions)
	require.Equal(t, head, git(t, repo, "rev-parse", "HEAD"), "planning changes nothing")
	require.Empty(t, git(t, repo, "status", "--porcelain"))
}

// `horizon plan` runs in the foreground, so it does not wait at a spend
// ceiling: with today's spend at the day ceiling (another run's $100 in
// the day's ledger, spend.day_ceiling 100) and a metered lead with no
// local model, it exits 1 before the lead's call, naming the ceiling and
// `horizon set-ceiling --day`; the lead's model is never asked.
func TestPlanRefusedAtDayCeiling(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "lead", When: []string{"# Plan"}, Replies: []fakemodel.Reply{{Text: "```horizon-plan\n{}\n```"}}},
	}})
	w.env = append(w.env, "HORIZON_SPEND_DAY_CEILING=100")
	dir := filepath.Join(w.home, "spend")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	rec := fmt.Sprintf(`{"key":"run-other/f1/1/worker","run":"run-other","cost":100,"at":%q}`+"\n", time.Now().UTC().Format(time.RFC3339))
	require.NoError(t, os.WriteFile(filepath.Join(dir, time.Now().UTC().Format(time.DateOnly)+".jsonl"), []byte(rec), 0o600))
	repo, head := fixture(t)

	out, code := w.run(t.Context(), "plan", "--repo", repo, "--model", demo.Model, goal)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "today's spend $100.0000 has reached the day ceiling $100.0000")
	require.Contains(t, out, "`horizon set-ceiling --day")
	for _, r := range w.model.Requests() {
		require.NotEqual(t, "lead", r.Rule, "the lead's metered model was called at the day ceiling")
	}
	require.Equal(t, head, git(t, repo, "rev-parse", "HEAD"))
}
