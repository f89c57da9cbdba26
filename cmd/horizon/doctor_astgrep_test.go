package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// doctor checks the ast-grep the daemon's codemod step will run: the
// configured agent.ast_grep_bin, not whichever is first on $PATH.
func TestDoctorUsesConfiguredAstGrep(t *testing.T) {
	repo := gateRepo(t, goodGate)
	t.Setenv("HORIZON_TEMPORAL_ADDRESS", "")
	fakeOpenCode(t, "fake/fake-coder")
	fakeAstGrep := func(dir, version string) string {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		bin := filepath.Join(dir, "ast-grep")
		require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho 'ast-grep "+version+"'\n"), 0o755))
		return bin
	}
	onPath := t.TempDir()
	fakeAstGrep(onPath, "0.0.0-on-path")
	t.Setenv("PATH", onPath+string(os.PathListSeparator)+os.Getenv("PATH"))
	configured := fakeAstGrep(filepath.Join(t.TempDir(), "tools"), "9.9.9-configured")
	missing := filepath.Join(t.TempDir(), "no-such-ast-grep")

	tests := []struct {
		name, bin string
		ok        bool
		want      []string // in the check's detail and fix
	}{
		{"configured", configured, true, []string{configured + " ast-grep 9.9.9-configured"}},
		{"configured but missing", missing, false, []string{"not found", missing, "agent.ast_grep_bin"}},
		{"not configured: found on PATH", "", true, []string{filepath.Join(onPath, "ast-grep") + " ast-grep 0.0.0-on-path"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HORIZON_AGENT_AST_GREP_BIN", tt.bin)
			_, out, errOut := runCLI(t, "doctor", "--repo", repo, "--json")
			var checks []check
			require.NoError(t, json.Unmarshal([]byte(out), &checks), out+errOut)
			var got *check
			for i := range checks {
				if checks[i].Name == "ast-grep" {
					got = &checks[i]
				}
			}
			require.NotNil(t, got, "no ast-grep check in %s", out)
			require.Equal(t, tt.ok, got.OK, "%+v", *got)
			for _, w := range tt.want {
				require.Contains(t, got.Detail+" "+got.Fix, w)
			}
		})
	}
}
