package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/fakemodel"
	"github.com/horizon/horizon/internal/specialist"
	"github.com/horizon/horizon/ladder"
)

// A leaderboard where build and explore resolve among the fake provider's
// models and analyze does not (its only model is not connected), so
// code-review is unavailable: there is no cross-role fallback.
const delegationLeaderboard = `{"revision": 1, "models": [
  {"name": "coder", "routes": ["fake/fake-coder"], "roles": {"build": {"rank": 1}, "explore": {"rank": 2}},
   "capabilities": {"contextLength": 128000, "toolCall": true, "cost": "low"}},
  {"name": "explorer", "routes": ["fake/fake-explore"], "roles": {"explore": {"rank": 1}},
   "capabilities": {"contextLength": 128000, "toolCall": true, "cost": "low"}},
  {"name": "analyst", "routes": ["elsewhere/analyst"], "roles": {"analyze": {"rank": 1}},
   "capabilities": {"contextLength": 128000, "toolCall": true, "cost": "low"}}
]}`

const delegationScript = `{
  "rules": [
    {"name": "child-explore", "when": ["CHILD-EXPLORE"], "unless": ["TASK-DELEGATE"], "replies": [
      {"tool_calls": [{"name": "write", "args": {"filePath": "{{workdir}}/explorer-wrote.txt", "content": "no\n"}}], "usage": {"prompt_tokens": 1000, "completion_tokens": 50}},
      {"text": "The greeting is in README.md, line 1.", "usage": {"prompt_tokens": 1000, "completion_tokens": 50}}
    ]},
    {"name": "worker-delegates", "when": ["TASK-DELEGATE-READ"], "replies": [
      {"tool_calls": [{"name": "task", "args": {"description": "find the greeting", "prompt": "CHILD-EXPLORE: where is the greeting?", "subagent_type": "horizon-sp-explorer"}}], "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
      {"text": "Done.\n\n` + "```" + `horizon-report\n{\"status\": \"satisfied\", \"summary\": \"asked the explorer\"}\n` + "```" + `\n", "usage": {"prompt_tokens": 100, "completion_tokens": 10}}
    ]},
    {"name": "worker-delegates-write", "when": ["TASK-DELEGATE-WRITE"], "replies": [
      {"tool_calls": [{"name": "task", "args": {"description": "write it", "prompt": "CHILD-WRITE: write child.txt", "subagent_type": "horizon-sp-worker"}}]},
      {"text": "` + "```" + `horizon-report\n{\"status\": \"blocked\", \"summary\": \"delegation refused\", \"blocker\": {\"type\": \"platform\", \"evidence\": \"task denied\"}}\n` + "```" + `\n"}
    ]},
    {"name": "worker-delegates-project", "when": ["TASK-DELEGATE-PROJECT"], "replies": [
      {"tool_calls": [{"name": "task", "args": {"description": "review it", "prompt": "CHILD-PROJECT: review the greeting", "subagent_type": "horizon-pj-0123456789abcdef-reviewer"}}]},
      {"text": "` + "```" + `horizon-report\n{\"status\": \"satisfied\", \"summary\": \"asked the reviewer\"}\n` + "```" + `\n"}
    ]},
    {"name": "child-project", "when": ["CHILD-PROJECT", "PJ-REVIEWER-BODY"], "unless": ["TASK-DELEGATE"], "replies": [
      {"text": "The greeting reads well."}
    ]},
    {"name": "child-write", "when": ["CHILD-WRITE"], "unless": ["TASK-DELEGATE"], "replies": [
      {"tool_calls": [{"name": "write", "args": {"filePath": "{{workdir}}/child.txt", "content": "written by a child\n"}}]},
      {"text": "wrote it"}
    ]}
  ]
}`

// The worker delegates read-only work to the explorer specialist through
// OpenCode's native task tool: the child session runs as the explorer's
// subagent, on the model ranked for explore, without write tools, and its
// cost is on the worker's result. A task call to a specialist that can
// write is refused by OpenCode's permissions.
func TestSpecialistDelegation(t *testing.T) {
	h := newHarness(t, delegationScript)
	require.NoError(t, fakemodel.WriteOpenCodeConfig(h.extra, h.fake.URL(), "fake-coder", "fake-explore"))

	lb, err := ladder.ParseLeaderboard([]byte(delegationLeaderboard))
	require.NoError(t, err)
	set, err := specialist.Load(specialist.Dirs{})
	require.NoError(t, err)
	m := specialist.Materialise(set, lb, []string{"fake/fake-coder", "fake/fake-explore"}, "")
	require.Contains(t, m.Unavailable, "code-review", "analyze has no connected model")
	require.Len(t, m.Delegates, 1)
	require.Equal(t, "horizon-sp-explorer", m.Delegates[0].Agent)
	require.Equal(t, "fake/fake-explore", m.Delegates[0].Model)
	sub := Subagents{Files: m.Files, Prefix: specialist.AgentPrefix, WorkerBrief: specialist.DelegationBrief(m.Delegates)}
	for _, d := range m.Delegates {
		sub.Delegates = append(sub.Delegates, d.Agent)
	}
	require.NoError(t, WriteAgentFilesWith(h.confDir, sub))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := h.start(ctx) // StartServer rewrites horizon's own files, not the subagents
	require.NoError(t, WriteAgentFilesWith(h.confDir, sub))

	t.Run("agents as opencode sees them", func(t *testing.T) {
		repo := gitRepo(t)
		agents, err := s.Agents(ctx, repo)
		require.NoError(t, err)
		byName := map[string]AgentInfo{}
		for _, a := range agents {
			byName[a.Name] = a
		}
		ex, ok := byName["horizon-sp-explorer"]
		require.True(t, ok, "opencode lists the explorer specialist")
		require.Equal(t, "subagent", ex.Mode)
		for _, p := range []string{"edit", "write", "bash", "task", "webfetch", "question", "external_directory", "doom_loop"} {
			require.Equal(t, "deny", ex.Action(p, "x"), "explorer: %s", p)
		}
		for _, p := range []string{"read", "grep", "glob", "list"} {
			require.Equal(t, "allow", ex.Action(p, "src/a.go"), "explorer: %s", p)
		}
		wsp := byName["horizon-sp-worker"]
		require.Equal(t, "allow", wsp.Action("edit", "a.go"))
		require.Equal(t, "allow", wsp.Action("bash", "ls"))
		require.Equal(t, "deny", wsp.Action("task", "horizon-sp-explorer"), "specialists never delegate")
		_, ok = byName["horizon-sp-code-review"]
		require.False(t, ok, "an unavailable specialist is not materialised")

		w := byName[AgentWorker]
		require.Equal(t, "allow", w.Action("task", "horizon-sp-explorer"))
		for _, other := range []string{"horizon-sp-worker", "horizon-sp-code-review", "general", "horizon-auditor"} {
			require.Equal(t, "deny", w.Action("task", other), "worker may not delegate to %s", other)
		}
		b, err := os.ReadFile(filepath.Join(h.confDir, "agent", AgentWorker+".md"))
		require.NoError(t, err)
		require.Contains(t, string(b), "- horizon-sp-explorer: ")
		require.NotContains(t, string(b), "code-review", "the brief lists only available specialists")
	})

	t.Run("worker delegates to the explorer", func(t *testing.T) {
		repo := gitRepo(t)
		res, err := s.RunSession(ctx, SessionRequest{Directory: repo, Agent: AgentWorker, Model: "fake/fake-coder",
			Prompt: "TASK-DELEGATE-READ: find the greeting."}, nil)
		require.NoError(t, err)
		rep, _, err := ParseReport(res.Text)
		require.NoError(t, err, res.Text)
		require.Equal(t, "asked the explorer", rep.Summary)

		require.Len(t, res.Children, 1)
		c := res.Children[0]
		require.Equal(t, "horizon-sp-explorer", c.Agent)
		require.Equal(t, "fake/fake-explore", c.Model, "the child runs on the model ranked for explore")
		require.Equal(t, int64(2000), c.Usage.Input)
		require.Greater(t, c.Usage.Cost, 0.0)
		require.Equal(t, int64(200+2000), res.Usage.Input, "the child's tokens are on the parent's result")
		require.Equal(t, int64(20+100), res.Usage.Output)

		var childModels []string
		for _, r := range h.fake.Requests() {
			if r.Rule == "child-explore" {
				childModels = append(childModels, r.Model)
			}
			if r.Rule == "worker-delegates" {
				require.Equal(t, "fake-coder", r.Model)
			}
		}
		require.Equal(t, []string{"fake-explore", "fake-explore"}, childModels)
		require.NoFileExists(t, filepath.Join(repo, "explorer-wrote.txt"), "the read-only explorer cannot write")
	})

	// A repository's own specialist, written after the server started,
	// is reached from a lane OpenCode has not served yet, and only by a
	// session whose own rules allow it: the worker agent denies it.
	t.Run("a repository's specialist by the session's rules", func(t *testing.T) {
		const pj = "horizon-pj-0123456789abcdef-reviewer"
		reviewer := &specialist.Specialist{Manifest: specialist.Manifest{Name: "reviewer", Description: "reviews", Tools: []string{"read-only"}, Prompt: "PJ-REVIEWER-BODY: review carefully."}}
		require.NoError(t, WriteNamedAgents(h.confDir, specialist.ProjectPrefix, map[string][]byte{pj: specialist.AgentFile(reviewer, specialist.Binding{Model: "fake/fake-explore"})}))
		require.Error(t, WriteNamedAgents(h.confDir, specialist.ProjectPrefix, map[string][]byte{AgentWorker: nil}), "horizon's own agents are not the repository's")

		denied := gitRepo(t)
		_, err := s.RunSession(ctx, SessionRequest{Directory: denied, Agent: AgentWorker, Model: "fake/fake-coder",
			Prompt: "TASK-DELEGATE-PROJECT: ask the reviewer."}, nil)
		require.NoError(t, err)
		for _, r := range h.fake.Requests() {
			require.NotEqual(t, "child-project", r.Rule, "without the session's rule the worker may not reach it")
		}

		allowed := gitRepo(t)
		res, err := s.RunSession(ctx, SessionRequest{Directory: allowed, Agent: AgentWorker, Model: "fake/fake-coder",
			Prompt:     "TASK-DELEGATE-PROJECT: ask the reviewer.",
			Permission: []PermissionRule{{Permission: "task", Pattern: pj, Action: "allow"}}}, nil)
		require.NoError(t, err)
		require.Len(t, res.Children, 1)
		require.Equal(t, pj, res.Children[0].Agent)
		require.Equal(t, "fake/fake-explore", res.Children[0].Model)
		n := 0
		for _, r := range h.fake.Requests() {
			if r.Rule == "child-project" {
				n++
			}
		}
		require.Equal(t, 1, n, "the child ran once, with the specialist's own prompt")
	})

	t.Run("a write specialist is refused", func(t *testing.T) {
		repo := gitRepo(t)
		res, err := s.RunSession(ctx, SessionRequest{Directory: repo, Agent: AgentWorker, Model: "fake/fake-coder",
			Prompt: "TASK-DELEGATE-WRITE: have a specialist write child.txt."}, nil)
		require.Empty(t, res.Children, "no child session was started")
		for _, r := range h.fake.Requests() {
			require.NotEqual(t, "child-write", r.Rule, "the write specialist never ran")
		}
		require.NoFileExists(t, filepath.Join(repo, "child.txt"))
		require.NoError(t, err, "a denied tool call is an error the worker sees, not the end of the turn")
		var seen []string
		for _, r := range h.fake.Requests() {
			if r.Rule == "worker-delegates-write" && r.Step == 1 {
				seen = r.ToolResults
			}
		}
		require.Len(t, seen, 1)
		require.Contains(t, seen[0], "rule which prevents you from using this specific tool call", "OpenCode refused the task call")
	})
}
