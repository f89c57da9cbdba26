package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// toolsGoal is the goal of the planned runs: four small shell tools, which
// the scripted lead plans as two milestones of two features each.
const toolsGoal = "Add four text tools under lib/ (upper, lower, length, double), each with a test under tests/."

// A tool is one feature of the tools plan: a script under lib/ and its test.
type tool struct {
	id, name, title string
	code, test      string
}

var toolsPlan = [][]tool{
	{ // milestone m1: case
		{id: "f1", name: "upper", title: "Add lib/upper.sh",
			code: "#!/bin/sh\n# upper.sh S prints S in upper case.\nprintf '%s\\n' \"$1\" | tr '[:lower:]' '[:upper:]'\n",
			test: "#!/bin/sh\nset -e\n[ \"$(sh lib/upper.sh abc)\" = ABC ]\n"},
		{id: "f2", name: "lower", title: "Add lib/lower.sh",
			code: "#!/bin/sh\n# lower.sh S prints S in lower case.\nprintf '%s\\n' \"$1\" | tr '[:upper:]' '[:lower:]'\n",
			test: "#!/bin/sh\nset -e\n[ \"$(sh lib/lower.sh ABC)\" = abc ]\n"},
	},
	{ // milestone m2: measure and repeat
		{id: "f3", name: "length", title: "Add lib/length.sh",
			code: "#!/bin/sh\n# length.sh S prints the number of bytes in S.\nprintf '%s' \"$1\" | wc -c | tr -d ' '\n",
			test: "#!/bin/sh\nset -e\n[ \"$(sh lib/length.sh abcd)\" = 4 ]\n"},
		{id: "f4", name: "double", title: "Add lib/double.sh",
			code: "#!/bin/sh\n# double.sh S prints S twice.\nprintf '%s%s\\n' \"$1\" \"$1\"\n",
			test: "#!/bin/sh\nset -e\n[ \"$(sh lib/double.sh ab)\" = abab ]\n"},
	},
}

// rejectNote is the auditor's finding on f2's first attempt; the worker
// rule of f2's second attempt matches only a brief that carries it.
const rejectNote = "test mixed-case input too: MiXeD must print mixed"

// lowerTestFixed is f2's test once the finding is addressed.
const lowerTestFixed = "#!/bin/sh\nset -e\n[ \"$(sh lib/lower.sh ABC)\" = abc ]\n[ \"$(sh lib/lower.sh MiXeD)\" = mixed ]\n"

func allTools() []tool {
	var ts []tool
	for _, m := range toolsPlan {
		ts = append(ts, m...)
	}
	return ts
}

// toolsVerify is the repository's gate: every tool under lib/ needs a
// passing test under tests/ (TAP, one line per tool). It is green on the
// base commit (no tools yet) and after each feature; on the integration
// branch it checks all four.
const toolsVerify = `#!/bin/sh
# The gate: every tool in lib/ has a test in tests/ that passes.
cd "$(dirname "$0")/.."
n=0
fail=0
for f in lib/*.sh; do
  [ -e "$f" ] || continue
  name=$(basename "$f" .sh)
  n=$((n + 1))
  if [ -f "tests/test_$name.sh" ] && sh "tests/test_$name.sh"; then
    echo "ok $n - $name"
  else
    echo "not ok $n - $name"
    fail=1
  fi
done
echo "1..$n"
exit $fail
`

// toolsRepo makes the user's repository: a README and the gate, on main.
func toolsRepo(t *testing.T) (dir, head string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".horizon"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("# tools\n\nSmall text tools in POSIX sh.\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".horizon", "verify.sh"), []byte(toolsVerify), 0o755))
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "tools: the gate"},
	} {
		git(t, dir, args...)
	}
	return dir, git(t, dir, "rev-parse", "HEAD")
}

// toolsLeadPlan is the lead's horizon-plan block for toolsGoal.
func toolsLeadPlan(t *testing.T) string { return toolsLeadPlanWith(t, nil) }

// toolsLeadPlanWith is toolsLeadPlan with dependencies between the
// features (feature ID → the IDs it depends on).
func toolsLeadPlanWith(t *testing.T, deps map[string][]string) string {
	type feature struct {
		ID         string   `json:"id"`
		Title      string   `json:"title"`
		Acceptance []string `json:"acceptance"`
		Paths      []string `json:"paths"`
		Kind       string   `json:"kind"`
		DependsOn  []string `json:"depends_on,omitempty"`
	}
	type milestone struct {
		Title    string    `json:"title"`
		Features []feature `json:"features"`
	}
	plan := struct {
		Milestones  []milestone `json:"milestones"`
		Ambiguity   string      `json:"ambiguity"`
		Assumptions []string    `json:"assumptions"`
	}{Ambiguity: "LOW", Assumptions: []string{"POSIX sh and coreutils only"}}
	for i, m := range toolsPlan {
		ms := milestone{Title: []string{"Case tools", "Measure and repeat"}[i]}
		for _, tl := range m {
			ms.Features = append(ms.Features, feature{
				ID: tl.id, Title: tl.title, Kind: "bounded",
				Acceptance: []string{fmt.Sprintf("lib/%s.sh works as its comment says", tl.name), fmt.Sprintf("tests/test_%s.sh checks it and the gate runs it", tl.name)},
				Paths:      []string{"lib/" + tl.name + ".sh", "tests/test_" + tl.name + ".sh"},
				DependsOn:  deps[tl.id],
			})
		}
		plan.Milestones = append(plan.Milestones, ms)
	}
	b, err := json.Marshal(plan)
	require.NoError(t, err)
	return "Two milestones: case tools first, then the others.\n\n```horizon-plan\n" + string(b) + "\n```"
}

func report(summary string) string {
	return fmt.Sprintf("Done.\n\n```horizon-report\n{\"status\": \"satisfied\", \"summary\": %q}\n```", summary)
}

func write(path, content string) fakemodel.ToolCall {
	return fakemodel.ToolCall{Name: "write", Args: map[string]any{"filePath": "{{workdir}}/" + path, "content": content}}
}

const acceptAudit = "The tool and its test do what the feature asks.\n\n```horizon-audit\n{\"verdict\": \"accept\", \"findings\": []}\n```"

// toolsScript is the model of the planned runs: the lead reads the gate
// and plans; each feature's worker writes its tool and test; the auditor
// accepts every feature at once except f2, whose first attempt it rejects
// with rejectNote. Extra rules go first (they can take a conversation
// before the regular rule does).
func toolsScript(t *testing.T, extra ...fakemodel.Rule) *fakemodel.Script {
	rules := append([]fakemodel.Rule{}, extra...)
	rules = append(rules, fakemodel.Rule{
		Name: "lead", When: []string{"# Plan"},
		Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "read", Args: map[string]any{"filePath": "{{workdir}}/.horizon/verify.sh"}}}},
			{Text: toolsLeadPlan(t)},
		},
	})
	for _, tl := range allTools() {
		task := "Feature " + tl.id + ":"
		rules = append(rules, fakemodel.Rule{
			Name: "worker-" + tl.id + "-1", When: []string{"# Task (attempt 1)", task},
			Replies: []fakemodel.Reply{
				{ToolCalls: []fakemodel.ToolCall{write("lib/"+tl.name+".sh", tl.code), write("tests/test_"+tl.name+".sh", tl.test)}},
				{Text: report(fmt.Sprintf("added lib/%s.sh and tests/test_%s.sh", tl.name, tl.name))},
			},
		})
		audit := acceptAudit
		if tl.id == "f2" {
			audit = fmt.Sprintf("lower.sh is right but its test is thin.\n\n```horizon-audit\n{\"verdict\": \"reject\", \"findings\": [{\"file\": \"tests/test_lower.sh\", \"line\": 3, \"severity\": \"concern\", \"note\": %q}]}\n```", rejectNote)
		}
		rules = append(rules, fakemodel.Rule{
			Name: "auditor-" + tl.id + "-1", When: []string{"# Audit (attempt 1)", task},
			Replies: []fakemodel.Reply{{Text: audit}},
		})
	}
	rules = append(rules,
		fakemodel.Rule{
			Name: "worker-f2-2", When: []string{"# Task (attempt 2)", "Feature f2:", rejectNote},
			Replies: []fakemodel.Reply{
				{ToolCalls: []fakemodel.ToolCall{write("tests/test_lower.sh", lowerTestFixed)}},
				{Text: report("added the mixed-case case to tests/test_lower.sh")},
			},
		},
		fakemodel.Rule{
			Name: "auditor-f2-2", When: []string{"# Audit (attempt 2)", "Feature f2:"},
			Replies: []fakemodel.Reply{{Text: acceptAudit}},
		},
	)
	// A request no rule answers blocks its feature (and so ends the run
	// as blocked) instead of failing attempts until the budget runs out.
	unscripted := fakemodel.Reply{Text: "```horizon-report\n{\"status\": \"blocked\", \"summary\": \"unscripted\", \"blocker\": {\"type\": \"unavailable_service\", \"evidence\": \"the scripted model has no rule for this request (fakemodel fallback)\"}}\n```"}
	s := &fakemodel.Script{Rules: rules, Fallback: &unscripted}
	require.NoError(t, s.Validate())
	return s
}

// plannedWorld is a world whose `horizon start` plans (whatever the
// harness's default for run.planned is), with extra environment.
func plannedWorld(t *testing.T, script *fakemodel.Script, env ...string) *world {
	w := newWorld(t, script)
	w.env = append(w.env, "HORIZON_RUN_PLANNED=true")
	w.env = append(w.env, env...)
	t.Cleanup(func() {
		if t.Failed() {
			w.dumpHorizonLog()
		}
	})
	return w
}

// dumpHorizonLog logs horizon's own lines of the daemon's log (the
// harness's tail is mostly the embedded engine's shutdown), and the model's
// request log.
func (w *world) dumpHorizonLog() {
	b, err := os.ReadFile(filepath.Join(w.home, "logs", "horizon.log"))
	if err != nil {
		return
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.Contains(l, `"component":"temporal-server"`) {
			keep = append(keep, l)
		}
	}
	if len(keep) > 150 {
		keep = keep[len(keep)-150:]
	}
	w.t.Logf("--- logs/horizon.log (horizon's lines, tail)\n%s", strings.Join(keep, "\n"))
	var reqs []string
	unmatched := 0
	for _, r := range w.model.Requests() {
		line := fmt.Sprintf("%s rule=%q step=%d held=%v title=%v", r.At.Format("15:04:05.000"), r.Rule, r.Step, r.Held, r.Title)
		if r.Rule == "" && !r.Title && unmatched < 3 {
			unmatched++
			line += "\n" + r.LastUser
		}
		reqs = append(reqs, line)
	}
	if len(reqs) > 200 {
		reqs = append(reqs[:100], reqs[len(reqs)-100:]...)
	}
	w.t.Logf("--- model requests\n%s", strings.Join(reqs, "\n"))
}

// trailers counts each feature's Horizon-Feature trailer lines on the
// run's integration branch (nil while the branch does not exist yet).
func trailers(repo, id string) map[string]int {
	cmd := exec.Command("git", "log", "--format=%B", "refs/heads/"+horizon.IntegrationBranch(id))
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	n := map[string]int{}
	prefix := "Horizon-Feature: " + id + "/"
	for _, l := range strings.Split(string(out), "\n") {
		if f, ok := strings.CutPrefix(strings.TrimSpace(l), prefix); ok {
			n[f]++
		}
	}
	return n
}

// featureCommits returns the commits of main..horizon/<run>, oldest first,
// each with the feature its trailer names (and checks it names one).
func featureCommits(t *testing.T, repo, id string) (commits, features []string) {
	t.Helper()
	commits = strings.Fields(git(t, repo, "rev-list", "--reverse", "main..horizon/"+id))
	for _, c := range commits {
		var named []string
		for _, l := range strings.Split(git(t, repo, "log", "-1", "--format=%B", c), "\n") {
			if f, ok := strings.CutPrefix(strings.TrimSpace(l), "Horizon-Feature: "+id+"/"); ok {
				named = append(named, f)
			}
		}
		require.Len(t, named, 1, "commit %s must carry exactly one Horizon-Feature trailer of run %s", c, id)
		features = append(features, named[0])
	}
	return commits, features
}

func planFeatures(p *horizon.Plan) map[string]horizon.Feature {
	fs := map[string]horizon.Feature{}
	for _, m := range p.Milestones {
		for _, f := range m.Features {
			fs[f.ID] = f
		}
	}
	return fs
}

// readReceipts returns the run's receipt ledger, and checks that no gate
// run was recorded twice: one receipt per (feature, attempt), one line per
// receipt ID.
func readReceipts(t *testing.T, w *world, id string) map[string]gate.Receipt {
	t.Helper()
	recs, err := gate.ReadReceipts(filepath.Join(w.home, "runs", id, "receipts.jsonl"))
	require.NoError(t, err)
	byID := map[string]gate.Receipt{}
	byRun := map[string]string{}
	for _, r := range recs {
		_, dup := byID[r.ID]
		require.False(t, dup, "receipt %s is in the ledger twice", r.ID)
		byID[r.ID] = r
		key := fmt.Sprintf("%s/%d", r.Feature, r.Attempt)
		prev, dup := byRun[key]
		require.False(t, dup, "gate run %s recorded twice: receipts %s and %s", key, prev, r.ID)
		byRun[key] = r.ID
	}
	return byID
}

func readDecisions(t *testing.T, w *world, id string) []horizon.Decision {
	t.Helper()
	f, err := os.Open(filepath.Join(w.home, "runs", id, "decisions.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var ds []horizon.Decision
	seqs := map[int]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var d horizon.Decision
		require.NoError(t, json.Unmarshal(sc.Bytes(), &d), sc.Text())
		require.False(t, seqs[d.Seq], "decision %d written twice", d.Seq)
		seqs[d.Seq] = true
		ds = append(ds, d)
	}
	require.NoError(t, sc.Err())
	return ds
}

func hasDecision(ds []horizon.Decision, prefix string) bool {
	return slices.ContainsFunc(ds, func(d horizon.Decision) bool { return strings.HasPrefix(d.What, prefix) })
}

var (
	receiptRe   = regexp.MustCompile("`(r-[0-9a-f]{8,})`")
	completedRe = regexp.MustCompile("^- \\*\\*(\\S+)\\*\\* .*\\(receipt `(r-[0-9a-f]+)`, attempt (\\d+)\\)")
)

// checkHandoff holds handoff.md to the receipt ledger: every receipt it
// names is in receipts.jsonl, the receipt it cites for each completed
// feature and for the integration gate has verdict pass, and the completed
// features are exactly want.
func checkHandoff(t *testing.T, path string, receipts map[string]gate.Receipt, want []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	md := string(b)
	for _, m := range receiptRe.FindAllStringSubmatch(md, -1) {
		_, ok := receipts[m[1]]
		require.True(t, ok, "handoff names receipt %s, which is not in receipts.jsonl", m[1])
	}
	var completed []string
	section := ""
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "## ") {
			section = l
			continue
		}
		switch {
		case section == "## Completed (verified)":
			m := completedRe.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			r := receipts[m[2]]
			require.Equal(t, gate.Pass, r.Verdict, "handoff: %s completed on receipt %s", m[1], m[2])
			require.Equal(t, m[1], r.Feature, "handoff: %s cites another feature's receipt %s", m[1], m[2])
			require.Equal(t, m[3], fmt.Sprint(r.Attempt), "handoff: %s cites receipt %s of another attempt", m[1], m[2])
			completed = append(completed, m[1])
		case section == "## Integration gate" && strings.HasPrefix(l, "- **Receipt:**"):
			m := receiptRe.FindStringSubmatch(l)
			require.NotNil(t, m, l)
			r := receipts[m[1]]
			require.Equal(t, gate.Pass, r.Verdict)
			require.Equal(t, "integration", r.Feature)
		}
	}
	require.Equal(t, want, completed, "the features handoff.md lists as completed")
	require.NotContains(t, md, "## Not verified")
	require.NotContains(t, md, "## Not finished")
}

// recordHistory exports a workflow's history into workflows/testdata for
// TestReplay when HORIZON_RECORD_HISTORY is set (the fixtures are
// refreshed by running the planned e2e tests with it). No test writes the
// fixtures recorded before each kind of run had its own workflow type
// (run-*.json, planned-run-two-milestones.json,
// planned-run-continued-as-new.json, supervisor-three-items.json): they
// keep RunWorkflow, and a supervisor starting runs as one, replayed.
func recordHistory(t *testing.T, w *world, workflowID, name string) {
	t.Helper()
	if os.Getenv("HORIZON_RECORD_HISTORY") == "" {
		return
	}
	out, code := w.stdout("history", workflowID)
	require.Equal(t, 0, code, out)
	require.True(t, json.Valid([]byte(out)), "horizon history %s: not JSON", workflowID)
	root, err := moduleRoot()
	require.NoError(t, err)
	path := filepath.Join(root, "workflows", "testdata", name)
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	t.Logf("recorded the history of %s in %s", workflowID, path)
}

// A goal the lead plans into two milestones of two features: each feature
// runs in its own lane cut from the integration branch, passes the gate
// and the audit (f2 only after the auditor's finding went back to its
// worker) and lands as one commit with its trailer, in plan order; the
// integration gate passes on all four; plan.json, decisions.jsonl and a
// handoff backed by the receipts are written. The user's branch and work
// tree are untouched.
func TestPlannedRunTwoMilestones(t *testing.T) {
	needsE2E(t)
	w := plannedWorld(t, toolsScript(t))
	repo, head := toolsRepo(t)

	started := time.Now()
	out, code := w.run(context.Background(), "start", "--repo", repo, "--model", demo.Model, toolsGoal)
	require.Equal(t, 0, code, out)
	t.Logf("planned run took %s", time.Since(started).Round(time.Second))
	id := runIDRe.FindString(out)
	require.NotEmpty(t, id, out)

	// Four commits on horizon/<run>, one per feature, in plan order, each
	// with exactly its tool and test.
	commits, features := featureCommits(t, repo, id)
	require.Equal(t, []string{"f1", "f2", "f3", "f4"}, features)
	for i, tl := range allTools() {
		files := strings.Fields(git(t, repo, "diff-tree", "--no-commit-id", "--name-only", "-r", commits[i]))
		require.ElementsMatch(t, []string{"lib/" + tl.name + ".sh", "tests/test_" + tl.name + ".sh"}, files, tl.id)
	}
	require.Equal(t, lowerTestFixed, git(t, repo, "show", "horizon/"+id+":tests/test_lower.sh")+"\n")

	// The user's branch and work tree: as they were.
	require.Equal(t, head, git(t, repo, "rev-parse", "main"), "the user's branch moved")
	require.Empty(t, git(t, repo, "status", "--porcelain"), "the user's work tree changed")
	require.NoDirExists(t, filepath.Join(repo, "lib"))

	// f2's second worker brief carried the auditor's finding: its rule
	// matches only then, and its transcript shows the brief.
	rules := map[string]int{}
	for _, r := range w.model.Requests() {
		if r.Step == 0 && r.Rule != "" {
			rules[r.Rule]++
		}
	}
	require.Equal(t, map[string]int{
		"lead":        1,
		"worker-f1-1": 1, "auditor-f1-1": 1,
		"worker-f2-1": 1, "auditor-f2-1": 1, "worker-f2-2": 1, "auditor-f2-2": 1,
		"worker-f3-1": 1, "auditor-f3-1": 1,
		"worker-f4-1": 1, "auditor-f4-1": 1,
	}, rules)
	brief, err := os.ReadFile(filepath.Join(w.home, "runs", id, "transcripts", "f2-attempt-2-worker.md"))
	require.NoError(t, err)
	require.Contains(t, string(brief), rejectNote)

	// status --json: the plan with four accepted features and their
	// commits, f2 after one rejection; the integration gate passed.
	s := w.status(id)
	require.Equal(t, horizon.StatusCompleted, s.Status, s.Reason)
	require.NotNil(t, s.Plan)
	require.Len(t, s.Plan.Milestones, 2)
	fs := planFeatures(s.Plan)
	require.Len(t, fs, 4)
	for i, tl := range allTools() {
		f := fs[tl.id]
		require.Equal(t, horizon.FeatureAccepted, f.Status, tl.id)
		require.Equal(t, commits[i], f.Commit, tl.id)
		n := 1
		if tl.id == "f2" {
			n = 2
		}
		require.Len(t, f.Attempts, n, tl.id)
		require.Equal(t, horizon.OutcomeAccepted, f.Attempts[n-1].Outcome, tl.id)
		require.Len(t, f.ReceiptIDs, n, tl.id)
	}
	require.Equal(t, horizon.OutcomeRejected, fs["f2"].Attempts[0].Outcome)
	require.Equal(t, rejectNote, fs["f2"].Attempts[0].Audit.Findings[0].Note)
	require.NotNil(t, s.Integration)
	require.True(t, s.Integration.Passed(), "integration gate: %+v", s.Integration)

	// The receipts: one per gate run; the integration gate checked all four.
	receipts := readReceipts(t, w, id)
	for _, f := range fs {
		for _, r := range f.ReceiptIDs {
			require.Equal(t, gate.Pass, receipts[r].Verdict, "%s: receipt %s", f.ID, r)
		}
	}
	integration := receipts[s.Integration.ReceiptID]
	require.Equal(t, gate.Pass, integration.Verdict)
	require.Contains(t, integration.OutputTail, "1..4")
	require.NotContains(t, integration.OutputTail, "not ok")
	for _, tl := range allTools() {
		require.Regexp(t, fmt.Sprintf(`(?m)^ok \d - %s$`, tl.name), integration.OutputTail)
	}

	// Artifacts: plan.json, the decisions, a handoff the receipts back.
	b, err := os.ReadFile(filepath.Join(w.home, "runs", id, "plan.json"))
	require.NoError(t, err)
	var saved horizon.Plan
	require.NoError(t, json.Unmarshal(b, &saved))
	for _, f := range planFeatures(&saved) {
		require.Equal(t, horizon.FeatureAccepted, f.Status, "plan.json: %s", f.ID)
	}
	ds := readDecisions(t, w, id)
	require.True(t, hasDecision(ds, "planned 2 milestones, 4 features"), "decisions: %+v", ds)
	require.True(t, hasDecision(ds, "the integration gate passed on horizon/"+id), "decisions: %+v", ds)
	require.Equal(t, s.Decisions, len(ds))
	require.Equal(t, filepath.Join(w.home, "runs", id, "handoff.md"), s.Handoff)
	checkHandoff(t, s.Handoff, receipts, []string{"f1", "f2", "f3", "f4"})

	// The replay fixtures: the run, and f2's feature workflow (the second
	// child, its audit rejected once).
	// Recorded since the run's short steps run locally (changeLocalSteps);
	// planned-run-kind-*.json, recorded before, stay as they were.
	recordHistory(t, w, id, "planned-run-local-steps.json")
	recordHistory(t, w, id+".f2.2", "planned-feature-local-steps.json")
}

// holdFirstCommit installs a post-commit hook in the user's repository
// (lanes are its worktrees, so it runs for horizon's lane commits; the
// commit's --no-verify skips only pre-commit and commit-msg) that holds
// the first commit made after it, until the daemon is gone. It returns a
// file that exists once a commit is held.
func holdFirstCommit(t *testing.T, repo, home string) (reached string) {
	t.Helper()
	dir := t.TempDir()
	hold, reached := filepath.Join(dir, "hold"), filepath.Join(dir, "reached")
	require.NoError(t, os.WriteFile(hold, nil, 0o644))
	hook := fmt.Sprintf(`#!/bin/sh
# Test device: hold the first commit until the daemon dies.
[ -e %[1]q ] || exit 0
rm -f %[1]q
pid=$(cat %[3]q)
touch %[2]q
while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
`, hold, reached, filepath.Join(home, "server.pid"))
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".git", "hooks", "post-commit"), []byte(hook), 0o755))
	return reached
}

// strays lists the live processes started for this world: their
// environment names its HORIZON_HOME (the daemon passes its environment on
// to OpenCode, and OpenCode to the tools it runs).
func strays(home string) []int {
	want := []byte("HORIZON_HOME=" + home + "\x00")
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, want) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killDaemon SIGKILLs the daemon and waits until it and every process it
// had started are gone (OpenCode dies with its parent).
func killDaemon(t *testing.T, w *world) (killed time.Time) {
	t.Helper()
	var agents []int
	if _, err := os.Stat(filepath.Join(w.home, "agents.pids")); err == nil {
		agents = agentPIDs(t, w.home)
	}
	pid := w.daemonPID()
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	killed = time.Now()
	require.Eventually(t, func() bool { return !alive(pid) }, 30*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool {
		return !slices.ContainsFunc(agents, alive) && len(strays(w.home)) == 0
	}, 15*time.Second, 100*time.Millisecond, "processes outlived the daemon: %v", strays(w.home))
	return killed
}

// The run continues as new after every feature (run.features_per_history
// 1), and the daemon is SIGKILLed three times: inside f1's commit (lane
// commit made, integration branch not yet moved: a post-commit hook holds
// it), the moment f2 lands on the integration branch (the boundary where
// the run continues as new), and in the middle of f3's worker session (in
// the second milestone, two histories later). After each `horizon resume`
// the run goes on: it completes with every feature committed exactly once,
// no gate run recorded twice, no accepted attempt repeated, no model
// conversation for a feature after it was accepted, f3's session continued
// rather than restarted, and no process of the daemons left running.
func TestPlannedRunCrashAcrossContinueAsNewAndFeatureBoundary(t *testing.T) {
	needsE2E(t)
	// f3's first worker conversation writes its tool, then hangs at its
	// next model call until the daemon is killed; the continued session
	// is then served by worker-f3-1.
	crash := fakemodel.Rule{
		Name: "worker-f3-crash", When: []string{"# Task (attempt 1)", "Feature f3:"}, Times: 1,
		Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{write("lib/length.sh", allTools()[2].code)}},
			{Hold: "crash", Text: "never sent"},
		},
	}
	w := plannedWorld(t, toolsScript(t, crash), "HORIZON_RUN_FEATURES_PER_HISTORY=1")
	repo, head := toolsRepo(t)
	held1 := holdFirstCommit(t, repo, w.home)
	started := time.Now()

	out, code := w.stdout("start", "--detach", "--repo", repo, "--model", demo.Model, toolsGoal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	require.Regexp(t, runIDRe, id)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	resume := func() {
		t.Helper()
		out, code := w.run(ctx, "resume")
		require.Equal(t, 0, code, out)
		require.Contains(t, out, id)
	}

	// Crash 1: inside f1's commit. The lane commit is made (the hook runs
	// after it), the integration branch has not moved yet.
	require.Eventually(t, func() bool { _, err := os.Stat(held1); return err == nil }, 4*time.Minute, 20*time.Millisecond, "f1's commit was never made")
	require.Zero(t, trailers(repo, id)["f1"], "f1 landed before its commit finished")
	laneCommit := git(t, repo, "rev-parse", horizon.LaneBranch(id, "f1"))
	require.Contains(t, git(t, repo, "log", "-1", "--format=%B", laneCommit), "Horizon-Feature: "+id+"/f1")
	killed := killDaemon(t, w)
	f1Accepted := killed // the auditor accepted f1 before its commit began
	t.Logf("crash 1: killed the daemon in f1's commit (run started %s ago)", killed.Sub(started).Round(time.Second))
	resume()
	require.Eventually(t, func() bool { return trailers(repo, id)["f1"] > 0 }, 5*time.Minute, 50*time.Millisecond, "f1 never landed")
	t.Logf("crash 1: f1 landed %s after the kill", time.Since(killed).Round(time.Millisecond))

	// Crash 2: at the next feature boundary, the moment f2 lands (before
	// the run continues as new).
	var f2Landed time.Time
	require.Eventually(t, func() bool {
		if trailers(repo, id)["f2"] > 0 {
			f2Landed = time.Now()
			return true
		}
		return false
	}, 4*time.Minute, 10*time.Millisecond, "f2 never landed on horizon/%s", id)
	killed = killDaemon(t, w)
	t.Logf("crash 2: killed the daemon %s after f2 landed (run started %s ago)", killed.Sub(f2Landed).Round(time.Millisecond), killed.Sub(started).Round(time.Second))
	resume()

	// Crash 3: in the middle of f3's worker session.
	held, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "worker-f3-crash" && r.Held })
	require.NoError(t, err)
	t.Logf("crash 2: f3's worker started %s after the kill", held.At.Sub(killed).Round(time.Millisecond))
	require.Equal(t, map[string]int{"f1": 1, "f2": 1}, trailers(repo, id), "when f3 works, f1 and f2 have landed once")
	killed = killDaemon(t, w)
	t.Logf("crash 3: killed the daemon in f3's worker session (run started %s ago)", killed.Sub(started).Round(time.Second))
	resume()

	final := w.waitStatus(id, 5*time.Minute, endedWithHandoff)
	require.Equal(t, horizon.StatusCompleted, final.Status, "%s: %s", final.Status, final.Reason)
	t.Logf("planned run with three crashes took %s", time.Since(started).Round(time.Second))

	// Each feature landed exactly once, in plan order.
	require.Equal(t, map[string]int{"f1": 1, "f2": 1, "f3": 1, "f4": 1}, trailers(repo, id))
	commits, features := featureCommits(t, repo, id)
	require.Equal(t, []string{"f1", "f2", "f3", "f4"}, features)
	require.Equal(t, head, git(t, repo, "rev-parse", "main"), "the user's branch moved")
	require.Empty(t, git(t, repo, "status", "--porcelain"), "the user's work tree changed")

	// One history per feature but the last (continue-as-new after each).
	require.Equal(t, 3, final.Histories, "continue-as-new after f1, f2 and f3")
	// The commit the crash interrupted is the one that landed: the retry
	// found it on the lane and did not commit f1 again.
	require.Equal(t, laneCommit, commits[0])

	// No accepted attempt was repeated: the attempts are what the script
	// makes (f2 rejected once), numbered once each, and f3's one attempt
	// continued the session the crash interrupted.
	fs := planFeatures(final.Plan)
	for i, tl := range allTools() {
		f := fs[tl.id]
		require.Equal(t, horizon.FeatureAccepted, f.Status, tl.id)
		require.Equal(t, commits[i], f.Commit, tl.id)
		want := 1
		if tl.id == "f2" {
			want = 2
		}
		require.Len(t, f.Attempts, want, "%s: %+v", tl.id, f.Attempts)
		for n, a := range f.Attempts {
			require.Equal(t, n+1, a.N, tl.id)
		}
		require.Equal(t, horizon.OutcomeAccepted, f.Attempts[want-1].Outcome, tl.id)
	}
	require.True(t, fs["f3"].Attempts[0].Resumed, "f3's interrupted session was not continued")
	require.True(t, final.Integration.Passed())

	// The model's log: one conversation per attempt and role (f3's
	// continued session adds a turn to worker-f3-1, not a second
	// conversation), and none for a feature after it was accepted.
	conversations := map[string]int{}
	last := map[string]time.Time{}
	for _, r := range w.model.Requests() {
		if r.Rule == "" {
			continue
		}
		if r.Step == 0 {
			conversations[r.Rule]++
		}
		last[r.Rule] = r.At
	}
	require.Equal(t, map[string]int{
		"lead":        1,
		"worker-f1-1": 1, "auditor-f1-1": 1,
		"worker-f2-1": 1, "auditor-f2-1": 1, "worker-f2-2": 1, "auditor-f2-2": 1,
		"worker-f3-crash": 1, "worker-f3-1": 1, "auditor-f3-1": 1,
		"worker-f4-1": 1, "auditor-f4-1": 1,
	}, conversations)
	require.True(t, held.At.Before(last["worker-f3-1"]), "the continued f3 session was served after the crash")
	for rule, at := range last {
		f, ok := strings.CutPrefix(rule, "worker-")
		if !ok {
			f, ok = strings.CutPrefix(rule, "auditor-")
		}
		if !ok {
			continue
		}
		f = f[:2]
		accepted := fs[f].Attempts[len(fs[f].Attempts)-1].EndedAt
		require.False(t, at.After(accepted), "%s talked to the model at %s, after %s was accepted at %s", rule, at, f, accepted)
		switch f {
		case "f1":
			require.True(t, at.Before(f1Accepted), "%s talked to the model after f1's commit began", rule)
		case "f2":
			require.True(t, at.Before(f2Landed), "%s talked to the model after f2 landed", rule)
		}
	}

	// The ledgers: no gate run recorded twice, no decision written twice.
	receipts := readReceipts(t, w, id)
	for _, f := range fs {
		require.Len(t, f.ReceiptIDs, len(f.Attempts), f.ID)
		for _, r := range f.ReceiptIDs {
			require.Equal(t, gate.Pass, receipts[r].Verdict, "%s: receipt %s", f.ID, r)
		}
	}
	ds := readDecisions(t, w, id)
	require.True(t, hasDecision(ds, "planned 2 milestones, 4 features"))
	require.True(t, hasDecision(ds, "the integration gate passed on horizon/"+id))
	checkHandoff(t, final.Handoff, receipts, []string{"f1", "f2", "f3", "f4"})

	recordHistory(t, w, id, "planned-run-kind-continued-as-new.json")

	// Nothing the daemons started is left once the last one stops.
	out, code = w.run(ctx, "stop", "--timeout", "30s")
	require.Equal(t, 0, code, out)
	require.Eventually(t, func() bool { return len(strays(w.home)) == 0 }, 15*time.Second, 100*time.Millisecond,
		"processes left running after horizon stop: %v", strays(w.home))
}
