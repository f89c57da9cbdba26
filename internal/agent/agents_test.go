package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAgentFilesGolden pins the agent files (go test -update rewrites
// testdata/agents/).
func TestAgentFilesGolden(t *testing.T) {
	for _, name := range AgentNames() {
		t.Run(name, func(t *testing.T) {
			got, err := AgentFile(name)
			require.NoError(t, err)
			golden := filepath.Join("testdata", "agents", name+".md")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, got, 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test -run TestAgentFilesGolden -update")
			require.Equal(t, string(want), string(got))
		})
	}
	_, err := AgentFile("nope")
	require.ErrorContains(t, err, "horizon-worker")
}

// TestAgentPromptsShowAValidBlock: the example each prompt shows parses with
// the parser its answer goes through, so a model that copies the shape is
// understood.
func TestAgentPromptsShowAValidBlock(t *testing.T) {
	for name, parse := range map[string]func(string) error{
		AgentWorker:  func(s string) error { _, _, err := ParseReport(s); return err },
		AgentAuditor: func(s string) error { _, _, err := ParseAudit(s); return err },
		AgentLead:    func(s string) error { _, _, err := ParsePlan(s); return err },
	} {
		b, err := AgentFile(name)
		require.NoError(t, err)
		text := string(b)
		require.True(t, strings.HasPrefix(text, "---\ndescription: \""), "description is quoted YAML")
		require.Contains(t, text, "\nmode: primary\n", "primary agents can be selected for a session")
		require.NoError(t, parse(text), name)
		require.NotContains(t, text, "'''")
	}
}

func TestAgentPermissions(t *testing.T) {
	files := map[string]string{}
	for _, n := range AgentNames() {
		b, err := AgentFile(n)
		require.NoError(t, err)
		files[n] = string(b)
	}
	for _, n := range []string{AgentAuditor, AgentLead, AgentConsultant} {
		for _, line := range []string{`  "*": deny`, "  edit: deny", "  bash: deny", "  task: deny", "  webfetch: deny", "  question: deny", "  todowrite: deny", "  grep: allow"} {
			require.Contains(t, files[n], line+"\n", n)
		}
	}
	for _, line := range []string{`  "*": allow`, "  edit: allow", "  bash: allow", "  webfetch: deny", "  task: deny", "  question: deny", "  doom_loop: deny", "  external_directory: deny"} {
		require.Contains(t, files[AgentWorker], line+"\n")
	}
	for _, line := range []string{`  "*": deny`, "  webfetch: allow", "  websearch: deny", "  edit: deny", "  bash: deny", "  task: deny", "  question: deny", "  todowrite: deny", "  grep: allow", "  list: allow"} {
		require.Contains(t, files[AgentResearcher], line+"\n", "the researcher reads the lane and the web, nothing else")
	}
	require.Contains(t, files[AgentResearcher], fmt.Sprintf("\nsteps: %d\n", ResearcherSteps), "a fetch that keeps failing cannot loop for ever")
	require.True(t, ReadOnly(AgentResearcher))
	require.Contains(t, files[AgentConsultant], "\nsteps: 4\n", "the consultant checks a claim, it does not explore")
	require.NotContains(t, files[AgentWorker], "\nsteps:", "the worker's rounds are OpenCode's default")
}

func TestWriteAgentFilesIdempotent(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteAgentFiles(dir))
	path := filepath.Join(dir, "agent", AgentAuditor+".md")
	st1, err := os.Stat(path)
	require.NoError(t, err)
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(path, old, old))

	require.NoError(t, WriteAgentFiles(dir))
	st2, err := os.Stat(path)
	require.NoError(t, err)
	require.True(t, os.SameFile(st1, st2), "unchanged content is not rewritten")
	require.WithinDuration(t, old, st2.ModTime(), time.Second)

	require.NoError(t, os.WriteFile(path, []byte("tampered"), 0o644))
	require.NoError(t, WriteAgentFiles(dir))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	want, _ := AgentFile(AgentAuditor)
	require.Equal(t, string(want), string(got))

	ents, err := os.ReadDir(filepath.Join(dir, "agent"))
	require.NoError(t, err)
	require.Len(t, ents, len(AgentNames()), "no temporary files left behind")
}

func TestSeedConfigDeps(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, SeedConfigDeps(dir))
	require.DirExists(t, filepath.Join(dir, "node_modules"))
	require.FileExists(t, filepath.Join(dir, "package-lock.json"))
	// An existing package.json (a real install) is left alone.
	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "package.json"), []byte(`{"dependencies":{"x":"1"}}`), 0o644))
	require.NoError(t, SeedConfigDeps(other))
	require.NoFileExists(t, filepath.Join(other, "package-lock.json"))
}

func TestAgentInfoAction(t *testing.T) {
	a := AgentInfo{Permission: []PermissionRule{
		{"*", "*", "allow"},
		{"read", "*.env", "ask"},
		{"read", "*.env.example", "allow"},
		{"edit", "*", "deny"},
	}}
	require.Equal(t, "deny", a.Action("edit", "src/a.go"))
	require.Equal(t, "allow", a.Action("bash", "ls"))
	require.Equal(t, "ask", a.Action("read", "config/.env"))
	require.Equal(t, "allow", a.Action("read", "config/.env.example"))
	require.Equal(t, "ask", AgentInfo{}.Action("edit", "x"))
}

// advisor.tools, advisor.max_tool_steps and advisor.system_prompt shape
// the advisor's agent file: only the tools given are allowed (never one
// that edits, runs or fetches), OpenCode's steps are the tool rounds plus
// the answer, and the person's instructions follow the protocol.
func TestAdvisorAgentSettings(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteAgentFilesWith(dir, Subagents{Advisor: AdvisorAgent{
		Tools: []string{"read", "list"}, ToolSteps: 2, Set: true, Extra: "Look at the tests first.",
	}}))
	b, err := os.ReadFile(filepath.Join(dir, "agent", AgentAdvisor+".md"))
	require.NoError(t, err)
	f := string(b)
	require.Contains(t, f, "steps: 3\n")
	require.Contains(t, f, "  list: allow\n")
	require.Contains(t, f, "  grep: deny\n")
	require.Contains(t, f, "  glob: deny\n")
	require.Contains(t, f, "  read:\n    \"*\": allow\n")
	for _, k := range []string{"edit", "bash", "webfetch", "task"} {
		require.Contains(t, f, "  "+k+": deny\n")
	}
	require.Contains(t, f, "## Your reviewer's instructions")
	require.Less(t, strings.Index(f, "horizon-advice"), strings.Index(f, "Look at the tests first."), "the protocol comes first")

	// The default file is unchanged by a zero AdvisorAgent.
	def := t.TempDir()
	require.NoError(t, WriteAgentFiles(def))
	want, err := AgentFile(AgentAdvisor)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(def, "agent", AgentAdvisor+".md"))
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}
