package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
)

// term is a tmux server of the test's own (its own socket, no user
// config, no status line) with one 80×24 window running a command in the
// world's environment.
type term struct {
	t    *testing.T
	sock string
	env  []string
}

func newTerm(t *testing.T, w *world, args ...string) *term {
	t.Helper()
	_, err := exec.LookPath("tmux")
	require.NoError(t, err, "the console's e2e drives tmux: apt-get install tmux (.ci/run does)")
	dir := t.TempDir()
	conf := filepath.Join(dir, "tmux.conf")
	require.NoError(t, os.WriteFile(conf, []byte("set -g status off\n"), 0o644))
	tm := &term{t: t, sock: filepath.Join(dir, "tmux.sock"), env: w.env}
	// The shell reports how the command exited and keeps the window open,
	// so a crash is on the screen rather than lost with the window.
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	script := strings.Join(quoted, " ") + `; echo "exited $?"; sleep 600`
	tm.tmux("-f", conf, "new-session", "-d", "-s", "console", "-x", "80", "-y", "24", "sh", "-c", script)
	t.Cleanup(func() { _ = tm.cmd("kill-server").Run() })
	return tm
}

func (tm *term) cmd(args ...string) *exec.Cmd {
	c := exec.Command("tmux", append([]string{"-S", tm.sock}, args...)...)
	c.Env = tm.env
	return c
}

func (tm *term) tmux(args ...string) string {
	tm.t.Helper()
	out, err := tm.cmd(args...).CombinedOutput()
	require.NoError(tm.t, err, "tmux %v: %s", args, out)
	return string(out)
}

func (tm *term) screen() string { return tm.tmux("capture-pane", "-p", "-t", "console") }

// press types keys into the window, one tmux key name each.
func (tm *term) press(keys ...string) {
	tm.tmux(append([]string{"send-keys", "-t", "console"}, keys...)...)
}

// waitScreen polls the screen until it holds every text.
func (tm *term) waitScreen(timeout time.Duration, texts ...string) string {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	var s string
	for time.Now().Before(deadline) {
		s = tm.screen()
		missing := false
		for _, x := range texts {
			if !strings.Contains(s, x) {
				missing = true
				break
			}
		}
		if !missing {
			return s
		}
		time.Sleep(200 * time.Millisecond)
	}
	tm.t.Fatalf("the screen did not show %q within %s; it shows:\n%s", texts, timeout, s)
	return s
}

// `horizon console` in an 80×24 tmux window, against a planned run under
// semi autonomy waiting before milestone m2: the run and its approval are
// on the screen, a asks to approve m2 (and asking does nothing), y
// approves, the run goes on to completion (horizon status --json says so)
// and the console follows it there; q quits with exit 0. Piped, it
// prints the same once as text.
func TestConsoleApprovesAWaitingRun(t *testing.T) {
	needsE2E(t)
	w, id := waitingAtMilestone2(t)
	short := id[strings.LastIndex(id, "-")+1:]

	tm := newTerm(t, w, horizonBin, "console")
	screen := tm.waitScreen(30*time.Second, "RUN "+id, "NEEDS YOU (1)", "approve  "+short+" milestone m2", "waiting for approval")
	t.Logf("the console:\n%s", screen)
	require.Contains(t, screen, "m1 Case tools [done]", "the plan tree")
	require.Contains(t, screen, "f2 Add lib/lower.sh · accepted")
	require.Regexp(t, `#1 T\d opencode rejected · gate pass \S+ · audit reject`, screen, "f2's first attempt, with its tier and receipt")
	for i, l := range strings.Split(strings.TrimRight(screen, "\n"), "\n") {
		require.LessOrEqual(t, len([]rune(l)), 80, "line %d is wider than the window", i+1)
	}

	tm.press("a")
	screen = tm.waitScreen(10*time.Second, "approve milestone m2 of "+id+"? y approves, n does not")
	require.NotNil(t, w.status(id).Waiting, "asking approves nothing")

	tm.press("y")
	screen = tm.waitScreen(30*time.Second, "approved m2 of "+id+"; it goes on")
	t.Logf("after the approval:\n%s", screen)

	final := w.waitStatus(id, 4*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() })
	require.Equal(t, horizon.StatusCompleted, final.Status, final.Reason)
	require.Nil(t, final.Waiting)
	fs := planFeatures(final.Plan)
	for _, f := range []string{"f3", "f4"} {
		require.Equal(t, horizon.FeatureAccepted, fs[f].Status, "m2's %s ran after the approval", f)
	}
	ds := readDecisions(t, w, id)
	require.True(t, hasDecision(ds, "approved milestone m2"), "decisions: %+v", ds)

	// The console follows the run to its end without a key press.
	screen = tm.waitScreen(30*time.Second, "NEEDS YOU (0)", "nothing waits for you", short+" completed", "4/4")
	t.Logf("at the end:\n%s", screen)

	tm.press("q")
	tm.waitScreen(10*time.Second, "exited 0")

	// Without a terminal it prints the same once, as text.
	plain, code := w.stdout("console")
	require.Equal(t, 0, code, plain)
	require.Regexp(t, id+`\s+completed\s+–\s+4/4\s+\$`, plain)
	require.Contains(t, plain, "NEEDS YOU (0)\n  nothing waits for you")
	require.Contains(t, plain, "RUN "+id+"\n")
	require.Contains(t, plain, "f4 Add lib/double.sh · accepted")
}

// waitingAtMilestone2 starts a planned run of the tools goal under semi
// autonomy and returns once it waits for approval before milestone m2
// (the console's and the dashboard's approve tests start from there).
func waitingAtMilestone2(t *testing.T) (*world, string) {
	t.Helper()
	w := plannedWorld(t, toolsScript(t))
	repo, _ := toolsRepo(t)
	out, code := w.stdout("start", "--detach", "--autonomy", "semi", "--repo", repo, "--model", demo.Model, toolsGoal)
	require.Equal(t, 0, code, out)
	id := strings.TrimSpace(out)
	require.Regexp(t, runIDRe, id)
	s := w.waitStatus(id, 4*time.Minute, func(s horizon.RunState) bool { return s.Status.Terminal() || s.Waiting != nil })
	require.NotNil(t, s.Waiting, "%s: %s", s.Status, s.Reason)
	require.Equal(t, "m2", s.Waiting.Subject)
	return w, id
}
