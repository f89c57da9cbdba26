package demo

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/fakemodel"
	"github.com/horizon/horizon/ladder"
)

// singleGoal is the goal the one-feature e2e tests give the same script.
const singleGoal = "Make the gate pass: add.sh must print the sum of its two arguments."

func script(t *testing.T) *fakemodel.Script {
	t.Helper()
	s, err := Script()
	require.NoError(t, err)
	return s
}

func rule(t *testing.T, s *fakemodel.Script, name string) fakemodel.Rule {
	t.Helper()
	for _, r := range s.Rules {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no rule %q in the demo script", name)
	return fakemodel.Rule{}
}

// block returns the JSON of a reply's fenced ```kind block.
func block(t *testing.T, text, kind string) []byte {
	t.Helper()
	_, rest, ok := strings.Cut(text, "```"+kind+"\n")
	require.True(t, ok, "no %s block in %q", kind, text)
	body, _, ok := strings.Cut(rest, "\n```")
	require.True(t, ok)
	return []byte(body)
}

func lastText(r fakemodel.Rule) string { return r.Replies[len(r.Replies)-1].Text }

// plan is the lead's scripted plan of Goal, validated as a run validates it.
func plan(t *testing.T, s *fakemodel.Script) horizon.Plan {
	t.Helper()
	var b horizon.PlanBlock
	require.NoError(t, json.Unmarshal(block(t, lastText(rule(t, s, "lead-plan")), "horizon-plan"), &b))
	p, err := horizon.PlanFromBlock(Goal, b)
	require.NoError(t, err)
	require.Empty(t, p.Warnings)
	return p
}

// rejected is an attempt the named auditor rule rejected, as the next
// brief sees it.
func rejected(t *testing.T, s *fakemodel.Script, n int, auditor string) *horizon.Attempt {
	t.Helper()
	var au horizon.Audit
	require.NoError(t, json.Unmarshal(block(t, lastText(rule(t, s, auditor)), "horizon-audit"), &au))
	require.False(t, au.Accepted(), "%s must reject", auditor)
	return &horizon.Attempt{N: n, Outcome: horizon.OutcomeRejected, Audit: &au}
}

// Each brief of a one-feature run and of a planned run of the demo is
// answered by its own rule, whatever the order of the rules: the planned
// rules never match a one-feature brief and the other way round.
func TestScriptAnswersEachBrief(t *testing.T) {
	s := script(t)
	p := plan(t, s)
	require.Len(t, p.Milestones, 2)
	f1, f2 := p.Milestones[0].Features[0], p.Milestones[1].Features[0]
	require.Equal(t, []string{"f1", "f2"}, []string{f1.ID, f2.ID})
	gate := &horizon.GateRun{Verdict: "pass", Command: ".horizon/verify.sh"}
	t1, t2 := horizon.FeatureTask(Goal, f1), horizon.FeatureTask(Goal, f2)
	f2Guidance := horizon.StrategyGuidance(horizon.StrategyFor(1, 0))

	for _, c := range []struct{ name, prompt, rule string }{
		{"single worker 1", horizon.WorkerBrief(singleGoal, 1, 3, nil, ""), "worker-1"},
		{"single auditor 1", horizon.AuditBrief(singleGoal, 1, gate, horizon.DiffPlaceholder), "auditor-1"},
		{"single worker 2", horizon.WorkerBrief(singleGoal, 2, 3, rejected(t, s, 1, "auditor-1"), ""), "worker-2"},
		{"single auditor 2", horizon.AuditBrief(singleGoal, 2, gate, horizon.DiffPlaceholder), "auditor-2"},
		{"lead", horizon.PlanBrief(Goal, ""), "lead-plan"},
		{"f1 worker 1", horizon.WorkerBrief(t1, 1, 0, nil, ""), "f1-worker-1"},
		{"f1 auditor 1", horizon.AuditBrief(t1, 1, gate, horizon.DiffPlaceholder), "f1-auditor-1"},
		{"f2 worker 1", horizon.WorkerBrief(t2, 1, 0, nil, ""), "f2-worker-1"},
		{"f2 auditor 1", horizon.AuditBrief(t2, 1, gate, horizon.DiffPlaceholder), "f2-auditor-1"},
		{"f2 worker 2 with the finding", horizon.WorkerBrief(t2, 2, 0, rejected(t, s, 1, "f2-auditor-1"), f2Guidance), "f2-worker-2"},
		{"f2 auditor 2", horizon.AuditBrief(t2, 2, gate, horizon.DiffPlaceholder), "f2-auditor-2"},
		{"f2 worker 2 without it", horizon.WorkerBrief(t2, 2, 0, nil, f2Guidance), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.rule, ruleFor(t, s, c.prompt))
			rev := *s
			rev.Rules = nil
			for i := len(s.Rules) - 1; i >= 0; i-- {
				rev.Rules = append(rev.Rules, s.Rules[i])
			}
			require.Equal(t, c.rule, ruleFor(t, &rev, c.prompt), "the match depends on the order of the rules")
		})
	}
}

// ruleFor sends prompt as a conversation's first request and returns the
// rule that answered it ("" for the fallback).
func ruleFor(t *testing.T, s *fakemodel.Script, prompt string) string {
	t.Helper()
	quiet := *s
	quiet.Rules = make([]fakemodel.Rule, len(s.Rules))
	for i, r := range s.Rules {
		r.Replies = []fakemodel.Reply{{Text: "ok"}} // without the demo's delays
		quiet.Rules[i] = r
	}
	srv := fakemodel.New(&quiet)
	body, err := json.Marshal(map[string]any{
		"model":    fakemodel.DefaultModel,
		"messages": []map[string]any{{"role": "system", "content": "You are OpenCode.\n  Working directory: /tmp/lane"}, {"role": "user", "content": prompt}},
	})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	return reqs[0].Rule
}

// The gate of the sample repository is red at its base, and green after
// every scripted worker of a planned run (f1 alone, then f2's attempts) and
// of a one-feature run: a feature is accepted only on a passing gate. Each
// planned worker stays inside its feature's paths.
func TestScriptKeepsTheGateGreen(t *testing.T) {
	s := script(t)
	p := plan(t, s)
	paths := map[string][]string{"f1": p.Milestones[0].Features[0].Paths, "f2": p.Milestones[1].Features[0].Paths}
	for _, c := range []struct {
		name    string
		workers []string
	}{
		{"planned", []string{"f1-worker-1", "f2-worker-1", "f2-worker-2"}},
		{"single", []string{"worker-1", "worker-2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "repo")
			require.NoError(t, CreateRepo(dir, ""))
			require.Error(t, verify(dir), "the sample's gate must start red")
			for _, w := range c.workers {
				changed := apply(t, dir, rule(t, s, w))
				if f, _, ok := strings.Cut(w, "-"); ok && paths[f] != nil {
					require.Empty(t, ladder.OutsideAllowList(paths[f], changed), "%s writes outside %s's paths", w, f)
				}
				require.NoError(t, verify(dir), "the gate is red after %s", w)
			}
			test, err := os.ReadFile(filepath.Join(dir, "tests", "test_add.sh"))
			require.NoError(t, err)
			require.Contains(t, string(test), "check -2 -3 -5\n")
		})
	}
}

// apply does what a worker rule's write and edit calls ask, as OpenCode
// would, and returns the files it changed (relative, slash-separated).
func apply(t *testing.T, dir string, r fakemodel.Rule) []string {
	t.Helper()
	var changed []string
	for _, rep := range r.Replies {
		for _, tc := range rep.ToolCalls {
			if tc.Name != "write" && tc.Name != "edit" {
				continue
			}
			file := strings.ReplaceAll(tc.Args["filePath"].(string), "{{workdir}}", dir)
			rel, err := filepath.Rel(dir, file)
			require.NoError(t, err)
			changed = append(changed, filepath.ToSlash(rel))
			var content string
			if tc.Name == "write" {
				content = tc.Args["content"].(string)
			} else {
				b, err := os.ReadFile(file)
				require.NoError(t, err)
				old := tc.Args["oldString"].(string)
				require.Equal(t, 1, strings.Count(string(b), old), "%s: oldString %q must occur once in %s", r.Name, old, rel)
				content = strings.Replace(string(b), old, tc.Args["newString"].(string), 1)
			}
			require.NoError(t, os.WriteFile(file, []byte(content), 0o755))
		}
	}
	require.NotEmpty(t, changed, "%s changes nothing", r.Name)
	return changed
}

func verify(dir string) error {
	cmd := exec.Command("sh", ".horizon/verify.sh")
	cmd.Dir = dir
	return cmd.Run()
}
