package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The flags bind into the options; the purpose is every argument joined.
func TestSpecialistGenerateFlags(t *testing.T) {
	var got *specialistGenerateOptions
	cmd := newSpecialistGenerateCmd(&app{}, func(_ context.Context, o *specialistGenerateOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--name", "sh-lint", "--yes", "--force", "--json", "review", "shell scripts"})
	require.NoError(t, cmd.Execute())
	require.Equal(t, "review shell scripts", got.purpose)
	require.Equal(t, "sh-lint", got.name)
	require.True(t, got.yes)
	require.True(t, got.force)
	require.True(t, got.json)
	require.NotNil(t, got.in, "the answer is read from stdin")
}

// What generate refuses before the lead is asked (and the engine
// reached): each is bad usage (exit 2) saying what to do.
func TestSpecialistGenerateRefusals(t *testing.T) {
	repo := specialistEnv(t)
	for _, args := range [][]string{{"-C", repo, "commit", "-q", "--allow-empty", "-m", "init"}} {
		c := exec.Command("git", args...)
		c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := c.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	writeManifest(t, projectSpecDir(repo), "sh-lint", "---\nname: sh-lint\ndescription: d\ntools: [read-only]\n---\nLint.\n")
	// Not a terminal: a person cannot be asked.
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	stdin := os.Stdin
	os.Stdin = null
	defer func() { os.Stdin = stdin }()

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no purpose", []string{"  "}, "say what the specialist is for"},
		{"bad name", []string{"--name", "Sh_Lint", "--yes", "review"}, `bad specialist name "Sh_Lint"`},
		{"no yes and no terminal", []string{"review shell scripts"}, "pass --yes"},
		{"a taken name", []string{"--name", "sh-lint", "--yes", "review"}, "sh-lint is a project specialist"},
		{"a built-in name", []string{"--name", "explorer", "--yes", "review"}, "explorer is a builtin specialist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"specialist", "generate", "--repo", repo}, tc.args...)...)
			require.Equal(t, ExitUsage, code, out+errOut)
			require.Contains(t, errOut, tc.want)
			require.NotContains(t, errOut, "engine", "refused before the engine")
		})
	}
}

// Only a y or yes writes; anything else, or no answer, does not.
func TestSpecialistGenerateConfirm(t *testing.T) {
	for in, want := range map[string]bool{"y\n": true, "YES\n": true, " yes ": true, "n\n": false, "\n": false, "": false, "sure\n": false} {
		var q strings.Builder
		ok, err := confirm(&q, strings.NewReader(in), "Write x? [y/N] ")
		require.NoError(t, err)
		require.Equal(t, want, ok, "%q", in)
		require.True(t, strings.HasPrefix(q.String(), "Write x? [y/N] "))
	}
}
