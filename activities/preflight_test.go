package activities

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/ladder"
)

// gate.test_command and gate.lint_command are parts of the run's gate:
// the script still runs first, a test command stands in for a detected
// one and is a gate of its own where nothing is found, and a lint command
// alone is no gate.
func TestGateInCommitCommands(t *testing.T) {
	script := func(h *gitHarness) {
		h.write(h.repo, ".horizon/verify.sh", "#!/bin/sh\nexit 0\n")
		require.NoError(t, os.Chmod(filepath.Join(h.repo, ".horizon/verify.sh"), 0o755))
	}
	gomod := func(h *gitHarness) { h.write(h.repo, "go.mod", "module x\n") }
	tests := []struct {
		name  string
		setup func(h *gitHarness)
		cmds  horizon.GateCommands
		want  string // GateSummary, "" for an error
		rec   horizon.GateRecord
	}{
		{"test command without a gate", func(*gitHarness) {}, horizon.GateCommands{Test: "go test ./..."},
			"test `go test ./...`", horizon.GateRecord{Source: "gate.test_command", TestCommand: "go test ./..."}},
		{"test command for the detected one", gomod, horizon.GateCommands{Test: "go test -race ./...", Lint: "go vet ./..."},
			"test `go test -race ./...`, then lint `go vet ./...`",
			horizon.GateRecord{Source: "gate.test_command", TestCommand: "go test -race ./...", LintCommand: "go vet ./..."}},
		{"lint beside the detected command", gomod, horizon.GateCommands{Lint: "go vet ./..."},
			"detected: go test ./..., then lint `go vet ./...`",
			horizon.GateRecord{Source: "detected: go test ./...", Command: []string{"go", "test", "./..."}, LintCommand: "go vet ./..."}},
		{"the script runs first", script, horizon.GateCommands{Test: "make test", Lint: "make lint"},
			".horizon/verify.sh, then test `make test`, then lint `make lint`",
			horizon.GateRecord{Source: ".horizon/verify.sh", Script: ".horizon/verify.sh", Mode: "100755", TestCommand: "make test", LintCommand: "make lint"}},
		{"lint alone is no gate", func(*gitHarness) {}, horizon.GateCommands{Lint: "golangci-lint run"}, "", horizon.GateRecord{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newGitHarness(t)
			tt.setup(h)
			h.git(h.repo, "add", "-A")
			h.git(h.repo, "commit", "-q", "--allow-empty", "-m", "gate")
			head := h.git(h.repo, "rev-parse", "HEAD")
			g, err := GateInCommit(context.Background(), h.repo, head, tt.cmds)
			rec, recErr := DecideGate(context.Background(), h.repo, head, tt.cmds)
			if tt.want == "" {
				require.ErrorIs(t, err, gate.ErrNoGate)
				require.ErrorContains(t, err, "gate.test_command")
				require.ErrorIs(t, recErr, gate.ErrNoGate)
				return
			}
			require.NoError(t, err)
			require.NoError(t, recErr)
			require.Equal(t, tt.want, g)
			require.Equal(t, head, rec.Commit)
			require.True(t, rec.Valid())
			rec.Commit, rec.Hash = "", ""
			require.Equal(t, tt.rec, rec)
		})
	}
}

// The gate is judged as the commit holds it, and a problem names the
// repository's file and what to do.
func TestGateInCommit(t *testing.T) {
	tests := []struct {
		name  string
		setup func(h *gitHarness)
		want  string   // the gate found, "" for an error
		errs  []string // substrings of the error
	}{
		{"executable script", func(h *gitHarness) {
			h.write(h.repo, ".horizon/verify.sh", "#!/bin/sh\nexit 0\n")
			require.NoError(t, os.Chmod(filepath.Join(h.repo, ".horizon/verify.sh"), 0o755))
		}, ".horizon/verify.sh", nil},
		{"no execute bit", func(h *gitHarness) {
			h.write(h.repo, ".horizon/verify.sh", "#!/bin/sh\nexit 0\n")
		}, "", []string{"lacks the execute bit", "chmod +x", "git update-index --chmod=+x .horizon/verify.sh"}},
		{"a directory", func(h *gitHarness) {
			h.write(h.repo, ".horizon/verify.sh/run", "#!/bin/sh\n")
		}, "", []string{"is a directory", "replace it with an executable script"}},
		{"second script path", func(h *gitHarness) {
			h.write(h.repo, ".zecor/verify.sh", "#!/bin/sh\nexit 0\n")
		}, "", []string{".zecor/verify.sh", "lacks the execute bit"}},
		{"detected go test", func(h *gitHarness) {
			h.write(h.repo, "go.mod", "module x\n")
		}, "detected: go test ./...", nil},
		{"no gate", func(*gitHarness) {}, "", []string{"no gate in", ".horizon/verify.sh"}},
		{"only .horizon/roadmap.md and go.mod", func(h *gitHarness) {
			h.write(h.repo, ".horizon/roadmap.md", "- [ ] a\n")
			h.write(h.repo, "go.mod", "module x\n")
		}, "detected: go test ./...", nil},
		{".horizon/specialists/ and go.mod", func(h *gitHarness) {
			h.write(h.repo, ".horizon/specialists/r.md", "---\nname: r\n---\n")
			h.write(h.repo, "go.mod", "module x\n")
		}, "detected: go test ./...", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newGitHarness(t)
			tt.setup(h)
			h.git(h.repo, "add", "-A")
			h.git(h.repo, "commit", "-q", "--allow-empty", "-m", "gate")
			head := h.git(h.repo, "rev-parse", "HEAD")
			g, err := GateInCommit(context.Background(), h.repo, head, horizon.GateCommands{})
			if tt.want != "" {
				require.NoError(t, err)
				require.Equal(t, tt.want, g)
				return
			}
			require.Error(t, err)
			require.True(t, errors.Is(err, gate.ErrNoGate) || errors.Is(err, gate.ErrGateNotRunnable), "%v", err)
			for _, s := range tt.errs {
				require.ErrorContains(t, err, s)
			}
			if tt.name != "no gate" && tt.name != "only .horizon/roadmap.md" {
				require.ErrorContains(t, err, h.repo+string(filepath.Separator), "names the repository's file")
				require.NotContains(t, err.Error(), filepath.Join(h.a.Home, "lanes"))
			}
		})
	}
}

// One resolution decides for the run's preflight and for the CLI.
func TestResolveRoles(t *testing.T) {
	lb, err := ladder.ParseLeaderboard([]byte(`{"revision": 1, "models": [
	  {"name": "big", "routes": ["cloud/big"], "roles": {"build": {"rank": 1}, "analyze": {"rank": 1}}, "capabilities": {"cost": "high"}},
	  {"name": "coder", "routes": ["local/coder"], "roles": {"build": {"rank": 2}}, "capabilities": {"cost": "local"}}
	]}`))
	require.NoError(t, err)
	tests := []struct {
		name      string
		forced    string
		connected []string
		models    map[horizon.Role]string
		paid      map[horizon.Role]bool
		noRole    []string // roles reported without a model
		unknown   bool     // forced model OpenCode does not offer
	}{
		{"leaderboard", "", []string{"cloud/big", "local/coder"}, map[horizon.Role]string{"worker": "cloud/big", "auditor": "cloud/big"}, map[horizon.Role]bool{"worker": true, "auditor": true}, nil, false},
		{"auditor without a model", "", []string{"local/coder"}, nil, nil, []string{"auditor"}, false},
		{"no provider", "", nil, nil, nil, []string{"worker", "auditor"}, false},
		{"forced", "local/coder", []string{"local/coder"}, map[horizon.Role]string{"worker": "local/coder", "auditor": "local/coder"}, map[horizon.Role]bool{"worker": false, "auditor": false}, nil, false},
		{"forced unknown", "cloud/nope", []string{"local/coder"}, nil, nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rm, err := ResolveRoles(lb, tt.forced, tt.connected)
			switch {
			case tt.unknown:
				var um *agent.UnknownModelError
				require.ErrorAs(t, err, &um)
				require.ErrorContains(t, err, tt.forced)
				for _, c := range tt.connected {
					require.ErrorContains(t, err, c, "lists what is available")
				}
			case tt.noRole != nil:
				require.Error(t, err)
				var got []string
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var re *RoleModelError
					require.True(t, errors.As(e, &re))
					var nm *ladder.NoModelError
					require.ErrorAs(t, e, &nm)
					got = append(got, string(re.Role))
				}
				require.Equal(t, tt.noRole, got)
				require.ErrorContains(t, err, "--model PROVIDER/MODEL")
			default:
				require.NoError(t, err)
				require.Equal(t, tt.models, rm.Models)
				require.Equal(t, tt.paid, rm.Paid)
				for _, r := range Roles {
					require.NotEmpty(t, rm.Why[r])
				}
			}
		})
	}
}

// Preflight fails, non-retryably, on what ResolveRoles refuses.
func TestPreflightModels(t *testing.T) {
	h := newGitHarness(t)
	h.write(h.repo, ".horizon/verify.sh", "#!/bin/sh\nexit 0\n")
	require.NoError(t, os.Chmod(filepath.Join(h.repo, ".horizon/verify.sh"), 0o755))
	h.git(h.repo, "add", "-A")
	h.git(h.repo, "commit", "-q", "-m", "gate")
	head := h.git(h.repo, "rev-parse", "HEAD")

	h.a.Sessions = offers{"fake/fake-coder"}
	_, err := h.env.ExecuteActivity(h.a.Preflight, PreflightInput{RunID: testRun, Repo: h.repo, BaseCommit: head, Model: "fake/other"})
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	require.Equal(t, ErrTypeUnknownModel, app.Type())
	require.True(t, app.NonRetryable())
	require.ErrorContains(t, err, "fake/fake-coder")

	_, err = h.env.ExecuteActivity(h.a.Preflight, PreflightInput{RunID: testRun, Repo: h.repo, BaseCommit: head})
	require.ErrorAs(t, err, &app)
	require.Equal(t, ErrTypeUnknownModel, app.Type())
	require.ErrorContains(t, err, "role worker")

	v, err := h.env.ExecuteActivity(h.a.Preflight, PreflightInput{RunID: testRun, Repo: h.repo, BaseCommit: head, Model: "fake/fake-coder"})
	require.NoError(t, err)
	var out PreflightOutput
	require.NoError(t, v.Get(&out))
	require.Equal(t, "fake/fake-coder", out.Models["auditor"])
	require.Equal(t, gate.ScriptPaths[0], out.Gate)
}

// Preflight refuses a gate the lanes could not run as bad input.
func TestPreflightGate(t *testing.T) {
	h := newGitHarness(t)
	h.write(h.repo, ".horizon/verify.sh", "#!/bin/sh\nexit 0\n")
	h.git(h.repo, "add", "-A")
	h.git(h.repo, "commit", "-q", "-m", "gate without its execute bit")
	h.a.Sessions = offers{"fake/fake-coder"}
	_, err := h.env.ExecuteActivity(h.a.Preflight, PreflightInput{RunID: testRun, Repo: h.repo, BaseCommit: h.git(h.repo, "rev-parse", "HEAD"), Model: "fake/fake-coder"})
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	require.Equal(t, ErrTypeBadInput, app.Type())
	require.ErrorContains(t, err, filepath.Join(h.repo, ".horizon", "verify.sh"))
}

// offers is a Sessions whose OpenCode offers the listed models.
type offers []string

func (offers) RunSession(context.Context, agent.SessionRequest, func(agent.Progress)) (agent.SessionResult, error) {
	return agent.SessionResult{}, errors.New("no sessions in this test")
}
func (o offers) ValidateModel(context.Context, string, string) error { return nil }
func (o offers) Models(context.Context, string) ([]string, error)    { return o, nil }
