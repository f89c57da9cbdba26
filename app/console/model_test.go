package console

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/golden"
)

// loaded is the console of f in a w×h terminal after the first listing
// and a read of every run, all answered at the fixture's time.
func loaded(t *testing.T, f *fake, w, h int) Model {
	t.Helper()
	m := New(context.Background(), f, Options{})
	m = step(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	m = step(t, m, listMsg{rows: f.rows, sups: f.sups, at: at})
	for _, r := range f.rows {
		if f.states[r.ID] == nil {
			continue // its read stays unanswered
		}
		d, err := readRun(context.Background(), f, r.ID)
		require.NoError(t, err)
		m = step(t, m, runMsg{id: r.ID, detail: d, at: at})
	}
	return m
}

func step(t *testing.T, m Model, msg tea.Msg) Model {
	t.Helper()
	next, _ := m.Update(msg)
	return next.(Model)
}

// key is the key press a person makes for name ("a", "tab", "enter").
func key(name string) tea.KeyPressMsg {
	special := map[string]rune{"tab": tea.KeyTab, "enter": tea.KeyEnter, "esc": tea.KeyEscape,
		"down": tea.KeyDown, "up": tea.KeyUp, "backspace": tea.KeyBackspace, "pgdown": tea.KeyPgDown}
	if c, ok := special[name]; ok {
		return tea.KeyPressMsg{Code: c}
	}
	if name == "ctrl+c" {
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r, _ := utf8.DecodeRuneInString(name)
	return tea.KeyPressMsg{Code: r, Text: name}
}

// press presses keys in turn and returns the model and the last command.
func press(t *testing.T, m Model, keys ...string) (Model, tea.Cmd) {
	t.Helper()
	var cmd tea.Cmd
	for _, k := range keys {
		var next tea.Model
		next, cmd = m.Update(key(k))
		m = next.(Model)
	}
	return m, cmd
}

// answer runs a verb's command, as bubbletea would, and hands its answer
// back to the model.
func answer(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	require.NotNil(t, cmd, "the key started nothing")
	msg := cmd()
	v, ok := msg.(verbMsg)
	require.True(t, ok, "the command is no verb: %T", msg)
	v.at = at
	return step(t, m, v)
}

// checkScreen fails when the screen does not fit the terminal.
func checkScreen(t *testing.T, m Model) string {
	t.Helper()
	s := m.Screen()
	lines := strings.Split(s, "\n")
	require.Len(t, lines, m.height, "the screen is as high as the terminal")
	for i, l := range lines {
		require.LessOrEqual(t, utf8.RuneCountInString(l), m.width, "line %d is wider than the terminal: %q", i+1, l)
	}
	return s
}

// The first screen in 80×24: the runs, open ones first; what needs you
// (the approval, the blocker, the stall); the first run's plan tree.
func TestScreenRunList(t *testing.T) {
	m := loaded(t, newFake(), 80, 24)
	golden.Assert(t, "runs.golden", checkScreen(t, m))
}

// The blocked run's plan tree: a blocker with its evidence, a decomposed
// feature's parts under it, every attempt with its tier, receipt and
// verdicts, the advisor's notes.
func TestScreenPlanTree(t *testing.T) {
	m := loaded(t, newFake(), 80, 40)
	m, _ = press(t, m, "down")
	require.Equal(t, blockedID, m.shownID())
	golden.Assert(t, "plan_tree.golden", checkScreen(t, m))
}

// a asks to approve the checkpoint the run waits at; y sends the approval
// naming that checkpoint; the answer is shown.
func TestScreenApproveWithConfirmation(t *testing.T) {
	f := newFake()
	m := loaded(t, f, 80, 24)
	m, cmd := press(t, m, "a")
	require.Nil(t, cmd)
	require.Empty(t, f.calls, "asking approves nothing")
	golden.Assert(t, "approve_confirm.golden", checkScreen(t, m))

	m, cmd = press(t, m, "y")
	m = answer(t, m, cmd)
	require.Equal(t, []string{`approve ` + waitingID + ` subject=m2 note=""`}, f.calls)
	golden.Assert(t, "approve_done.golden", checkScreen(t, m))
}

func TestApproveDeclinedOrRefused(t *testing.T) {
	for _, no := range []string{"n", "esc", "q"} {
		t.Run("declined with "+no, func(t *testing.T) {
			f := newFake()
			m, cmd := press(t, loaded(t, f, 80, 24), "a", no)
			require.Nil(t, cmd, "declining quits nothing and sends nothing")
			require.Empty(t, f.calls)
			require.Contains(t, m.Screen(), "nothing done")
		})
	}
	t.Run("refused by the run", func(t *testing.T) {
		f := newFake()
		f.refuse = errRefused
		m, cmd := press(t, loaded(t, f, 80, 24), "a", "y")
		m = answer(t, m, cmd)
		require.Contains(t, flat(m.Screen()), "approve m2 of "+waitingID+" refused: approve: not waiting for approval")
	})
	t.Run("a run that waits for nothing", func(t *testing.T) {
		f := newFake()
		m, cmd := press(t, loaded(t, f, 80, 24), "down", "a")
		require.Nil(t, cmd)
		require.Nil(t, m.prompt)
		require.Contains(t, m.Screen(), blockedID+" is not waiting for approval")
	})
}

// u asks for the note; it is required; enter sends it with the feature.
func TestUnblockAsksForTheNote(t *testing.T) {
	f := newFake()
	m := loaded(t, f, 80, 24)
	m, _ = press(t, m, "tab", "down")
	require.Equal(t, blockedID, m.shownID(), "the blocker is the second need")
	m, _ = press(t, m, "u", "enter")
	require.Empty(t, f.calls, "an empty note is not sent")
	require.Contains(t, m.Screen(), "a note is needed")
	require.NotNil(t, m.prompt, "the prompt stays open for the note")
	for _, r := range "token set!" {
		m, _ = press(t, m, string(r))
	}
	m, _ = press(t, m, "backspace")
	require.Contains(t, m.Screen(), "unblock f1 of "+blockedID+", what changed? token set▏")
	require.Contains(t, m.Screen(), noteHelp)
	m, cmd := press(t, m, "enter")
	answer(t, m, cmd)
	require.Equal(t, []string{`unblock ` + blockedID + ` feature=f1 note="token set"`}, f.calls)
}

// typing types text into the open prompt, a key per rune.
func typing(t *testing.T, m Model, text string) Model {
	t.Helper()
	for _, r := range text {
		m, _ = press(t, m, string(r))
	}
	return m
}

// s on a planned run asks which feature (one done already is refused),
// then the note (required), then y/n; y sends the skip with the feature
// and the note; the answer is shown, the skipped feature with its note in
// the plan tree, and the run is read afresh.
func TestSkipAsksForTheFeatureTheNoteAndConfirmation(t *testing.T) {
	f := newFake()
	m := loaded(t, f, 80, 28)
	require.Equal(t, waitingID, m.shownID())
	require.Contains(t, m.Screen(), "u unblock  s skip  p pause  x cancel")
	m, cmd := press(t, m, "s")
	require.Nil(t, cmd)
	require.Contains(t, m.Screen(), "skip which feature of "+waitingID+"? ▏")
	require.Contains(t, m.Screen(), pickHelp)

	m = typing(t, m, "f1")
	m, _ = press(t, m, "enter")
	require.Contains(t, m.Screen(), "feature f1 is accepted already; only a feature not yet done can be skipped")
	m, _ = press(t, m, "backspace", "backspace", "enter")
	require.Contains(t, m.Screen(), "name the feature to skip")
	m = typing(t, m, "f9")
	m, _ = press(t, m, "enter")
	require.Contains(t, m.Screen(), waitingID+` has no feature "f9"`)
	m, _ = press(t, m, "backspace")
	m = typing(t, m, "3")
	m, _ = press(t, m, "enter")
	require.Contains(t, m.Screen(), "skip f3 of "+waitingID+", why is it left out? ▏")
	require.Contains(t, m.Screen(), skipNoteHelp)

	m, _ = press(t, m, "enter")
	require.Contains(t, m.Screen(), "a note is needed: say why the feature is left out")
	m = typing(t, m, "  ")
	m, _ = press(t, m, "enter")
	require.Contains(t, m.Screen(), "a note is needed", "blanks are no note")
	m, _ = press(t, m, "backspace", "backspace")
	m = typing(t, m, "length waits for the unicode work")
	m, cmd = press(t, m, "enter")
	require.Nil(t, cmd)
	require.Empty(t, f.calls, "nothing is skipped before the y")
	golden.Assert(t, "skip_confirm.golden", checkScreen(t, m))

	m, cmd = press(t, m, "y")
	require.NotNil(t, cmd)
	v, ok := cmd().(verbMsg)
	require.True(t, ok, "y sends the skip")
	require.Equal(t, []string{`skip ` + waitingID + ` feature=f3 note="length waits for the unicode work"`}, f.calls)
	v.at = at
	next, cmd := m.Update(v)
	m = next.(Model)
	golden.Assert(t, "skip_done.golden", checkScreen(t, m))

	// Then the run is read afresh.
	require.NotNil(t, cmd)
	read, isRead := cmd().(runMsg)
	require.True(t, isRead, "after a skip the console reads the run")
	require.Equal(t, waitingID, read.id)
}

// From NEEDS YOU, s skips the selected need's feature: no feature to
// name, the note and y/n only; n, esc and a closed or one-feature run
// skip nothing.
func TestSkipFromANeedOrNothing(t *testing.T) {
	f := newFake()
	m := loaded(t, f, 80, 24)
	m, _ = press(t, m, "tab", "down", "s")
	require.Contains(t, m.Screen(), "skip f1 of "+blockedID+", why is it left out? ▏")
	m = typing(t, m, "the locale table is dropped")
	m, _ = press(t, m, "enter")
	require.Contains(t, flat(m.Screen()), "skip f1 of "+blockedID+"? it is left out of the run for good")
	m, cmd := press(t, m, "n")
	require.Nil(t, cmd)
	require.Contains(t, m.Screen(), "nothing done")

	m, _ = press(t, m, "s", "x", "esc")
	require.Nil(t, m.prompt)
	require.Contains(t, m.Screen(), "nothing done")

	m, cmd = press(t, m, "s")
	m = typing(t, m, "dropped")
	m, cmd = press(t, m, "enter", "y")
	answer(t, m, cmd)
	require.Equal(t, []string{`skip ` + blockedID + ` feature=f1 note="dropped"`}, f.calls)

	m, _ = press(t, loaded(t, f, 80, 24), "down", "down", "s")
	require.Nil(t, m.prompt)
	require.Contains(t, m.Screen(), completedID+" is not running")

	f.rows[0].Status, f.rows[0].ClosedAt = core.EngineRunning, time.Time{} // a one-feature run still going: listed first
	m = loaded(t, f, 80, 24)
	require.Equal(t, completedID, m.shownID())
	m, _ = press(t, m, "s")
	require.Nil(t, m.prompt)
	require.Contains(t, flat(m.Screen()), completedID+" has no planned features to skip")

	f = newFake()
	f.refuse = errors.New("skip: feature f3 is being skipped; wait until it has stopped")
	m, cmd = press(t, loaded(t, f, 80, 24), "s", "f", "4", "enter", "n", "o", "enter", "y")
	m = answer(t, m, cmd)
	require.Contains(t, flat(m.Screen()), "skip f4 of "+waitingID+" refused: skip: feature f3 is being skipped")
}

func TestPauseResumeAndCancel(t *testing.T) {
	f := newFake()
	m := loaded(t, f, 80, 24)
	m, cmd := press(t, m, "p")
	m = answer(t, m, cmd)
	require.Contains(t, m.Screen(), "paused "+waitingID+": it holds before its next attempt")
	require.Contains(t, m.Screen(), "> aa11aa paused", "the answer's state is shown at once")
	m, _ = press(t, m, "up")
	require.Contains(t, m.Screen(), "  p resume  ", "the keys say what p does now")
	m, cmd = press(t, m, "p")
	m = answer(t, m, cmd)
	m, cmd = press(t, m, "x")
	require.Nil(t, cmd)
	require.Contains(t, flat(m.Screen()), "cancel "+waitingID+"? its session is aborted")
	m, cmd = press(t, m, "y")
	answer(t, m, cmd)
	require.Equal(t, []string{"pause " + waitingID, "resume " + waitingID, "cancel " + waitingID}, f.calls)

	// A closed run is neither paused nor cancelled.
	m, _ = press(t, loaded(t, f, 80, 24), "down", "down", "x")
	require.Nil(t, m.prompt)
	require.Contains(t, m.Screen(), completedID+" is not running")
	m, cmd = press(t, m, "p")
	require.Nil(t, cmd)
	require.Len(t, f.calls, 3)
}

// q, esc and ctrl+c quit without touching any run.
func TestQuitTouchesNoRun(t *testing.T) {
	for _, k := range []string{"q", "esc", "ctrl+c"} {
		t.Run(k, func(t *testing.T) {
			f := newFake()
			_, cmd := press(t, loaded(t, f, 80, 24), k)
			require.NotNil(t, cmd)
			require.IsType(t, tea.QuitMsg{}, cmd())
			require.Empty(t, f.calls)
		})
	}
	t.Run("ctrl+c in a note", func(t *testing.T) {
		f := newFake()
		_, cmd := press(t, loaded(t, f, 80, 24), "tab", "down", "u", "x", "ctrl+c")
		require.IsType(t, tea.QuitMsg{}, cmd())
		require.Empty(t, f.calls)
	})
}

// What is read after a listing: every run not read yet; then only the
// shown run, a run the engine says closed since, and open runs whose
// state is older than StaleAfter (a few per listing).
func TestListingReadsOnlyWhatChanged(t *testing.T) {
	f := newFake()
	m := New(context.Background(), f, Options{StaleAfter: time.Minute, ReadsPerList: 1})
	m = step(t, m, listMsg{rows: f.rows, at: at})
	require.ElementsMatch(t, []string{waitingID, blockedID, completedID}, keys(m.reading), "the first listing reads every run")
	for _, r := range f.rows {
		d, _ := readRun(context.Background(), f, r.ID)
		m = step(t, m, runMsg{id: r.ID, detail: d, at: at})
	}
	require.Empty(t, m.reading)

	m = step(t, m, listMsg{rows: f.rows, at: at.Add(time.Second)})
	require.Empty(t, m.reading, "nothing changed, every state is fresh")

	m = step(t, m, listMsg{rows: f.rows, at: at.Add(3 * time.Second)})
	require.Equal(t, []string{waitingID}, keys(m.reading), "the shown run, every SelectedEvery")
	d, _ := readRun(context.Background(), f, waitingID)
	m = step(t, m, runMsg{id: waitingID, detail: d, at: at.Add(3 * time.Second)})

	closed := slices.Clone(f.rows)
	closed[2].Status = core.EngineCancelled // the blocked run was cancelled elsewhere
	m = step(t, m, listMsg{rows: closed, at: at.Add(4 * time.Second)})
	require.Equal(t, []string{blockedID}, keys(m.reading), "a run that closed is read once more")
	m = step(t, m, runMsg{id: blockedID, detail: d, at: at.Add(4 * time.Second)})

	m = step(t, m, listMsg{rows: closed, at: at.Add(2 * time.Minute)})
	require.Equal(t, []string{waitingID}, keys(m.reading), "stale open runs only (the shown one); closed runs never again")
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// flat is a screen with its lines joined, for texts the footer wraps.
func flat(screen string) string { return strings.ReplaceAll(screen, "\n", " ") }

// The run on screen is read every SelectedEvery, by its own timer, and
// not more often.
func TestShownRunReadOnItsTimer(t *testing.T) {
	f := newFake()
	m := loaded(t, f, 80, 24)
	m = step(t, m, selectedTick{at: at.Add(time.Second)})
	require.Empty(t, m.reading, "read a second ago")
	m = step(t, m, selectedTick{at: at.Add(2 * time.Second)})
	require.Equal(t, []string{waitingID}, keys(m.reading))
	m = step(t, m, selectedTick{at: at.Add(4 * time.Second)})
	require.Equal(t, []string{waitingID}, keys(m.reading), "one read at a time")

	// Selecting a run whose state is older than SelectedEvery reads it; a
	// closed run, once read, is not read again.
	m, _ = press(t, m, "down")
	require.Equal(t, []string{blockedID, waitingID}, keys(m.reading))
	m, _ = press(t, m, "down")
	m = step(t, m, selectedTick{at: at.Add(time.Hour)})
	require.NotContains(t, m.reading, completedID)
}

// With more runs than rows, the list scrolls so the selected run stays on
// the screen, which still fits 80×24.
func TestRunListScrolls(t *testing.T) {
	f := newFake()
	for i := range 12 {
		f.rows = append(f.rows, RunRow{ID: fmt.Sprintf("run-20261120-0%d0000-ee%04d", i%10, i), Goal: "an old goal", Repo: "/src/old"})
	}
	m := loaded(t, f, 80, 24)
	for range 10 {
		m, _ = press(t, m, "down")
	}
	s := checkScreen(t, m)
	require.Contains(t, s, "> ee0007 closed")
	require.NotContains(t, s, "aa11aa running", "the first rows scrolled off")
	require.Contains(t, s, "RUN run-20261120-070000-ee0007")
	require.Contains(t, s, "reading the run's state…", "its state is asked for")
}

// A supervisor's queued plan that waits for approval is a need like a
// run's checkpoint: listed under NEEDS YOU, shown with the command that
// approves it, and a then y approves that entry of that supervisor; the
// listing is read again after.
func TestQueuedPlanApprovedFromTheNeeds(t *testing.T) {
	f := newFake()
	f.sups = []horizon.SupervisorState{waitingSupervisor()}
	m := loaded(t, f, 80, 24)
	needs := m.needs()
	last := needs[len(needs)-1]
	require.Equal(t, Need{Kind: NeedApproval, RunID: supervisorID, Subject: "q3", Supervisor: true,
		What:    "queued plan q3 waits for approval before it runs: Add rate limits to the export API",
		Command: "horizon approve --repo /home/ann/src/reports q3"}, last)
	require.NotContains(t, fmt.Sprint(needs), "q4", "a plan the supervisor runs on its own needs nobody")

	keys := []string{"tab"}
	for range len(needs) - 1 {
		keys = append(keys, "down")
	}
	m, _ = press(t, m, keys...)
	require.Empty(t, m.shownID(), "a queued plan is no run to read")
	golden.Assert(t, "queued_plan.golden", checkScreen(t, m))

	m, cmd := press(t, m, "a")
	require.Nil(t, cmd)
	require.Contains(t, flat(m.Screen()), "approve queued plan q3 of "+supervisorID+"?")
	m, cmd = press(t, m, "y")
	require.NotNil(t, cmd)
	msg := cmd()
	v, ok := msg.(verbMsg)
	require.True(t, ok, "%T", msg)
	require.Equal(t, []string{"approve queued " + supervisorID + " entry=q3"}, f.calls)
	next, cmd := m.Update(v)
	m = next.(Model)
	require.Contains(t, flat(m.Screen()), "approved queued plan q3; "+supervisorID+" runs it in its turn")
	require.NotNil(t, cmd, "the listing is read again")
	_, isList := cmd().(listMsg)
	require.True(t, isList, "after a queued plan's approval the console lists again")
}
