package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

// gate.test_command and gate.lint_command: none by default; a command
// line from a file or the environment is taken as given; one that could
// only judge nothing (whitespace) or cannot be run (a NUL byte) is
// refused naming the key, where it came from and what to give instead.
func TestGateCommands(t *testing.T) {
	tests := []struct {
		name string
		file string            // a repository's .horizon/config.yaml, "" for none
		env  map[string]string // HORIZON_* variables
		want horizon.GateCommands
		errs []string // substrings of the error; nil: loads
	}{
		{name: "none by default"},
		{name: "from the repository's file", file: "gate:\n  test_command: go test ./...\n  lint_command: golangci-lint run --timeout 5m\n",
			want: horizon.GateCommands{Test: "go test ./...", Lint: "golangci-lint run --timeout 5m"}},
		{name: "from the environment", env: map[string]string{"HORIZON_GATE_TEST_COMMAND": "make test", "HORIZON_GATE_LINT_COMMAND": "make lint"},
			want: horizon.GateCommands{Test: "make test", Lint: "make lint"}},
		{name: "a shell line with pipes and quotes", file: "gate:\n  lint_command: 'test -z \"$(gofmt -l .)\" && go vet ./...'\n",
			want: horizon.GateCommands{Lint: `test -z "$(gofmt -l .)" && go vet ./...`}},
		{name: "a test command of only whitespace", env: map[string]string{"HORIZON_GATE_TEST_COMMAND": "   "},
			errs: []string{"HORIZON_GATE_TEST_COMMAND", "gate.test_command", `"   " is only whitespace`, `"go test ./..."`, "leave it empty"}},
		{name: "a lint command of only whitespace in a file", file: "gate:\n  lint_command: \"\\t \"\n",
			errs: []string{".horizon/config.yaml", "gate.lint_command", "is only whitespace", `"golangci-lint run"`}},
		{name: "a NUL byte", file: "gate:\n  test_command: \"go test\\0 ./...\"\n",
			errs: []string{"gate.test_command", "holds a NUL byte"}},
		{name: "both wrong, both named", env: map[string]string{"HORIZON_GATE_TEST_COMMAND": " ", "HORIZON_GATE_LINT_COMMAND": "\t"},
			errs: []string{"gate.test_command", "gate.lint_command"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			repo := ""
			if tt.file != "" {
				repo = t.TempDir()
				require.NoError(t, os.MkdirAll(filepath.Join(repo, ".horizon"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(repo, ".horizon", "config.yaml"), []byte(tt.file), 0o644))
			}
			c, err := Load(Options{UserFile: "-none-", Repo: repo})
			if tt.errs != nil {
				require.Error(t, err)
				for _, w := range tt.errs {
					require.ErrorContains(t, err, w)
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, c.Gate.Commands())
			require.Equal(t, tt.want.Any(), c.Gate.Commands().Any())
		})
	}
	require.Contains(t, Keys(), "gate.test_command")
	require.Contains(t, Keys(), "gate.lint_command")
}
