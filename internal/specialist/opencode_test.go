package specialist

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/golden"
	"github.com/horizon/horizon/ladder"
)

// TestAgentFilesGolden pins the built-ins' OpenCode agent files.
func TestAgentFilesGolden(t *testing.T) {
	set, err := Load(Dirs{})
	require.NoError(t, err)
	for _, sp := range set.All() {
		t.Run(sp.Name, func(t *testing.T) {
			golden.Assert(t, filepath.Join("agents", AgentName(sp.Name)+".md"), string(AgentFile(sp, Binding{Model: "p/" + sp.Role, Source: "role"})))
		})
	}
}

func TestMaterialise(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "web.md"), []byte("---\nname: web\ndescription: reads the web\ntools: [read-only, webfetch]\nrole: research\n---\nLook.\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "own.md"), []byte("---\nname: own\ndescription: own model\ntools: [read-only]\nmodel: x/y\nreasoningEffort: high\n---\nLook.\n"), 0o644))
	set, err := Load(Dirs{User: dir})
	require.NoError(t, err)
	lb := ladder.Bundled()
	connected := []string{"openai/gpt-5-mini"} // ranked for explore and research, not analyze or build
	m := Materialise(set, lb, connected, "")
	var agents []string
	for _, d := range m.Delegates {
		agents = append(agents, d.Agent)
	}
	ex, _ := lb.Resolve("explore", connected)
	require.Equal(t, []string{"horizon-sp-explorer", "horizon-sp-own", "horizon-sp-web"}, agents, "read-only and available only")
	require.Equal(t, ex.Route, m.Delegates[0].Model)
	require.Contains(t, m.Unavailable, "code-review", "no cross-role fallback")
	require.Contains(t, m.Unavailable, "worker")
	require.NotContains(t, m.Files, "horizon-sp-code-review", "an unavailable specialist gets no agent file")
	m2 := Materialise(set, lb, []string{"openai/gpt-5-mini", "anthropic/claude-sonnet-4-5"}, "")
	require.Contains(t, m2.Files, "horizon-sp-worker", "write specialists get agent files too")
	for _, d := range m2.Delegates {
		require.NotEqual(t, "horizon-sp-worker", d.Agent, "but are never delegates")
	}
	require.Contains(t, string(m.Files["horizon-sp-web"]), "  webfetch: allow\n")
	own := string(m.Files["horizon-sp-own"])
	require.Contains(t, own, "model: \"x/y\"\n")
	require.Contains(t, own, "reasoningEffort: high\n")
	brief := DelegationBrief(m.Delegates)
	require.Contains(t, brief, "- horizon-sp-explorer: Read-only local code and context discovery.")
	require.NotContains(t, brief, "code-review")
	require.Empty(t, DelegationBrief(nil))
}
