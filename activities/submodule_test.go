package activities

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/internal/agent"
)

// withSubmodule adds a submodule at lib to the harness's repository, as
// `git submodule add <local path> lib` does, and a gate that needs it.
func withSubmodule(t *testing.T, h *gitHarness) (libSrc string) {
	t.Helper()
	libSrc = t.TempDir()
	h.git(libSrc, "init", "-q", "-b", "main")
	h.write(libSrc, "VERSION", "lib 1\n")
	h.git(libSrc, "add", ".")
	h.git(libSrc, "commit", "-q", "-m", "lib")
	h.git(h.repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", libSrc, "lib")
	h.write(h.repo, ".horizon/verify.sh", "#!/bin/sh\ntest -f lib/VERSION || { echo 'submodule lib not checked out'; exit 1; }\n")
	require.NoError(t, os.Chmod(filepath.Join(h.repo, ".horizon/verify.sh"), 0o755))
	h.git(h.repo, "add", ".")
	h.git(h.repo, "commit", "-q", "-m", "add lib")
	h.base = h.git(h.repo, "rev-parse", "HEAD")
	return libSrc
}

func TestLaneHasTheRepositorysSubmodules(t *testing.T) {
	h := newGitHarness(t)
	libSrc := withSubmodule(t, h)
	// No network: the lane must not need the submodule's own URL.
	require.NoError(t, os.RemoveAll(libSrc))
	config, err := os.ReadFile(filepath.Join(h.repo, ".git", "config"))
	require.NoError(t, err)

	lane := h.prepareLane(h.laneInput("f1", false))
	b, err := os.ReadFile(filepath.Join(lane.Path, "lib", "VERSION"))
	require.NoError(t, err, "the lane has the submodule checked out")
	require.Equal(t, "lib 1\n", string(b))
	require.Equal(t, h.git(h.repo, "rev-parse", "HEAD:lib"), h.git(filepath.Join(lane.Path, "lib"), "rev-parse", "HEAD"), "at the recorded commit")
	require.Empty(t, h.git(lane.Path, "status", "--porcelain"), "nothing in the lane differs from its commit")
	after, err := os.ReadFile(filepath.Join(h.repo, ".git", "config"))
	require.NoError(t, err)
	require.Equal(t, string(config), string(after), "the user's config is not written")

	// The gate that needs the submodule passes in the lane.
	v, err := h.env.ExecuteActivity(h.a.RunGate, GateInput{RunID: testRun, Feature: "f1", Attempt: 0, Repo: h.repo, Lane: lane.Path, BaseCommit: lane.Base})
	require.NoError(t, err)
	var run struct{ Verdict, Tail string }
	require.NoError(t, v.Get(&run))
	require.Equal(t, "pass", run.Verdict, run.Tail)

	// A retried lane keeps what was done inside the submodule.
	h.write(filepath.Join(lane.Path, "lib"), "VERSION", "lib 2\n")
	again := h.prepareLane(h.laneInput("f1", false))
	b, err = os.ReadFile(filepath.Join(again.Path, "lib", "VERSION"))
	require.NoError(t, err)
	require.Equal(t, "lib 2\n", string(b))

	// The integration worktree has it too.
	integ, err := h.prepareIntegration()
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(integ.Path, "lib", "VERSION"))
}

// When the repository has no copy of a submodule (never initialised), or
// its copy lacks the recorded commit, preflight and the lane say so and
// what to do, without retrying.
func TestLaneSubmoduleMissing(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(t *testing.T, h *gitHarness)
		reason string
	}{
		{"never initialised", func(t *testing.T, h *gitHarness) {
			require.NoError(t, os.RemoveAll(filepath.Join(h.repo, ".git", "modules", "lib")))
			require.NoError(t, os.RemoveAll(filepath.Join(h.repo, "lib")))
		}, "the repository has no copy of it"},
		{"recorded commit not in the copy", func(t *testing.T, h *gitHarness) {
			// Record a submodule commit the copy never had.
			h.git(h.repo, "update-index", "--cacheinfo", "160000,1111111111111111111111111111111111111111,lib")
			h.git(h.repo, "commit", "-q", "-m", "bump lib to a commit nobody has")
			h.base = h.git(h.repo, "rev-parse", "HEAD")
		}, "does not have commit 111111111111"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newGitHarness(t)
			withSubmodule(t, h)
			tt.break_(t, h)

			err := CheckSubmodules(context.Background(), h.repo, h.base)
			require.ErrorContains(t, err, "submodule lib (path lib")
			require.ErrorContains(t, err, tt.reason)
			require.ErrorContains(t, err, "run `git submodule update --init -- lib` in "+h.repo)

			h.a.Sessions = anyModel{}
			_, err = h.env.ExecuteActivity(h.a.Preflight, PreflightInput{RunID: testRun, Repo: h.repo, BaseCommit: h.base, Model: "local/coder"})
			require.ErrorContains(t, err, "preflight: submodule lib (path lib")
			require.ErrorContains(t, err, tt.reason)

			_, err = h.env.ExecuteActivity(h.a.PrepareLane, h.laneInput("f1", false))
			var app *temporal.ApplicationError
			require.ErrorAs(t, err, &app)
			require.Equal(t, ErrTypeBadInput, app.Type())
			require.True(t, app.NonRetryable())
			require.ErrorContains(t, err, tt.reason)
		})
	}
}

// anyModel is a Sessions that knows every model and runs nothing.
type anyModel struct{}

func (anyModel) RunSession(context.Context, agent.SessionRequest, func(agent.Progress)) (agent.SessionResult, error) {
	return agent.SessionResult{}, errors.New("no sessions in this test")
}
func (anyModel) ValidateModel(context.Context, string, string) error { return nil }
func (anyModel) Models(context.Context, string) ([]string, error)    { return nil, nil }

// A repository without submodules has nothing to check or set up.
func TestNoSubmodules(t *testing.T) {
	h := newGitHarness(t)
	subs, err := submodulesAt(context.Background(), h.repo, h.base)
	require.NoError(t, err)
	require.Empty(t, subs)
	require.NoError(t, CheckSubmodules(context.Background(), h.repo, h.base))
}
