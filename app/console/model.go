package console

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

// Options tune how often the console reads the engine.
//
// What the console polls, and why this way: the engine's visibility store
// lists every run in one cheap call (no workflow is asked anything), so
// the list is read every ListEvery. A run's phase, progress, cost and what
// it waits for are known only by asking the run (a status query, answered
// by a worker), so only the run on screen is asked every SelectedEvery.
// The others are asked when first listed, when the engine says they
// closed (then never again: a closed run does not change), and at most
// every StaleAfter while open, no more than ReadsPerList per listing: a
// run elsewhere that starts waiting for you shows up within StaleAfter,
// and a daemon with many runs is not queried for each every second.
type Options struct {
	ListEvery     time.Duration // default 5s
	SelectedEvery time.Duration // default 2s
	StaleAfter    time.Duration // default 30s
	ReadsPerList  int           // default 3
	// CallTimeout bounds each read and each verb.
	CallTimeout time.Duration // default 30s
}

func (o Options) withDefaults() Options {
	if o.ListEvery <= 0 {
		o.ListEvery = 5 * time.Second
	}
	if o.SelectedEvery <= 0 {
		o.SelectedEvery = 2 * time.Second
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = 30 * time.Second
	}
	if o.ReadsPerList <= 0 {
		o.ReadsPerList = 3
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	return o
}

// pane is where the arrow keys move: the runs, or what needs you.
type pane int

const (
	paneRuns pane = iota
	paneNeeds
)

// cached is a run's last read state.
type cached struct {
	detail RunDetail
	at     time.Time // when it was read
	open   bool      // whether the engine listed the run open when it was read
}

// prompt is a question the console waits on before it does anything to a
// run: a y/n confirmation, or a note to type. A skip asks three times at
// most: the feature (pick, when no need named it), the note, then y/n.
type prompt struct {
	verb     verb
	runID    string
	subject  string // the checkpoint to approve, the feature to unblock or skip
	question string
	note     bool   // a text is typed (unblock, skip), not y/n
	pick     bool   // the text typed is the feature to skip, not a note
	help     string // under the text being typed
	text     string // the note so far (kept while a skip is confirmed)
}

type verb string

const (
	verbApprove verb = "approve"
	// verbApproveQueued approves a supervisor's queued plan: runID is the
	// supervisor, subject the queue entry.
	verbApproveQueued verb = "approve queued plan"
	verbUnblock       verb = "unblock"
	verbSkip          verb = "skip"
	verbPause         verb = "pause"
	verbResume        verb = "resume"
	verbCancel        verb = "cancel"
)

// Model is the console: bubbletea's model, with a pure Update. Every read
// and every verb is a tea.Cmd calling the Backend; its answer comes back
// as a message.
type Model struct {
	backend Backend
	ctx     context.Context
	opts    Options

	width, height int
	now           time.Time // the time of the last answer: the screen has no clock of its own

	rows     []RunRow
	sups     []horizon.SupervisorState // the running supervisors, for their queued plans' approvals
	loops    []core.LoopRow            // shown beside the runs
	tasks    []core.TaskMeta
	states   map[string]*cached
	reading  map[string]bool // reads in flight
	listing  bool
	listErr  error
	listedAt time.Time

	focus   pane
	runSel  int
	needSel int
	scroll  int // detail lines scrolled off the top

	prompt *prompt
	busy   string // a verb in flight, in words
	flash  string // the last verb's answer, or why a key did nothing
	bad    bool   // flash is an error
}

// New makes the console's model. ctx bounds every call to the backend.
func New(ctx context.Context, b Backend, o Options) Model {
	return Model{
		backend: b, ctx: ctx, opts: o.withDefaults(),
		width: 80, height: 24,
		states: map[string]*cached{}, reading: map[string]bool{},
	}
}

// Messages: the backend's answers and the timers.
type (
	listMsg struct {
		rows   []RunRow
		err    error
		sups   []horizon.SupervisorState
		supErr error
		loops  []core.LoopRow
		tasks  []core.TaskMeta
		at     time.Time
	}
	runMsg struct {
		id     string
		detail RunDetail
		err    error
		at     time.Time
	}
	verbMsg struct {
		verb    verb
		runID   string
		subject string
		state   *horizon.RunState
		err     error
		at      time.Time
	}
	listTick     struct{}
	selectedTick struct{ at time.Time }
)

// Init reads the list at once, and starts the selected run's timer.
func (m Model) Init() tea.Cmd {
	return tea.Batch(m.list(), m.selectedTimer())
}

func (m Model) list() tea.Cmd {
	b, ctx, timeout := m.backend, m.ctx, m.opts.CallTimeout
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		rows, err := listRuns(c, b)
		sups, supErr := b.AllSupervisors(c)
		loops, _ := b.LoopRows(c) // what cannot be read is not shown; the runs are what matter
		tasks, _ := b.TaskRows(c)
		return listMsg{rows: rows, err: err, sups: sups, supErr: supErr, loops: loops, tasks: tasks, at: time.Now()}
	}
}

func (m Model) read(id string) tea.Cmd {
	b, ctx, timeout := m.backend, m.ctx, m.opts.CallTimeout
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		d, err := readRun(c, b, id)
		return runMsg{id: id, detail: d, err: err, at: time.Now()}
	}
}

func (m Model) listTimer() tea.Cmd {
	return tea.Tick(m.opts.ListEvery, func(time.Time) tea.Msg { return listTick{} })
}

func (m Model) selectedTimer() tea.Cmd {
	return tea.Tick(m.opts.SelectedEvery, func(t time.Time) tea.Msg { return selectedTick{at: t} })
}

// Update is pure: it changes the model and returns the effects to run.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case listTick:
		if m.listing {
			return m, nil
		}
		m.listing = true
		return m, m.list()
	case listMsg:
		return m.listed(msg)
	case selectedTick:
		m.now = later(m.now, msg.at)
		return m, tea.Batch(m.selectedTimer(), m.readShown(m.opts.SelectedEvery))
	case runMsg:
		delete(m.reading, msg.id)
		m.now = later(m.now, msg.at)
		if msg.err != nil {
			m.flash, m.bad = fmt.Sprintf("read %s: %v", msg.id, msg.err), true
			return m, nil
		}
		m.states[msg.id] = &cached{detail: msg.detail, at: msg.at, open: m.isOpen(msg.id)}
		m.clampNeeds()
		return m, nil
	case verbMsg:
		return m.verbDone(msg)
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// listed takes a new listing: it keeps the selected run selected, and
// reads the runs whose state is missing or stale (Options).
func (m Model) listed(msg listMsg) (tea.Model, tea.Cmd) {
	m.listing = false
	m.now = later(m.now, msg.at)
	cmds := []tea.Cmd{m.listTimer()}
	if msg.err != nil {
		m.listErr = msg.err
		return m, tea.Batch(cmds...)
	}
	m.listErr, m.listedAt = nil, msg.at
	if msg.supErr == nil {
		// A failed read keeps the last: the queued plans did not go away.
		m.sups = msg.sups
	}
	m.loops, m.tasks = msg.loops, msg.tasks
	selected := m.selectedID()
	m.rows = orderRows(msg.rows)
	m.runSel = 0
	for i, r := range m.rows {
		if r.ID == selected {
			m.runSel = i
		}
	}
	shown := m.shownID()
	budget := m.opts.ReadsPerList
	for _, r := range m.rows {
		if r.ID == shown || m.reading[r.ID] {
			continue
		}
		c := m.states[r.ID]
		switch {
		case c == nil, c.open != r.Open():
		case r.Open() && msg.at.Sub(c.at) >= m.opts.StaleAfter && budget > 0:
			budget--
		default:
			continue
		}
		m.reading[r.ID] = true
		cmds = append(cmds, m.read(r.ID))
	}
	cmds = append(cmds, m.readShown(m.opts.SelectedEvery))
	m.clampNeeds()
	return m, tea.Batch(cmds...)
}

// orderRows puts open runs first, each group newest first as listed: what
// can still need a person comes before history.
func orderRows(rows []RunRow) []RunRow {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b RunRow) int {
		switch {
		case a.Open() == b.Open():
			return 0
		case a.Open():
			return -1
		}
		return 1
	})
	return out
}

// readShown reads the run on screen unless a read of it younger than age
// is at hand (or under way), or it is closed and already read.
func (m Model) readShown(age time.Duration) tea.Cmd {
	id := m.shownID()
	if id == "" || m.reading[id] {
		return nil
	}
	if c := m.states[id]; c != nil && (!c.open && !m.isOpen(id) || m.now.Sub(c.at) < age) {
		return nil
	}
	m.reading[id] = true // the map is shared by the copies of the model
	return m.read(id)
}

func (m Model) isOpen(id string) bool {
	for _, r := range m.rows {
		if r.ID == id {
			return r.Open()
		}
	}
	return false
}

func (m Model) selectedID() string {
	if m.runSel < len(m.rows) {
		return m.rows[m.runSel].ID
	}
	return ""
}

// shownID is the run the detail shows: the selected need's run while the
// needs have the focus, else the selected run.
// A supervisor's queued plan is no run: no run is shown beside it.
func (m Model) shownID() string {
	if n := m.selectedNeed(); n != nil {
		if n.Supervisor {
			return ""
		}
		return n.RunID
	}
	return m.selectedID()
}

// selectedNeed is the need under the cursor while the needs have the focus.
func (m Model) selectedNeed() *Need {
	if m.focus != paneNeeds {
		return nil
	}
	if ns := m.needs(); m.needSel < len(ns) {
		return &ns[m.needSel]
	}
	return nil
}

func (m Model) row(id string) (RunRow, bool) {
	for _, r := range m.rows {
		if r.ID == id {
			return r, true
		}
	}
	return RunRow{}, false
}

func (m Model) state(id string) *horizon.RunState {
	if c := m.states[id]; c != nil {
		return c.detail.State
	}
	return nil
}

func (m Model) needs() []Need {
	states := map[string]*horizon.RunState{}
	for id, c := range m.states {
		states[id] = c.detail.State
	}
	return Needs(m.rows, states, m.sups)
}

// clampNeeds keeps the need selection on the list as needs go away; once
// none is left, the focus goes back to the runs.
func (m *Model) clampNeeds() {
	n := len(m.needs())
	if m.needSel >= n {
		m.needSel = max(0, n-1)
	}
	if n == 0 {
		m.focus = paneRuns
	}
}

// key handles a key press: in a prompt, the prompt's keys only.
func (m Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if k.String() == "ctrl+c" {
		return m, tea.Quit
	}
	if m.prompt != nil {
		return m.promptKey(k)
	}
	if m.busy == "" {
		m.flash, m.bad = "", false // a key press puts the keys back
	}
	switch k.String() {
	case "q", "esc":
		return m, tea.Quit
	case "up", "k":
		m.move(-1)
	case "down", "j":
		m.move(1)
	case "tab":
		if m.focus == paneRuns && len(m.needs()) > 0 {
			m.focus = paneNeeds
		} else {
			m.focus = paneRuns
		}
		m.scroll = 0
	case "enter":
		if m.focus == paneNeeds {
			id := m.shownID()
			for i, r := range m.rows {
				if r.ID == id {
					m.runSel = i
				}
			}
			m.focus = paneRuns
		}
	case "pgdown", "J":
		m.scroll += max(1, m.detailHeight()-1)
	case "pgup", "K":
		m.scroll = max(0, m.scroll-max(1, m.detailHeight()-1))
	case "r":
		m.flash, m.bad = "", false
		var cmd tea.Cmd
		if !m.listing {
			m.listing = true
			cmd = m.list()
		}
		return m, tea.Batch(cmd, m.readShown(0))
	case "a":
		return m.ask(m.approval())
	case "u":
		return m.ask(m.unblock())
	case "s":
		return m.ask(m.skip())
	case "p":
		return m.pauseOrResume()
	case "x":
		return m.ask(m.cancel())
	default:
		return m, nil
	}
	return m, m.readShown(m.opts.SelectedEvery)
}

func (m *Model) move(d int) {
	if m.focus == paneNeeds {
		m.needSel = min(max(0, m.needSel+d), max(0, len(m.needs())-1))
	} else {
		m.runSel = min(max(0, m.runSel+d), max(0, len(m.rows)-1))
	}
	m.scroll = 0
}

// ask opens a prompt, or says why there is nothing to ask.
func (m Model) ask(p *prompt, why string) (tea.Model, tea.Cmd) {
	if p == nil {
		m.flash, m.bad = why, true
		return m, nil
	}
	if m.busy != "" {
		m.flash, m.bad = "wait: "+m.busy, true
		return m, nil
	}
	m.prompt, m.flash, m.bad = p, "", false
	return m, nil
}

// approval is the approval the a key asks for: the selected need's, or the
// shown run's checkpoint. The subject goes with it, so the engine refuses
// it once the run has moved on to another checkpoint.
func (m Model) approval() (*prompt, string) {
	if n := m.selectedNeed(); n != nil && n.Supervisor {
		return &prompt{verb: verbApproveQueued, runID: n.RunID, subject: n.Subject,
			question: fmt.Sprintf("approve queued plan %s of %s? y approves, n does not", n.Subject, n.RunID)}, ""
	}
	id := m.shownID()
	s := m.state(id)
	if s == nil || s.Waiting == nil || !m.isOpen(id) {
		return nil, fmt.Sprintf("%s is not waiting for approval", orNone(id))
	}
	w := s.Waiting
	return &prompt{verb: verbApprove, runID: id, subject: w.Subject,
		question: fmt.Sprintf("approve %s of %s? y approves, n does not", checkpoint(w), id)}, ""
}

// unblock is the unblock the u key asks a note for: the selected need's
// blocker, or the shown run's one blocked feature.
func (m Model) unblock() (*prompt, string) {
	id := m.shownID()
	if ns := m.needs(); m.focus == paneNeeds && m.needSel < len(ns) && ns[m.needSel].Kind == NeedBlocker {
		n := ns[m.needSel]
		return unblockPrompt(id, n.Subject), ""
	}
	var blocked []Need
	for _, n := range m.needs() {
		if n.RunID == id && n.Kind == NeedBlocker {
			blocked = append(blocked, n)
		}
	}
	switch len(blocked) {
	case 0:
		return nil, fmt.Sprintf("%s has nothing blocked", orNone(id))
	case 1:
		return unblockPrompt(id, blocked[0].Subject), ""
	}
	return nil, fmt.Sprintf("%s has %d blocked features: tab to NEEDS YOU and pick one", id, len(blocked))
}

func unblockPrompt(id, feature string) *prompt {
	what := id
	if feature != "" {
		what = feature + " of " + id
	}
	return &prompt{verb: verbUnblock, runID: id, subject: feature, note: true, help: noteHelp,
		question: fmt.Sprintf("unblock %s, what changed? ", what)}
}

// skip is the skip the s key asks about: the selected need's feature (a
// blocked or stalled one), else a feature of the shown planned run, which
// the person names. Only a feature not yet done can be left out.
func (m Model) skip() (*prompt, string) {
	id, feature := m.shownID(), ""
	if n := m.selectedNeed(); n != nil && !n.Supervisor && (n.Kind == NeedBlocker || n.Kind == NeedStalled) {
		feature = n.Subject
	}
	s := m.state(id)
	switch {
	case id == "" || !m.isOpen(id):
		return nil, fmt.Sprintf("%s is not running", orNone(id))
	case s == nil:
		return nil, fmt.Sprintf("%s is still being read; try again in a moment", id)
	case s.Plan == nil:
		return nil, fmt.Sprintf("%s has no planned features to skip (a one-feature run: x cancels it)", id)
	case feature == "":
		return &prompt{verb: verbSkip, runID: id, note: true, pick: true, help: pickHelp,
			question: fmt.Sprintf("skip which feature of %s? ", id)}, ""
	}
	if why := unskippable(s, feature); why != "" {
		return nil, why
	}
	return skipNotePrompt(id, feature), ""
}

// unskippable says why feature of s cannot be skipped, "" when it can:
// the engine refuses the same (an unknown feature, one done already).
func unskippable(s *horizon.RunState, feature string) string {
	if s == nil || s.Plan == nil {
		return "the run has no planned features to skip"
	}
	f, ok := s.Plan.Feature(feature)
	if !ok {
		return fmt.Sprintf("%s has no feature %q: name one of its plan tree (f3)", s.RunID, feature)
	}
	switch f.Status {
	case horizon.FeatureAccepted, horizon.FeatureDecomposed, horizon.FeatureSkipped:
		return fmt.Sprintf("feature %s is %s already; only a feature not yet done can be skipped", f.ID, f.Status)
	}
	return ""
}

func skipNotePrompt(id, feature string) *prompt {
	return &prompt{verb: verbSkip, runID: id, subject: feature, note: true, help: skipNoteHelp,
		question: fmt.Sprintf("skip %s of %s, why is it left out? ", feature, id)}
}

// skipConfirm asks y/n before a skip, with the note typed: leaving a
// feature out is not undone by a key.
func skipConfirm(p prompt) *prompt {
	return &prompt{verb: verbSkip, runID: p.runID, subject: p.subject, text: p.text,
		question: fmt.Sprintf("skip %s of %s? it is left out of the run for good, your note goes in the handoff; if it runs it is stopped first. y skips, n does not", p.subject, p.runID)}
}

// noteNeeded is why an empty note is not taken.
func (p prompt) noteNeeded() string {
	if p.verb == verbSkip {
		return "a note is needed: say why the feature is left out, the handoff shows it"
	}
	return "a note is needed: say what changed, the next attempt reads it"
}

func (m Model) cancel() (*prompt, string) {
	id := m.shownID()
	if id == "" || !m.isOpen(id) {
		return nil, fmt.Sprintf("%s is not running", orNone(id))
	}
	return &prompt{verb: verbCancel, runID: id,
		question: fmt.Sprintf("cancel %s? its session is aborted, nothing more is committed. y cancels, n does not", id)}, ""
}

func orNone(id string) string {
	if id == "" {
		return "no run"
	}
	return id
}

// pauseOrResume toggles the shown run at once: both are undone by the
// other, so neither asks.
func (m Model) pauseOrResume() (tea.Model, tea.Cmd) {
	id := m.shownID()
	if id == "" || !m.isOpen(id) {
		m.flash, m.bad = fmt.Sprintf("%s is not running", orNone(id)), true
		return m, nil
	}
	if m.busy != "" {
		m.flash, m.bad = "wait: "+m.busy, true
		return m, nil
	}
	v := verbPause
	if s := m.state(id); s != nil && s.Paused {
		v = verbResume
	}
	return m.do(&prompt{verb: v, runID: id})
}

// promptKey answers the open prompt.
func (m Model) promptKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	p := *m.prompt
	if !p.note {
		switch k.String() {
		case "y", "Y":
			m.prompt = nil
			return m.do(&p)
		case "n", "N", "esc", "q":
			m.prompt = nil
			m.flash, m.bad = "nothing done", false
		}
		return m, nil
	}
	switch k.String() {
	case "esc":
		m.prompt = nil
		m.flash, m.bad = "nothing done", false
	case "enter":
		text := strings.TrimSpace(p.text)
		switch {
		case p.pick && text == "":
			m.flash, m.bad = "name the feature to skip: its ID in the plan tree (f3)", true
			return m, nil
		case p.pick:
			if why := unskippable(m.state(p.runID), text); why != "" {
				m.flash, m.bad = why, true
				return m, nil
			}
			m.prompt, m.flash, m.bad = skipNotePrompt(p.runID, text), "", false
			return m, nil
		case text == "":
			m.flash, m.bad = p.noteNeeded(), true
			return m, nil
		case p.verb == verbSkip:
			m.prompt, m.flash, m.bad = skipConfirm(p), "", false
			return m, nil
		}
		m.prompt = nil
		return m.do(&p)
	case "backspace":
		if r := []rune(p.text); len(r) > 0 {
			p.text = string(r[:len(r)-1])
		}
		m.prompt, m.flash = &p, ""
	default:
		if k.Text != "" {
			p.text += k.Text
			m.prompt, m.flash = &p, ""
		}
	}
	return m, nil
}

// do runs a verb against the backend.
func (m Model) do(p *prompt) (tea.Model, tea.Cmd) {
	b, ctx, timeout := m.backend, m.ctx, m.opts.CallTimeout
	m.busy = fmt.Sprintf("%s %s…", p.verb, p.runID)
	m.flash, m.bad = m.busy, false
	return m, func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		out := verbMsg{verb: p.verb, runID: p.runID, subject: p.subject}
		switch p.verb {
		case verbApprove:
			out.state, out.err = b.Approve(c, core.ApproveRequest{Run: p.runID, Subject: p.subject})
		case verbApproveQueued:
			_, out.err = b.ApproveQueued(c, core.ApproveQueuedRequest{Supervisor: p.runID, Entry: p.subject})
		case verbUnblock:
			out.state, out.err = b.Unblock(c, core.UnblockRequest{Run: p.runID, Feature: p.subject, Note: p.text})
		case verbSkip:
			out.state, out.err = b.Skip(c, core.SkipRequest{Run: p.runID, Feature: p.subject, Note: p.text})
		case verbPause:
			out.state, out.err = b.Pause(c, p.runID)
		case verbResume:
			out.state, out.err = b.Resume(c, p.runID)
		case verbCancel:
			out.err = b.Cancel(c, p.runID)
		}
		out.at = time.Now()
		return out
	}
}

// done says what a verb did, in words.
func done(msg verbMsg) string {
	switch msg.verb {
	case verbApprove:
		return fmt.Sprintf("approved %s of %s; it goes on", msg.subject, msg.runID)
	case verbApproveQueued:
		return fmt.Sprintf("approved queued plan %s; %s runs it in its turn", msg.subject, msg.runID)
	case verbUnblock:
		if msg.subject != "" {
			return fmt.Sprintf("unblocked %s of %s; it is back in line with your note", msg.subject, msg.runID)
		}
		return fmt.Sprintf("unblocked %s; it goes on with your note", msg.runID)
	case verbSkip:
		return skipped(msg)
	case verbPause:
		return fmt.Sprintf("paused %s: it holds before its next attempt (p resumes)", msg.runID)
	case verbResume:
		return fmt.Sprintf("resumed %s", msg.runID)
	}
	return fmt.Sprintf("cancel requested for %s; it stops in the background", msg.runID)
}

// skipped says what a skip did: a feature that was not running is
// skipped at once, a running one once it has stopped; features that
// depend on it stay blocked.
func skipped(msg verbMsg) string {
	out := fmt.Sprintf("skipped %s of %s; the run goes on without it", msg.subject, msg.runID)
	s := msg.state
	if s == nil || s.Plan == nil {
		return out
	}
	if f, ok := s.Plan.Feature(msg.subject); ok && f.Status != horizon.FeatureSkipped {
		out = fmt.Sprintf("%s of %s is being stopped; it is skipped once it has", msg.subject, msg.runID)
	}
	if held := s.Plan.DependentsOf(msg.subject); len(held) > 0 {
		out += fmt.Sprintf("; still blocked on it: %s (skip them too, or they wait)", strings.Join(held, ", "))
	}
	return out
}

// verbDone says how a verb went and reads the run again.
func (m Model) verbDone(msg verbMsg) (tea.Model, tea.Cmd) {
	m.busy = ""
	m.now = later(m.now, msg.at)
	what := string(msg.verb)
	if msg.subject != "" {
		what += " " + msg.subject
	}
	if msg.err != nil {
		m.flash, m.bad = fmt.Sprintf("%s of %s refused: %v", what, msg.runID, msg.err), true
	} else {
		m.flash, m.bad = done(msg), false
		if msg.state != nil {
			if c := m.states[msg.runID]; c != nil {
				d := c.detail
				d.State = msg.state
				m.states[msg.runID] = &cached{detail: d, at: msg.at, open: c.open}
			}
		}
	}
	m.clampNeeds()
	if msg.verb == verbApproveQueued {
		// The supervisor is no run to read: the listing reads it again.
		if m.listing {
			return m, nil
		}
		m.listing = true
		return m, m.list()
	}
	if m.reading[msg.runID] {
		return m, nil
	}
	m.reading[msg.runID] = true
	return m, m.read(msg.runID)
}
