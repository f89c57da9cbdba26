package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/workflows"
)

// gc removes the lanes and lane branches of ended runs per
// run.keep_failed_lanes, and of runs the engine forgot; an open run's
// lanes and every integration branch stay. --dry-run removes nothing.
func TestGC(t *testing.T) {
	home := t.TempDir()
	repo := gitRepo(t)
	now := time.Now()
	runs := []struct {
		id       string
		status   enums.WorkflowExecutionStatus // 0: not listed
		closedAt time.Time
		gone     bool // removed by gc
		action   string
	}{
		{"run-done", enums.WORKFLOW_EXECUTION_STATUS_COMPLETED, now.Add(-time.Minute), true, "removed"},
		{"run-failed-old", enums.WORKFLOW_EXECUTION_STATUS_FAILED, now.Add(-100 * time.Hour), true, "removed"},
		{"run-failed-new", enums.WORKFLOW_EXECUTION_STATUS_FAILED, now.Add(-time.Hour), false, "kept"},
		{"run-open", enums.WORKFLOW_EXECUTION_STATUS_RUNNING, time.Time{}, false, "skipped"},
		{"run-forgotten", 0, time.Time{}, true, "removed"},
	}
	var listed []*workflowpb.WorkflowExecutionInfo
	for _, r := range runs {
		sh(t, repo, "git", "branch", horizon.IntegrationBranch(r.id))
		for _, f := range []string{"f1", "f2"} {
			sh(t, repo, "git", "worktree", "add", "-q", "-b", horizon.LaneBranch(r.id, f), filepath.Join(home, "lanes", r.id, f))
		}
		if r.status == 0 {
			continue
		}
		ex := &workflowpb.WorkflowExecutionInfo{Execution: &commonpb.WorkflowExecution{WorkflowId: r.id}, Status: r.status, StartTime: timestamppb.New(now.Add(-200 * time.Hour))}
		if !r.closedAt.IsZero() {
			ex.CloseTime = timestamppb.New(r.closedAt)
		}
		listed = append(listed, ex)
	}
	c := &mocks.Client{}
	c.On("ListWorkflow", mock.Anything, mock.MatchedBy(func(r *workflowservice.ListWorkflowExecutionsRequest) bool {
		return strings.Contains(r.Query, workflows.RunWorkflowName)
	})).Return(&workflowservice.ListWorkflowExecutionsResponse{Executions: listed}, nil)
	c.On("ListWorkflow", mock.Anything, mock.Anything).Return(&workflowservice.ListWorkflowExecutionsResponse{}, nil)
	c.On("DescribeWorkflowExecution", mock.Anything, "run-forgotten", "").Return(nil, serviceerror.NewNotFound("no such workflow"))
	c.On("Close").Return()

	gc := func(dry bool) []core.GCEntry {
		var out bytes.Buffer
		cfg := &config.Config{Home: home}
		cfg.Run.KeepFailedLanes = 72 * time.Hour
		a := &app{cfg: cfg, out: &out, errOut: &out, connect: func(context.Context, bool) (client.Client, error) { return c, nil }}
		require.NoError(t, gcRun(context.Background(), &gcOptions{app: a, dryRun: dry, json: true, now: time.Now}))
		var entries []core.GCEntry
		require.NoError(t, json.Unmarshal(out.Bytes(), &entries), out.String())
		return entries
	}

	dry := gc(true)
	require.Len(t, dry, len(runs))
	for _, r := range runs {
		require.DirExists(t, filepath.Join(home, "lanes", r.id, "f1"), "dry run removed %s", r.id)
		require.NotEmpty(t, sh(t, repo, "git", "branch", "--list", horizon.LaneBranch(r.id, "f1")))
	}

	entries := gc(false)
	byID := map[string]core.GCEntry{}
	for _, e := range entries {
		byID[e.RunID] = e
	}
	for _, r := range runs {
		e := byID[r.id]
		require.Equal(t, r.action, e.Action, "%s: %+v", r.id, e)
		wasDry := "would_remove"
		if !r.gone {
			wasDry = r.action
		}
		for _, d := range dry {
			if d.RunID == r.id {
				require.Equal(t, wasDry, d.Action, r.id)
			}
		}
		_, err := os.Stat(filepath.Join(home, "lanes", r.id))
		branches := sh(t, repo, "git", "branch", "--list", horizon.LaneBranch(r.id, "*"))
		if r.gone {
			require.True(t, os.IsNotExist(err), "%s: lanes left", r.id)
			require.Empty(t, branches, r.id)
			require.ElementsMatch(t, []string{horizon.LaneBranch(r.id, "f1"), horizon.LaneBranch(r.id, "f2")}, e.Branches)
		} else {
			require.NoError(t, err, r.id)
			require.Contains(t, branches, horizon.LaneBranch(r.id, "f2"))
		}
		require.NotEmpty(t, sh(t, repo, "git", "branch", "--list", horizon.IntegrationBranch(r.id)), "%s: the result stays", r.id)
	}

	// Again: only what is kept or open is left to report.
	again := gc(false)
	require.Len(t, again, 2)
}

// gitRepo is a repository with one commit.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sh(t, dir, "git", "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("# app\n"), 0o644))
	sh(t, dir, "git", "add", ".")
	sh(t, dir, "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
	return dir
}

func sh(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v: %s", name, args, b)
	return strings.TrimSpace(string(b))
}
