package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/internal/agent"
)

func TestTaskFlags(t *testing.T) {
	testFlags(t, newTaskRunCmd, []flagCase[taskRunOptions]{
		{name: "follows by default", args: []string{"explorer", "where", "is", "the", "greeting?"},
			want: taskRunOptions{specialist: "explorer", prompt: "where is the greeting?"}},
		{name: "background", args: []string{"--background", "code-review", "review the last commit"},
			want: taskRunOptions{specialist: "code-review", prompt: "review the last commit", background: true}},
		{name: "short background and json", args: []string{"-b", "--json", "explorer", "  look  "},
			want: taskRunOptions{specialist: "explorer", prompt: "look", background: true, json: true}},
		{name: "no prompt", args: []string{"explorer"}, err: "takes at least 2 arguments"},
		{name: "blank prompt", args: []string{"explorer", "  "}, err: "the prompt is empty"},
		{name: "unknown flag", args: []string{"--detach", "explorer", "x"}, err: "unknown flag: --detach"},
	})
	testFlags(t, newTaskResumeCmd, []flagCase[taskResumeOptions]{
		{name: "follows by default", args: []string{"t1", "and", "the", "tests?"},
			want: taskResumeOptions{id: "t1", prompt: "and the tests?"}},
		{name: "background and json", args: []string{"-b", "--json", "t1", "  more  "},
			want: taskResumeOptions{id: "t1", prompt: "more", background: true, json: true}},
		{name: "long background", args: []string{"t1", "--background", "more"},
			want: taskResumeOptions{id: "t1", prompt: "more", background: true}},
		{name: "no follow-up", args: []string{"t1"}, err: "takes at least 2 arguments"},
		{name: "blank follow-up", args: []string{"t1", " "}, err: "the prompt is empty"},
		{name: "not an ID", args: []string{"../server", "more"}, err: "is not a task ID"},
		{name: "unknown flag", args: []string{"--detach", "t1", "x"}, err: "unknown flag: --detach"},
	})
	testFlags(t, newTaskListCmd, []flagCase[taskListOptions]{
		{name: "text", args: nil, want: taskListOptions{}},
		{name: "json", args: []string{"--json"}, want: taskListOptions{json: true}},
		{name: "no args", args: []string{"x"}, err: "takes no arguments"},
	})
	testFlags(t, newTaskOutputCmd, []flagCase[taskOutputOptions]{
		{name: "once", args: []string{"t1"}, want: taskOutputOptions{id: "t1"}},
		{name: "follow", args: []string{"t1", "--follow", "--json"}, want: taskOutputOptions{id: "t1", follow: true, json: true}},
		{name: "short follow", args: []string{"-f", "t1"}, want: taskOutputOptions{id: "t1", follow: true}},
		{name: "no id", args: nil, err: "1 argument"},
	})
	testFlags(t, newTaskStopCmd, []flagCase[taskStopOptions]{
		{name: "id", args: []string{"t1"}, want: taskStopOptions{id: "t1"}},
		{name: "two ids", args: []string{"t1", "t2"}, err: "1 argument"},
	})
}

// writeTask puts a task's two files in $HORIZON_HOME, as its activities
// write them.
func writeTask(t *testing.T, m activities.TaskMeta, evs ...activities.TaskEvent) {
	t.Helper()
	home := os.Getenv("HORIZON_HOME")
	require.NoError(t, activities.WriteTaskMeta(home, m))
	var b strings.Builder
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		require.NoError(t, err)
		b.Write(append(line, '\n'))
	}
	require.NoError(t, os.WriteFile(activities.TaskOutputPath(home, m.ID), []byte(b.String()), 0o600))
}

// `task list --json` and `task output --json` are read by scripts: every
// key they promise is there, in its type.
func TestTaskJSONShapes(t *testing.T) {
	t.Setenv("HORIZON_HOME", t.TempDir())
	code, out, errOut := runCLI(t, "task", "list", "--json")
	require.Equal(t, ExitOK, code, errOut)
	require.JSONEq(t, `[]`, out, "no tasks is an empty array, not null")
	code, out, _ = runCLI(t, "task", "list")
	require.Equal(t, ExitOK, code)
	require.Contains(t, out, "no tasks")

	created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ended := created.Add(time.Minute)
	writeTask(t, activities.TaskMeta{ID: "20261201-100000-aaaaaa", Status: activities.TaskCompleted, Specialist: "explorer",
		Agent: "horizon-sp-explorer", Model: "fake/m", Session: "ses_1", Resumed: true, Repo: "/repo", Dir: "/repo",
		Prompt: "where?", Cost: 0.25, CreatedAt: created, StartedAt: &created, UpdatedAt: ended, EndedAt: &ended},
		activities.TaskEvent{Time: created, Part: agent.Part{ID: "prt_1", MessageID: "msg_1", Role: "user", Type: "text", Text: "where?"}},
		activities.TaskEvent{Time: created, Part: agent.Part{ID: "prt_2", MessageID: "msg_2", Role: "assistant", Type: "tool", Tool: "read",
			Status: "completed", Input: json.RawMessage(`{"filePath":"/repo/a.go"}`), Output: "package a"}},
		activities.TaskEvent{Time: created, Part: agent.Part{ID: "prt_3", MessageID: "msg_3", Role: "assistant", Type: "text", Text: "In a.go."}},
		activities.TaskEvent{Time: ended, Part: agent.Part{ID: "end", Type: "end", Status: activities.TaskCompleted}},
	)
	later := created.Add(time.Hour)
	writeTask(t, activities.TaskMeta{ID: "20261201-110000-bbbbbb", Status: activities.TaskRunning, Specialist: "worker",
		Repo: "/repo", Branch: "horizon/task-20261201-110000-bbbbbb", Prompt: "fix it", CreatedAt: later, UpdatedAt: later})

	code, out, errOut = runCLI(t, "task", "list", "--json")
	require.Equal(t, ExitOK, code, errOut)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &list), out)
	require.Len(t, list, 2)
	require.Equal(t, "20261201-110000-bbbbbb", list[0]["id"], "newest first")
	done := list[1]
	for k, want := range map[string]any{
		"id": "20261201-100000-aaaaaa", "status": "completed", "specialist": "explorer", "agent": "horizon-sp-explorer",
		"model": "fake/m", "session": "ses_1", "resumed": true, "repo": "/repo", "dir": "/repo", "prompt": "where?", "cost": 0.25,
		"created_at": "2026-12-01T10:00:00Z", "started_at": "2026-12-01T10:00:00Z", "ended_at": "2026-12-01T10:01:00Z",
	} {
		require.Equal(t, want, done[k], k)
	}
	require.Equal(t, "horizon/task-20261201-110000-bbbbbb", list[0]["branch"])
	require.NotContains(t, list[0], "ended_at", "a running task has not ended")

	code, out, errOut = runCLI(t, "task", "output", "20261201-100000-aaaaaa", "--json")
	require.Equal(t, ExitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4)
	var tool map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &tool))
	require.Equal(t, map[string]any{"time": "2026-12-01T10:00:00Z", "id": "prt_2", "message": "msg_2", "role": "assistant", "type": "tool",
		"tool": "read", "status": "completed", "input": map[string]any{"filePath": "/repo/a.go"}, "output": "package a"}, tool)
	require.JSONEq(t, `{"time": "2026-12-01T10:01:00Z", "id": "end", "message": "", "role": "", "type": "end", "status": "completed"}`, lines[3])

	code, out, errOut = runCLI(t, "task", "output", "20261201-100000-aaaaaa")
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, "[prompt] where?\n[tool] read completed {\"filePath\":\"/repo/a.go\"}\n[assistant] In a.go.\n[end] completed \n", out)

	// --follow on an ended task returns at its end event.
	code, out, _ = runCLI(t, "task", "output", "20261201-100000-aaaaaa", "--follow")
	require.Equal(t, ExitOK, code)
	require.True(t, strings.HasSuffix(out, "[end] completed \n"), out)

	code, _, errOut = runCLI(t, "task", "output", "nope")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, `no task "nope"`)
}

// A specialist that does not exist, or a project specialist, is refused
// before the engine is reached (no daemon is started for it).
func TestTaskRunRefusesBadSpecialist(t *testing.T) {
	repo := specialistEnv(t)
	for _, args := range [][]string{{"-C", repo, "commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	code, _, errOut := runCLI(t, "task", "run", "ghost", "--repo", repo, "look")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, `no such specialist "ghost"`)

	writeManifest(t, projectSpecDir(repo), "mine", "---\nname: mine\ndescription: mine\ntools: [read-only]\n---\nLook.\n")
	code, _, errOut = runCLI(t, "task", "run", "mine", "--repo", repo, "look")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "specialist mine is a project specialist")
	require.NoFileExists(t, os.Getenv("HORIZON_HOME")+"/server.pid", "no daemon was started")
}

// A resumed task's output shows each turn: the follow-up's turn event is
// a header line, and each turn its end; `task list` counts the turns.
func TestTaskOutputShowsTurns(t *testing.T) {
	t.Setenv("HORIZON_HOME", t.TempDir())
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	writeTask(t, activities.TaskMeta{ID: "20261201-100000-cccccc", Status: activities.TaskCompleted, Specialist: "explorer",
		Model: "fake/m", Session: "ses_1", Prompt: "where?", Turns: 2, FollowUps: []string{"and why?"}, CreatedAt: at, UpdatedAt: at},
		activities.TaskEvent{Time: at, Part: agent.Part{ID: "prt_1", Role: "user", Type: "text", Text: "where?"}},
		activities.TaskEvent{Time: at, Part: agent.Part{ID: "prt_2", Role: "assistant", Type: "text", Text: "In a.go."}},
		activities.TaskEvent{Time: at, Part: agent.Part{ID: "end", Type: "end", Status: activities.TaskCompleted}},
		activities.TaskEvent{Time: at, Part: agent.Part{ID: "turn-2", Role: "user", Type: "turn", Text: "and\nwhy?"}},
		activities.TaskEvent{Time: at, Part: agent.Part{ID: "prt_3", Role: "user", Type: "text", Text: "and why?"}},
		activities.TaskEvent{Time: at, Part: agent.Part{ID: "prt_4", Role: "assistant", Type: "text", Text: "Because."}},
		activities.TaskEvent{Time: at, Part: agent.Part{ID: "end-2", Type: "end", Status: activities.TaskCompleted}},
	)
	code, out, errOut := runCLI(t, "task", "output", "20261201-100000-cccccc")
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, "[prompt] where?\n[assistant] In a.go.\n[end] completed \n"+
		"── follow-up (turn 2): and why?\n[prompt] and why?\n[assistant] Because.\n[end] completed \n", out)

	code, out, _ = runCLI(t, "task", "output", "20261201-100000-cccccc", "--follow", "--json")
	require.Equal(t, ExitOK, code)
	require.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 7, "--follow goes past the first turn's end")

	code, out, errOut = runCLI(t, "task", "list")
	require.Equal(t, ExitOK, code, errOut)
	require.Regexp(t, `TURNS`, out)
	require.Regexp(t, `20261201-100000-cccccc\s+completed\s+explorer\s+fake/m\s+2\s`, out)
	code, out, _ = runCLI(t, "task", "list", "--json")
	require.Equal(t, ExitOK, code)
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &list), out)
	require.Equal(t, float64(2), list[0]["turns"])
	require.Equal(t, []any{"and why?"}, list[0]["follow_ups"])
}

// A follow-up to a task still running, or to one without a session, is
// refused before the engine is reached (no daemon is started for it).
func TestTaskResumeRefusesBeforeTheEngine(t *testing.T) {
	t.Setenv("HORIZON_HOME", t.TempDir())
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	writeTask(t, activities.TaskMeta{ID: "20261201-100000-dddddd", Status: activities.TaskRunning, Specialist: "explorer", Session: "ses_1", CreatedAt: at})
	writeTask(t, activities.TaskMeta{ID: "20261201-100000-eeeeee", Status: activities.TaskFailed, Specialist: "explorer", CreatedAt: at})
	code, _, errOut := runCLI(t, "task", "resume", "20261201-100000-dddddd", "more")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "still running")
	require.Contains(t, errOut, "horizon task stop")
	code, _, errOut = runCLI(t, "task", "resume", "20261201-100000-eeeeee", "more")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "no session to continue")
	code, _, errOut = runCLI(t, "task", "resume", "nope", "more")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, `no task "nope"`)
	require.NoFileExists(t, os.Getenv("HORIZON_HOME")+"/server.pid", "no daemon was started")
}
