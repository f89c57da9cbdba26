package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteAgentFilesWith(t *testing.T) {
	plain, with := t.TempDir(), t.TempDir()
	require.NoError(t, WriteAgentFiles(plain))
	require.NoError(t, WriteAgentFilesWith(with, Subagents{}))
	for _, n := range AgentNames() {
		a, _ := os.ReadFile(filepath.Join(plain, "agent", n+".md"))
		b, _ := os.ReadFile(filepath.Join(with, "agent", n+".md"))
		require.Equal(t, string(a), string(b), "no subagents: the same files as WriteAgentFiles")
	}

	sub := Subagents{
		Files:       map[string][]byte{"sp-a": []byte("A"), "sp-b": []byte("B")},
		Prefix:      "sp-",
		Delegates:   []string{"sp-b", "sp-a"},
		WorkerBrief: "\nDELEGATE-BRIEF\n",
	}
	require.NoError(t, WriteAgentFilesWith(with, sub))
	w, err := os.ReadFile(filepath.Join(with, "agent", AgentWorker+".md"))
	require.NoError(t, err)
	require.Contains(t, string(w), "  task:\n    \"*\": deny\n    sp-a: allow\n    sp-b: allow\n", "a last-match allowlist, sorted")
	require.NotContains(t, string(w), "  task: deny\n")
	require.Contains(t, string(w), "DELEGATE-BRIEF")
	au, _ := os.ReadFile(filepath.Join(with, "agent", AgentAuditor+".md"))
	require.Contains(t, string(au), "  task: deny\n", "only the worker may delegate")
	require.FileExists(t, filepath.Join(with, "agent", "sp-a.md"))

	// A specialist that went away (or became unavailable) is removed; other
	// agent files are left alone.
	require.NoError(t, os.WriteFile(filepath.Join(with, "agent", "mine.md"), []byte("x"), 0o644))
	require.NoError(t, WriteAgentFilesWith(with, Subagents{Files: map[string][]byte{"sp-a": []byte("A")}, Prefix: "sp-"}))
	require.NoFileExists(t, filepath.Join(with, "agent", "sp-b.md"))
	require.FileExists(t, filepath.Join(with, "agent", "mine.md"))
	w, _ = os.ReadFile(filepath.Join(with, "agent", AgentWorker+".md"))
	require.Contains(t, string(w), "  task: deny\n", "no delegates: no delegation")

	require.ErrorContains(t, WriteAgentFilesWith(with, Subagents{Files: map[string][]byte{"x": nil}}), "need a prefix")
	require.ErrorContains(t, WriteAgentFilesWith(with, Subagents{Files: map[string][]byte{AgentWorker: nil}, Prefix: "horizon-"}), "not be one of horizon's agents")
	require.ErrorContains(t, WriteAgentFilesWith(with, Subagents{Prefix: "sp-", Delegates: []string{"sp-z"}}), `delegate "sp-z" has no agent file`)
}
