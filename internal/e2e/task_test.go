package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
	"github.com/horizon/horizon/workflows"
)

const (
	taskPrompt = "TASK-CRASH-PROMPT: what does add.sh do?"
	taskAnswer = "TASK-ANSWER: add.sh is meant to print the sum of its two arguments."
)

// taskScript: the explorer reads add.sh (a step that finishes, so its
// events are in the stream before the crash), then its next model call
// hangs until the daemon is killed; the continued session answers.
func taskScript() *fakemodel.Script {
	return &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "task-step", When: []string{"TASK-CRASH-PROMPT"}, Unless: []string{"You were interrupted"}, Times: 1, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "read", Args: map[string]any{"filePath": "{{workdir}}/add.sh"}}}},
			{Hold: "crash", Text: "never sent"},
		}},
		{Name: "task-continue", When: []string{"TASK-CRASH-PROMPT", "You were interrupted"}, Replies: []fakemodel.Reply{
			{Text: taskAnswer},
		}},
	}}
}

// taskEvent is one line of `horizon task output --json`.
type taskEvent struct {
	ID     string `json:"id"`
	Role   string `json:"role"`
	Type   string `json:"type"`
	Text   string `json:"text"`
	Tool   string `json:"tool"`
	Status string `json:"status"`
}

func taskEvents(t *testing.T, out string) []taskEvent {
	var evs []taskEvent
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var ev taskEvent
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		evs = append(evs, ev)
	}
	return evs
}

// taskMeta is `horizon task list --json`'s entry, every key a script reads.
type taskMeta struct {
	ID         string     `json:"id"`
	Status     string     `json:"status"`
	Specialist string     `json:"specialist"`
	Agent      string     `json:"agent"`
	Model      string     `json:"model"`
	Session    string     `json:"session"`
	Resumed    bool       `json:"resumed"`
	Repo       string     `json:"repo"`
	Dir        string     `json:"dir"`
	Branch     string     `json:"branch"`
	Prompt     string     `json:"prompt"`
	Turns      int        `json:"turns"`
	FollowUps  []string   `json:"follow_ups"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at"`
	EndedAt    *time.Time `json:"ended_at"`
}

func (w *world) task(id string) taskMeta {
	w.t.Helper()
	out, code := w.stdout("task", "list", "--json")
	require.Equal(w.t, 0, code, out)
	var ts []taskMeta
	require.NoError(w.t, json.Unmarshal([]byte(out), &ts), out)
	for _, m := range ts {
		if m.ID == id {
			return m
		}
	}
	w.t.Fatalf("task %s not in `horizon task list --json`: %s", id, out)
	return taskMeta{}
}

// `horizon task run explorer --background`, the daemon SIGKILLed while the
// task's session waits for the model, `horizon resume`: the task completes
// in the same OpenCode session, no second session is opened, and `horizon
// task output` shows the whole stream, each event once.
func TestTaskSurvivesDaemonCrash(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, taskScript())
	w.env = append(w.env, "HORIZON_MODELS_DEFAULT="+demo.Model)
	repo, head := fixture(t)

	out, code := w.stdout("task", "run", "explorer", "--repo", repo, "--background", taskPrompt)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	require.Regexp(t, `^\d{8}-\d{6}-[0-9a-f]{6}$`, id)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	_, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "task-step" && r.Held })
	require.NoError(t, err)
	before := w.task(id)
	require.Equal(t, "running", before.Status)
	require.Equal(t, "explorer", before.Specialist)
	require.Equal(t, "horizon-sp-explorer", before.Agent)
	require.Equal(t, demo.Model, before.Model)
	require.NotEmpty(t, before.Session)
	require.Equal(t, repo, before.Dir, "a read-only specialist works in the repository")
	require.Empty(t, before.Branch)
	// The finished first step (the read) reaches the stream before the crash.
	require.Eventually(t, func() bool {
		out, code := w.stdout("task", "output", id, "--json")
		return code == 0 && strings.Contains(out, `"tool":"read"`)
	}, 30*time.Second, 200*time.Millisecond)

	killDaemon(t, w)

	out, code = w.run(ctx, "resume")
	require.Equal(t, 0, code, out)

	out, code = w.stdout("task", "output", id, "--follow", "--json")
	require.Equal(t, 0, code, out)
	evs := taskEvents(t, out)
	seen := map[string]bool{}
	var prompts, reads, answers int
	for _, ev := range evs {
		require.False(t, seen[ev.ID], "event %s written twice:\n%s", ev.ID, out)
		seen[ev.ID] = true
		switch {
		case ev.Type == "text" && ev.Role == "user" && strings.Contains(ev.Text, "TASK-CRASH-PROMPT"):
			prompts++
		case ev.Type == "tool" && ev.Tool == "read":
			reads++
			require.Equal(t, "completed", ev.Status)
		case ev.Type == "text" && ev.Role == "assistant" && ev.Text == taskAnswer:
			answers++
		}
	}
	require.Equal(t, 1, prompts, out)
	require.Equal(t, 1, reads, out)
	require.Equal(t, 1, answers, out)
	last := evs[len(evs)-1]
	require.Equal(t, "end", last.Type, out)
	require.Equal(t, "completed", last.Status, out)

	after := w.task(id)
	require.Equal(t, "completed", after.Status)
	require.Equal(t, before.Session, after.Session, "the crashed session was not continued")
	require.True(t, after.Resumed)
	require.NotNil(t, after.StartedAt)
	require.NotNil(t, after.EndedAt)
	require.Equal(t, taskPrompt, after.Prompt)

	// One conversation was opened for the task: the continuation is the
	// same session's next turn, not a new session.
	n := 0
	for _, r := range w.model.Requests() {
		if r.Rule == "task-step" && r.Step == 0 {
			n++
		}
	}
	require.Equal(t, 1, n, "a second session was started for the task")

	// Human output: the same stream, rendered.
	out, code = w.stdout("task", "output", id)
	require.Equal(t, 0, code, out)
	require.Equal(t, 1, strings.Count(out, taskAnswer), out)
	require.Contains(t, out, "[end] completed")

	// A task that has ended cannot be stopped; an unknown one is bad input.
	_, code = w.stdout("task", "stop", id)
	require.Equal(t, 2, code)
	_, code = w.stdout("task", "output", "nope")
	require.Equal(t, 2, code)

	// Nothing touched the user's branch; a read-only task leaves none.
	require.Equal(t, head, git(t, repo, "rev-parse", "main"))
	require.Empty(t, git(t, repo, "branch", "--list", "horizon/task-*"))
	_, err = os.Stat(filepath.Join(w.home, "tasks", id+".ndjson"))
	require.NoError(t, err)

	recordHistory(t, w, workflows.TaskWorkflowID(id), "task-resumed-after-crash.json")
}

// The other ways a task runs: in the foreground (`task run` follows the
// output to the end), as an editing specialist (a lane, a branch
// horizon/task-<id> with its change), and stopped (`task stop` cancels the
// workflow, the session is aborted, the task ends cancelled).
func TestTaskForegroundEditAndStop(t *testing.T) {
	needsE2E(t)
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "task-quick", When: []string{"TASK-QUICK"}, Replies: []fakemodel.Reply{{Text: "TASK-QUICK-ANSWER"}}},
		{Name: "task-edit", When: []string{"TASK-EDIT"}, Replies: []fakemodel.Reply{
			{ToolCalls: []fakemodel.ToolCall{{Name: "write", Args: map[string]any{"filePath": "{{workdir}}/NOTES.md", "content": "notes from a task\n"}}}},
			{Text: "wrote NOTES.md"},
		}},
		{Name: "task-hang", When: []string{"TASK-HANG"}, Replies: []fakemodel.Reply{{Hold: "never", Text: "never sent"}}},
	}}
	w := newWorld(t, script)
	w.env = append(w.env, "HORIZON_MODELS_DEFAULT="+demo.Model)
	repo, head := fixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	out, code := w.stdout("task", "run", "explorer", "--repo", repo, "TASK-QUICK: anything?")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "[prompt] TASK-QUICK: anything?")
	require.Contains(t, out, "[assistant] TASK-QUICK-ANSWER")
	require.True(t, strings.HasSuffix(out, "[end] completed \n"), out)

	out, code = w.stdout("task", "run", "worker", "--repo", repo, "--json", "TASK-EDIT: write NOTES.md")
	require.Equal(t, 0, code, out)
	var edit taskMeta
	require.NoError(t, json.Unmarshal([]byte(out), &edit), out)
	require.Equal(t, "completed", edit.Status)
	require.Equal(t, "horizon/task-"+edit.ID, edit.Branch)
	require.Equal(t, filepath.Join(w.home, "lanes", "_tasks", edit.ID), edit.Dir)
	require.NoDirExists(t, edit.Dir, "the lane's worktree is removed at the end")
	require.Equal(t, "NOTES.md", git(t, repo, "diff", "--name-only", head, edit.Branch))
	require.Equal(t, "notes from a task", git(t, repo, "show", edit.Branch+":NOTES.md"))
	require.Equal(t, head, git(t, repo, "rev-parse", "main"))
	_, err := os.Stat(filepath.Join(repo, "NOTES.md"))
	require.True(t, os.IsNotExist(err), "the user's work tree is untouched")

	out, code = w.stdout("task", "run", "explorer", "--repo", repo, "--background", "TASK-HANG: wait")
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	_, err = w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "task-hang" && r.Held })
	require.NoError(t, err)
	out, code = w.stdout("task", "stop", id)
	require.Equal(t, 0, code, out)
	out, code = w.stdout("task", "output", id, "--follow", "--json")
	require.Equal(t, 0, code, out)
	evs := taskEvents(t, out)
	require.Equal(t, "end", evs[len(evs)-1].Type)
	require.Equal(t, "cancelled", evs[len(evs)-1].Status)
	stopped := w.task(id)
	require.Equal(t, "cancelled", stopped.Status)
	require.NotEmpty(t, stopped.Session)
	require.NotNil(t, stopped.EndedAt)
}

const (
	resumePrompt   = "TASK-RESUME-FIRST: what does add.sh do?"
	resumeAnswer   = "TASK-RESUME-ANSWER: add.sh prints the sum of its arguments."
	followUpPrompt = "TASK-FOLLOWUP-7Q: and what would you change in it?"
	followUpAnswer = "TASK-FOLLOWUP-ANSWER: nothing, it is fine."
)

// resumeScript: the task's first prompt is answered at once; its
// follow-up's reply is held (until the test releases it) so the daemon
// can be killed while the session waits, and the continued turn ("You
// were interrupted") answers the follow-up. The follow-up's rules come
// first: its conversation holds the first prompt too.
func resumeScript() *fakemodel.Script {
	return &fakemodel.Script{Rules: []fakemodel.Rule{
		{Name: "followup-continue", When: []string{"TASK-FOLLOWUP-7Q", "You were interrupted"}, Replies: []fakemodel.Reply{{Text: followUpAnswer}}},
		{Name: "followup", When: []string{"TASK-FOLLOWUP-7Q"}, Unless: []string{"You were interrupted"}, Times: 1, Replies: []fakemodel.Reply{{Hold: "followup", Text: followUpAnswer}}},
		{Name: "first", When: []string{"TASK-RESUME-FIRST"}, Unless: []string{"TASK-FOLLOWUP-7Q"}, Replies: []fakemodel.Reply{{Text: resumeAnswer}}},
	}}
}

// A task that completed takes a follow-up (`horizon task resume ID
// --background`); the daemon is SIGKILLed while the follow-up waits for
// the model, then `horizon resume`: the follow-up completes in the task's
// own session, its prompt reached the model once, and the task's output
// holds both turns, each with its one end.
func TestTaskResumeAfterDaemonCrash(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, resumeScript())
	w.env = append(w.env, "HORIZON_MODELS_DEFAULT="+demo.Model)
	repo, head := fixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	out, code := w.stdout("task", "run", "explorer", "--repo", repo, "--background", resumePrompt)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	out, code = w.stdout("task", "output", id, "--follow", "--json")
	require.Equal(t, 0, code, out)
	first := w.task(id)
	require.Equal(t, "completed", first.Status)
	require.NotEmpty(t, first.Session)

	out, code = w.stdout("task", "resume", id, "--background", followUpPrompt)
	require.Equal(t, 0, code, out)
	require.Equal(t, id, strings.TrimSpace(out))
	_, err := w.model.WaitForRequest(ctx, func(r fakemodel.Request) bool { return r.Rule == "followup" && r.Held })
	require.NoError(t, err)
	during := w.task(id)
	require.Equal(t, "running", during.Status)
	require.Equal(t, 2, during.Turns)
	require.Nil(t, during.EndedAt)
	// A task running its follow-up takes no other.
	_, code = w.stdout("task", "resume", id, "another one")
	require.Equal(t, 2, code)

	killDaemon(t, w)
	out, code = w.run(ctx, "resume")
	require.Equal(t, 0, code, out)
	w.model.Release("followup")

	out, code = w.stdout("task", "output", id, "--follow", "--json")
	require.Equal(t, 0, code, out)
	evs := taskEvents(t, out)
	seen := map[string]bool{}
	var ends []string
	var turns, answers, followAnswers int
	for _, ev := range evs {
		require.False(t, seen[ev.ID], "event %s written twice:\n%s", ev.ID, out)
		seen[ev.ID] = true
		switch {
		case ev.Type == "end":
			ends = append(ends, ev.ID)
			require.Equal(t, "completed", ev.Status, out)
		case ev.Type == "turn":
			turns++
			require.Equal(t, "turn-2", ev.ID)
			require.Equal(t, followUpPrompt, ev.Text)
		case ev.Type == "text" && ev.Role == "assistant" && ev.Text == resumeAnswer:
			answers++
		case ev.Type == "text" && ev.Role == "assistant" && ev.Text == followUpAnswer:
			followAnswers++
		}
	}
	require.Equal(t, []string{"end", "end-2"}, ends, out)
	require.Equal(t, 1, turns, out)
	require.Equal(t, 1, answers, out)
	require.Equal(t, 1, followAnswers, out)
	require.Equal(t, "end-2", evs[len(evs)-1].ID, out)
	require.NotContains(t, out, "[horizon task", "the turn's marker is kept out of the stream")

	after := w.task(id)
	require.Equal(t, "completed", after.Status)
	require.Equal(t, first.Session, after.Session, "the follow-up ran in another session")
	require.Equal(t, 2, after.Turns)
	require.Equal(t, []string{followUpPrompt}, after.FollowUps)
	require.Equal(t, resumePrompt, after.Prompt)
	require.True(t, after.Resumed, "the follow-up's turn was continued after the crash")
	require.NotNil(t, after.EndedAt)

	// The follow-up was prompted once: the retry after the crash found
	// its marker in the session and asked the turn to continue.
	prompted, firsts := 0, 0
	for _, r := range w.model.Requests() {
		if r.Step == 0 && !r.Title && strings.Contains(r.LastUser, "TASK-FOLLOWUP-7Q") {
			prompted++
		}
		if r.Rule == "first" && r.Step == 0 {
			firsts++
		}
	}
	require.Equal(t, 1, prompted, "the follow-up reached the model more than once")
	require.Equal(t, 1, firsts, "a second session was started for the task")

	// Human output: each turn, the follow-up under its header.
	out, code = w.stdout("task", "output", id)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "── follow-up (turn 2): "+followUpPrompt+"\n")
	require.Equal(t, 2, strings.Count(out, "[end] completed"), out)
	require.Less(t, strings.Index(out, resumeAnswer), strings.Index(out, "── follow-up (turn 2)"), out)
	require.Less(t, strings.Index(out, "── follow-up (turn 2)"), strings.Index(out, followUpAnswer), out)

	require.Equal(t, head, git(t, repo, "rev-parse", "main"))
	recordHistory(t, w, workflows.TaskWorkflowID(id), "task-follow-up-after-crash.json")
}

// A task whose session OpenCode no longer has cannot take a follow-up:
// the follow-up fails at once and says so, and nothing is prompted.
func TestTaskResumeGoneSession(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, resumeScript())
	w.env = append(w.env, "HORIZON_MODELS_DEFAULT="+demo.Model)
	repo, _ := fixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	out, code := w.stdout("task", "run", "explorer", "--repo", repo, "--json", resumePrompt)
	require.Equal(t, 0, code, out)
	var done taskMeta
	require.NoError(t, json.Unmarshal([]byte(out), &done), out)
	require.Equal(t, "completed", done.Status)

	// The session is deleted through an OpenCode of the test's own on the
	// stopped daemon's store.
	out, code = w.run(ctx, "stop", "--timeout", "30s")
	require.Equal(t, 0, code, out)
	srv, err := agent.StartServer(ctx, agent.ServerOptions{
		Bin: opencodeBin, ConfigDir: filepath.Join(w.home, "opencode", "config"), DBPath: filepath.Join(w.home, "opencode", "opencode.db"),
		Env: w.env, LogPath: filepath.Join(t.TempDir(), "opencode.log"), Logger: zerolog.Nop(),
	})
	require.NoError(t, err)
	_, err = srv.Transcript(ctx, repo, done.Session)
	require.NoError(t, err)
	require.NoError(t, srv.DeleteSession(ctx, repo, done.Session))
	_, err = srv.Transcript(ctx, repo, done.Session)
	require.True(t, agent.IsNotFound(err), "a deleted session reads as not found: %v", err)
	require.NoError(t, srv.Close())

	out, code = w.run(ctx, "task", "resume", done.ID, followUpPrompt)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "its session "+done.Session+" cannot be continued: OpenCode no longer has it; start a new task with `horizon task run`")
	failed := w.task(done.ID)
	require.Equal(t, "failed", failed.Status)
	require.Equal(t, 2, failed.Turns)
	for _, r := range w.model.Requests() {
		require.NotContains(t, r.LastUser, "TASK-FOLLOWUP-7Q", "the follow-up reached a model")
	}
	out, code = w.stdout("task", "output", done.ID, "--json")
	require.Equal(t, 0, code, out)
	evs := taskEvents(t, out)
	last := evs[len(evs)-1]
	require.Equal(t, "end-2", last.ID, out)
	require.Equal(t, "failed", last.Status, out)
}
