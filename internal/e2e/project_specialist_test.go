package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
	"github.com/horizon/horizon/internal/specialist"
)

const (
	pjBody   = "PJ-REVIEWER-BODY: you review shell scripts of this repository."
	pjAnswer = "PJ-REVIEW: add.sh subtracts where it should add."
)

// projectSpecialistScript: the worker of a PJ-GOAL run, briefed with the
// repository's specialists, hands a review to the repository's reviewer
// (its agent named for the repository), then fixes add.sh; the child
// answers only with the reviewer's own prompt as its system prompt; the
// auditor accepts. A task of the reviewer answers the same way.
func projectSpecialistScript(agentName string) *fakemodel.Script {
	fix := "#!/bin/sh\n# add.sh A B prints the sum of two integers.\necho $(( $1 + $2 ))\n"
	return &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "pj-worker", When: []string{"PJ-GOAL", "# Task (attempt 1 of", "This repository's specialists", agentName}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "task", Args: map[string]any{"description": "review add.sh", "prompt": "CHILD-REVIEW: what is wrong with add.sh?", "subagent_type": agentName}}}},
			{ToolCalls: []fakemodel.ToolCall{{Name: "write", Args: map[string]any{"filePath": "{{workdir}}/add.sh", "content": fix}}}},
			{Text: "```horizon-report\n{\"status\": \"satisfied\", \"summary\": \"the reviewer found the operator; fixed it\"}\n```"},
		}},
		{Name: "pj-child", When: []string{pjBody, "CHILD-REVIEW"}, Unless: []string{"PJ-GOAL"}, Replies: []fakemodel.Reply{{Text: pjAnswer}}},
		{Name: "pj-auditor", When: []string{"# Audit (attempt 1)"}, Replies: []fakemodel.Reply{
			{Text: "```horizon-audit\n{\"verdict\": \"accept\", \"findings\": []}\n```"},
		}},
	}}
}

// A repository's own specialist runs only when the person trusts the
// repository. Untrusted, `horizon task run` refuses it, naming
// specialists.trust_project, `specialist list` says it does not run, and
// the repository's own config file cannot vouch for it. Trusted
// (HORIZON_SPECIALISTS_TRUST_PROJECT=true), a run's worker is briefed
// with it and delegates to it through OpenCode's task tool: the child
// session runs with the specialist's own prompt; and it runs as a task,
// in a lane of its own that leaves no branch.
func TestProjectSpecialistTrusted(t *testing.T) {
	needsE2E(t)
	repo, head := fixture(t)
	root := git(t, repo, "rev-parse", "--show-toplevel")
	agentName := specialist.ProjectAgentName(root, "reviewer")
	w := newWorld(t, projectSpecialistScript(agentName))
	dir := filepath.Join(repo, ".horizon", "specialists")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "reviewer.md"), []byte("---\nname: reviewer\ndescription: reviews shell scripts\ntools: [read-only]\n---\n"+pjBody+"\n"), 0o644))
	git(t, repo, "add", ".horizon/specialists/reviewer.md")
	git(t, repo, "commit", "-qm", "the repository's reviewer")
	tip := git(t, repo, "rev-parse", "HEAD")
	require.NotEqual(t, head, tip)

	// Untrusted: refused before anything starts, and said so.
	ctx := context.Background()
	out, code := w.run(ctx, "task", "run", "reviewer", "--repo", repo, "CHILD-REVIEW: look")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "specialists.trust_project")
	require.Contains(t, out, "HORIZON_SPECIALISTS_TRUST_PROJECT=true")
	out, code = w.stdout("specialist", "list", "--repo", repo)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "reviewer: project specialists, which run only in a repository you trust")
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".horizon", "config.yaml"), []byte("specialists:\n  trust_project: true\n"), 0o644))
	out, code = w.run(ctx, "task", "run", "reviewer", "--repo", repo, "CHILD-REVIEW: look")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "a repository cannot vouch for itself")
	require.NoError(t, os.Remove(filepath.Join(repo, ".horizon", "config.yaml")))

	// Trusted by the person: the worker delegates to it.
	w.env = append(w.env, "HORIZON_SPECIALISTS_TRUST_PROJECT=true")
	out, code = w.run(ctx, "start", "--single", "--repo", repo, "--model", demo.Model, "PJ-GOAL: "+goal)
	require.Equal(t, 0, code, out)
	id := runIDRe.FindString(out)
	require.NotEmpty(t, id, out)
	s := w.status(id)
	require.Equal(t, horizon.StatusCompleted, s.Status, out)
	var child, worker int
	for _, r := range w.model.Requests() {
		switch r.Rule {
		case "pj-child":
			child++
			require.Equal(t, strings.TrimPrefix(demo.Model, "fake/"), r.Model, "the child runs on the specialist's model")
		case "pj-worker":
			worker++
		}
	}
	require.Equal(t, 1, child, "the repository's reviewer ran once, with its own prompt")
	require.Equal(t, 3, worker)

	// And as a task: its own lane, its agent, no branch left.
	w.env = append(w.env, "HORIZON_MODELS_DEFAULT="+demo.Model)
	out, code = w.stdout("task", "run", "reviewer", "--repo", repo, "--background", "CHILD-REVIEW: once more")
	require.Equal(t, 0, code, out)
	taskID := strings.TrimSpace(out)
	out, code = w.stdout("task", "output", taskID, "--follow")
	require.Equal(t, 0, code, out)
	m := w.task(taskID)
	require.Equal(t, "completed", m.Status, out)
	require.Equal(t, agentName, m.Agent)
	require.NotEqual(t, repo, m.Dir, "a project specialist works in a lane of its own")
	require.Empty(t, m.Branch)
	out, code = w.stdout("task", "output", m.ID)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, pjAnswer)
	require.Empty(t, git(t, repo, "branch", "--list", "horizon/task-*"))
	require.Equal(t, tip, git(t, repo, "rev-parse", "main"), "the user's branch is untouched")
}
