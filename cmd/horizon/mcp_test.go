package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// horizon mcp binds --dir, reads the advisor.consult keys by name with
// their environment overrides, and refuses to run outside horizon's
// OpenCode (exit 2 naming the variable).
func TestMCPCommand(t *testing.T) {
	t.Setenv("HORIZON_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HORIZON_ADVISOR_CONSULT_MAX_TOKENS", "500")
	t.Setenv("HORIZON_OPENCODE_URL", "")

	var got *mcpOptions
	a := &app{repoDir: t.TempDir(), errOut: &bytes.Buffer{}}
	cmd := newMCPCmd(a, func(_ context.Context, o *mcpOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--dir", "/lanes/run-1/f1"})
	cmd.PersistentPreRunE = func(c *cobra.Command, _ []string) error { return a.setup(c) }
	require.NoError(t, cmd.Execute())
	require.Equal(t, "/lanes/run-1/f1", got.dir)

	set, err := readConsultSettings(a.cfg)
	require.NoError(t, err)
	require.Equal(t, consultSettings{model: "", contextMessages: 12, maxTokens: 500}, set)

	err = mcpRun(context.Background(), got)
	require.ErrorContains(t, err, "HORIZON_OPENCODE_URL is not set")
	require.Equal(t, ExitUsage, exitCode(err))
}
