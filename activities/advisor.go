package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/horizon/horizon/advisor"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/horizon/textio"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/notify"
)

// AgentAdvisor is the watchdog's read-only OpenCode agent.
const AgentAdvisor = agent.AgentAdvisor

// AdviceSessions is what the watchdog needs of the agent runtime besides
// RunSession: to find, read, follow and deliver into the worker's
// session. *agent.Server has it; the daemon's lazy wrapper passes it on.
type AdviceSessions interface {
	FindSession(ctx context.Context, dir, title string) (string, error)
	Transcript(ctx context.Context, dir, sid string) ([]agent.Message, error)
	Follow(ctx context.Context, dir, sid string) <-chan struct{}
	Idle(ctx context.Context, dir, sid string) (bool, error)
	Deliver(ctx context.Context, dir, sid string, d agent.Delivery) error
}

// AdvisorSettings are the advisor.* keys the watchdog follows, captured
// when the run starts.
type AdvisorSettings struct {
	Enabled bool
	// Model is advisor.watchdog_model; empty: the auditor's (the
	// leaderboard's best analyze model).
	Model           string `json:",omitempty"`
	ReviewMode      string // step | idle
	ReviewInterval  int
	MaxToolSteps    int
	MaxNotes        int
	ImmuneTurns     int
	Timeout         time.Duration
	RequireEvidence bool
	// Delivery is advisor.delivery, by severity (nil: a blocker wakes,
	// the others are delivered).
	Delivery map[string]string `json:",omitempty"`
}

// AdvisorInput starts the watchdog of one worker session.
type AdvisorInput struct {
	RunID      string
	Feature    string
	Attempt    int
	Lane       string
	BaseCommit string
	// WorkerModel is the worker's model: the notes are posted with it and
	// the worker's agent, so the session's next step keeps both. The
	// worker's session is found by its title (SessionTitle).
	WorkerModel string
	// Model is the advisor's (local near a spend ceiling).
	Model string
	// Brief is the feature: the goal and its acceptance criteria.
	Brief string
	// Gate is the last gate receipt of the feature (the previous
	// attempt's), nil before the first.
	Gate     *horizon.GateRun `json:",omitempty"`
	Settings AdvisorSettings
	// Loop, for a `horizon loop` activation (Feature "loop", Attempt the
	// activation), is what sets that session apart from a worker's.
	Loop *AdvisorLoop `json:",omitempty"`
}

// AdvisorLoop is a loop activation the watchdog watches. The loop's
// session outlives the activation: it already holds the earlier ones, and
// the next one follows. So the watch begins at the activation's prompt
// (its marker) and carries the judge's state and the rolling summary from
// one activation to the next, as a worker's watchdog does within its
// session.
type AdvisorLoop struct {
	Title      string // the session's title (LoopSessionTitle)
	Turn       string // the activation's marker (horizon.LoopMarker)
	Activation int
	Max        int
	Carry      *AdvisorCarry `json:",omitempty"` // from the previous activation's watch
}

// AdvisorCarry is what a loop's watchdog hands the next activation's: the
// guard's memory and the circuit breaker (AdvisorState) and the rolling
// summary, so no note repeats and no second wake slips through between
// activations.
type AdvisorCarry struct {
	State   advisor.State
	Earlier []string `json:",omitempty"`
	Dropped int      `json:",omitempty"`
}

// AdvisorOutput is what the watchdog did.
type AdvisorOutput struct {
	Records []horizon.AdviceRecord
	Usage   horizon.Usage
	// WokeAfterReport: a blocker woke the worker after its final report;
	// the report that answers it replaces the old one.
	WokeAfterReport bool
	Transcript      string // the advice record on disk
	// Carry is for the next activation's watch of a loop (nil otherwise).
	Carry *AdvisorCarry `json:",omitempty"`
}

// AdvisorHeartbeat is the watchdog's durable progress: a retried activity
// (after a crash) goes on from it and, as deliveries are checked against
// the session itself, never delivers a note twice.
type AdvisorHeartbeat struct {
	Session    string
	Reviewed   string // ID of the last message a review covered
	Boundaries int    // turn boundaries seen
	LastReview int    // boundaries at the last review
	OwnTurns   int    // the worker's own prompts seen
	State      advisor.State
	Records    []horizon.AdviceRecord
	Usage      horizon.Usage
	Woke       bool // WokeAfterReport
	// Earlier is the rolling summary of the session's earlier reviews,
	// a line each (the newest maxEarlier); Dropped counts older ones.
	Earlier []string `json:",omitempty"`
	Dropped int      `json:",omitempty"`
}

// maxEarlier is how many earlier reviews the rolling summary names.
const maxEarlier = 12

// advisorPoll is how often the watchdog reads the session when no event
// woke it.
var advisorPoll = time.Second

// maxReviewDelta bounds the transcript delta a review reads.
const maxReviewDelta = 24000

// AdvisorWatch is the watchdog beside a worker session: at the session's
// turn boundaries (advisor.review_mode, every advisor.review_interval) it
// has the horizon-advisor agent review what the worker did, judges the
// notes (advisor package: fact check, guard, circuit breaker) and delivers
// what passes into the worker's session: nits and concerns without waking
// it, a blocker as a prompt. It ends once the worker's turn is over and
// reviewed. It is fail-open: a review that fails, times out or is
// rate-limited is recorded and skipped, and AdvisorWatch itself never
// fails the attempt (its errors are records, not errors).
func (a *Activities) AdvisorWatch(ctx context.Context, in AdvisorInput) (AdvisorOutput, error) {
	var hb AdvisorHeartbeat
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &hb)
	} else if l := in.Loop; l != nil && l.Carry != nil {
		hb.State, hb.Earlier, hb.Dropped = l.Carry.State, slices.Clone(l.Carry.Earlier), l.Carry.Dropped
	}
	w := &watchdog{a: a, in: in, hb: hb, log: activity.GetLogger(ctx)}
	w.out.Transcript = filepath.Join(a.runDir(in.RunID), "transcripts", adviceFile(in))
	w.heart = startHeartbeat(ctx, beatOptions{Details: w.hb})
	defer w.heart.Stop()
	ses, ok := a.Sessions.(AdviceSessions)
	if !ok {
		w.fail("this worker's agent runtime cannot be watched")
		return w.finish(), nil
	}
	w.ses = ses
	err := w.run(ctx)
	if err != nil && ctx.Err() == nil {
		w.fail("the watchdog stopped: " + err.Error())
	}
	return w.finish(), nil
}

// watchdog is one AdvisorWatch's state.
type watchdog struct {
	a     *Activities
	in    AdvisorInput
	ses   AdviceSessions
	hb    AdvisorHeartbeat
	out   AdvisorOutput
	heart *heartbeat
	log   interface {
		Info(string, ...any)
		Warn(string, ...any)
	}
}

func (w *watchdog) rules() advisor.Rules {
	s := w.in.Settings
	r := advisor.Rules{MaxNotes: s.MaxNotes, ImmuneTurns: s.ImmuneTurns, RequireEvidence: s.RequireEvidence}
	for sev, mode := range s.Delivery {
		if r.Delivery == nil {
			r.Delivery = map[horizon.Severity]string{}
		}
		r.Delivery[horizon.Severity(sev)] = mode
	}
	return r
}

// save heartbeats the progress and rewrites the advice record.
func (w *watchdog) save() {
	w.heart.Record(w.hb)
	if err := writeArtifact(w.out.Transcript, []byte(adviceMarkdown(w.in, w.hb.Records))); err != nil {
		w.log.Warn("advice record not written", "Error", err)
	}
}

func (w *watchdog) fail(why string) {
	w.hb.Records = append(w.hb.Records, w.hb.State.Failed(why))
	w.log.Warn("advisor review failed", "RunID", w.in.RunID, "Feature", w.in.Feature, "Attempt", w.in.Attempt, "Reason", why)
	w.save()
}

func (w *watchdog) finish() AdvisorOutput {
	w.out.Records, w.out.Usage, w.out.WokeAfterReport = w.hb.Records, w.hb.Usage, w.hb.Woke
	if w.in.Loop != nil {
		w.out.Carry = &AdvisorCarry{State: w.hb.State, Earlier: w.hb.Earlier, Dropped: w.hb.Dropped}
	}
	return w.out
}

// adviceFile is the advice record's name in the run's (or loop's)
// transcripts folder.
func adviceFile(in AdvisorInput) string {
	if in.Loop != nil {
		return fmt.Sprintf("loop-activation-%d-advice.md", in.Loop.Activation)
	}
	return fmt.Sprintf("%s-attempt-%d-advice.md", in.Feature, in.Attempt)
}

// turnName is the watched turn in words: "attempt 2" of a feature,
// "activation 3 of 5" of a loop.
func (in AdvisorInput) turnName() string {
	if l := in.Loop; l != nil {
		return fmt.Sprintf("activation %d of %d", l.Activation, l.Max)
	}
	return fmt.Sprintf("attempt %d", in.Attempt)
}

// kind is what the watched session works on: a feature, or a loop.
func (in AdvisorInput) kind() string {
	if in.Loop != nil {
		return "loop"
	}
	return "feature"
}

// transcript reads the watched session: for a loop, from the activation's
// prompt on (started is false until that prompt is in the session), since
// the earlier activations are not this watch's to review.
func (w *watchdog) transcript(ctx context.Context) (msgs []agent.Message, started bool, err error) {
	msgs, err = w.ses.Transcript(ctx, w.in.Lane, w.hb.Session)
	if err != nil || w.in.Loop == nil {
		return msgs, err == nil, err
	}
	for i, m := range msgs {
		if m.Role == "user" && m.Advice == "" && strings.Contains(m.Text, w.in.Loop.Turn) {
			return msgs[i:], true, nil
		}
	}
	return nil, false, nil
}

// run finds the worker's session, then reviews at its turn boundaries
// until the worker's turn is over.
func (w *watchdog) run(ctx context.Context) error {
	title := SessionTitle(w.in.RunID, w.in.Feature, w.in.Attempt, horizon.RoleWorker)
	if w.in.Loop != nil {
		title = w.in.Loop.Title
	}
	tick := time.NewTicker(advisorPoll)
	defer tick.Stop()
	for w.hb.Session == "" {
		sid, err := w.ses.FindSession(ctx, w.in.Lane, title)
		if err != nil && ctx.Err() == nil {
			w.log.Warn("advisor: list sessions", "Error", err)
		}
		if sid != "" {
			w.hb.Session = sid
			w.save()
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	if len(w.hb.Records) > 0 {
		// A watchdog resumed after a crash may hold notes it judged but
		// had not yet delivered: deliver them now (each only if the
		// session does not have it yet).
		ended := false
		if msgs, started, err := w.transcript(ctx); err == nil && started && turnEnded(msgs) {
			ended, _ = w.ses.Idle(ctx, w.in.Lane, w.hb.Session)
		}
		w.deliver(ctx, 0, ended)
	}
	wake := w.ses.Follow(ctx, w.in.Lane, w.hb.Session)
	for {
		done, err := w.step(ctx)
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-tick.C:
		}
	}
}

// step reads the session once and reviews if a review is due; done once
// the worker's turn is over and every boundary of it was reviewed.
func (w *watchdog) step(ctx context.Context) (done bool, err error) {
	msgs, started, err := w.transcript(ctx)
	if err != nil || !started {
		return false, err // a loop's activation not prompted yet
	}
	w.note(msgs)
	ended := turnEnded(msgs)
	if ended {
		// Status confirms the loop really stopped (a step that ended
		// with text may still be followed by another).
		idle, err := w.ses.Idle(ctx, w.in.Lane, w.hb.Session)
		if err != nil {
			return false, err
		}
		ended = idle
	}
	due := w.hb.Boundaries-w.hb.LastReview >= max(w.in.Settings.ReviewInterval, 1)
	if ended && w.hb.Boundaries > w.hb.LastReview {
		due = true // the rest of the turn, however short of the interval
	}
	if due {
		w.review(ctx, msgs, ended)
	}
	if !ended {
		return false, nil
	}
	if w.hb.Woke {
		w.awaitWake(ctx)
	}
	return true, nil
}

// awaitWake waits (briefly) until the worker took up the blocker that
// woke it after its report, so the session activity that then waits for
// the new report finds the turn under way, not an unanswered prompt.
func (w *watchdog) awaitWake(ctx context.Context) {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if idle, err := w.ses.Idle(ctx, w.in.Lane, w.hb.Session); err == nil && !idle {
			return
		}
		if msgs, _, err := w.transcript(ctx); err == nil && len(msgs) > 0 && msgs[len(msgs)-1].Role == "assistant" && msgs[len(msgs)-1].Advice == "" {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// note counts the session's turn boundaries and the worker's own turns
// and tells the circuit breaker about them.
func (w *watchdog) note(msgs []agent.Message) {
	own, bounds := 0, 0
	for _, m := range msgs {
		switch {
		case m.Advice != "":
		case m.Role == "user":
			own++
		case m.Role == "assistant" && m.Completed:
			switch w.in.Settings.ReviewMode {
			case "idle":
				if m.Finish == "tool-calls" || m.Finish == "" {
					continue
				}
			case "execution":
				if !editedFiles(m.Tools) {
					continue
				}
			}
			bounds++
		}
	}
	for ; w.hb.OwnTurns < own; w.hb.OwnTurns++ {
		w.hb.State.Breaker.OwnTurn()
	}
	for ; w.hb.Boundaries < bounds; w.hb.Boundaries++ {
		w.hb.State.Breaker.Turn()
	}
}

// fileTools are the worker's tools that change files; a step that ran
// one is a boundary in the execution review mode. The shell may change
// files too, but says nothing of which: it does not count.
var fileTools = []string{"edit", "write", "patch", "multiedit", "apply_patch"}

// editedFiles reports whether a step's tools include one that changes
// files.
func editedFiles(tools []string) bool {
	return slices.ContainsFunc(tools, func(t string) bool { return slices.Contains(fileTools, t) })
}

// turnEnded reports whether the worker's last turn is over: the last
// message other than a note is a finished assistant step.
func turnEnded(msgs []agent.Message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Advice != "" && !m.Wake {
			continue
		}
		return m.Role == "assistant" && m.Completed && m.Finish != "tool-calls" && m.Finish != ""
	}
	return false
}

// review runs one advisor session over the delta since the last review,
// judges its notes and delivers what passes. A failure is recorded and
// drops the delta (fail-open).
func (w *watchdog) review(ctx context.Context, msgs []agent.Message, ended bool) {
	delta, last := reviewDelta(msgs, w.hb.Reviewed)
	steps := deltaSteps(msgs, w.hb.Reviewed)
	diags := changedDiagnostics(msgs, w.hb.Reviewed, w.in.Lane)
	w.hb.Reviewed, w.hb.LastReview = last, w.hb.Boundaries
	s := w.in.Settings
	n := w.hb.State.Reviews + 1
	prompt := reviewPrompt(ctx, w.in, n, delta, diags, w.earlier())
	defer func() { w.remember(n, steps) }()
	rctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	rctx, stop := context.WithCancelCause(rctx)
	defer stop(nil)
	tools := 0
	lastTool := ""
	res, err := w.a.Sessions.RunSession(rctx, agent.SessionRequest{
		Directory: w.in.Lane, Agent: AgentAdvisor, Model: w.in.Model, Prompt: prompt,
		Title: fmt.Sprintf("horizon %s %s %s (advisor review %d)", w.in.RunID, w.in.Feature, w.in.turnName(), n),
	}, func(p agent.Progress) {
		// OpenCode holds the review to advisor.max_tool_steps rounds (the
		// agent's steps); this is the backstop for a runaway that calls
		// tool after tool, counted loosely (one round may run several).
		if p.Phase == "tool" && p.Tool != "" && p.Tool != lastTool {
			tools++
			if tools > 4*(s.MaxToolSteps+1) {
				stop(fmt.Errorf("the review used more than advisor.max_tool_steps (%d) tool rounds", s.MaxToolSteps))
			}
		}
		lastTool = p.Tool
	})
	usage := horizon.Usage{Input: res.Usage.Input, Output: res.Usage.Output, Reasoning: res.Usage.Reasoning,
		CacheRead: res.Usage.CacheRead, CacheWrite: res.Usage.CacheWrite, Cost: res.Usage.Cost}
	w.hb.Usage = w.hb.Usage.Add(usage)
	if serr := w.a.recordSpend(w.in.RunID, fmt.Sprintf("%s/%s/%d/advisor/%d", w.in.RunID, w.in.Feature, w.in.Attempt, n), usage.Cost); serr != nil {
		w.log.Warn("advisor spend not recorded", "Error", serr)
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return // the activity ends; its retry reviews again
		case context.Cause(rctx) != nil && !errors.Is(context.Cause(rctx), context.Canceled) && !errors.Is(context.Cause(rctx), context.DeadlineExceeded):
			w.fail(context.Cause(rctx).Error())
		case rctx.Err() != nil:
			w.fail(fmt.Sprintf("the review timed out after advisor.timeout (%s)", s.Timeout))
		default:
			w.fail("the review failed: " + oneLine(err.Error(), 300))
		}
		return
	}
	if rounds := w.rounds(ctx, res.SessionID); rounds > s.MaxToolSteps {
		w.fail(fmt.Sprintf("the review used %d tool rounds, more than advisor.max_tool_steps (%d)", rounds, s.MaxToolSteps))
		return
	}
	adv, _, perr := agent.ParseAdvice(res.Text)
	if perr != nil {
		w.fail("the review gave no valid advice: " + perr.Error())
		return
	}
	recs := w.hb.State.Judge(w.rules(), adv, laneFiles(w.in.Lane))
	if err := boundAdvice(w.a.runDir(w.in.RunID), w.in, recs); err != nil {
		// Bounded all the same (the rest of a note is lost, not kept in
		// history): the watchdog is fail-open.
		w.log.Warn("advice note not kept in full", "Error", err)
	}
	at := time.Now()
	for i := range recs {
		if recs[i].Reached() {
			recs[i].Message = agent.AdviceMessageID(fmt.Sprintf("%s/%s/%d/%s", w.in.RunID, w.in.Feature, w.in.Attempt, recs[i].ID), at)
		}
	}
	// Judged and named before any delivery: a crash from here on finds
	// the notes in the heartbeat, and each delivery is checked against
	// the session, so none is given twice.
	w.hb.Records = append(w.hb.Records, recs...)
	w.save()
	if slices.ContainsFunc(recs, horizon.AdviceRecord.Reached) {
		holdBeforeDelivery(ctx)
	}
	w.deliver(ctx, len(w.hb.Records)-len(recs), ended)
}

// rounds counts the tool rounds of a finished review: its model steps
// that called tools (0 when the session cannot be read).
func (w *watchdog) rounds(ctx context.Context, sid string) int {
	if sid == "" {
		return 0
	}
	msgs, err := w.ses.Transcript(ctx, w.in.Lane, sid)
	if err != nil {
		return 0
	}
	n := 0
	for _, m := range msgs {
		if m.Role == "assistant" && len(m.Tools) > 0 {
			n++
		}
	}
	return n
}

// holdBeforeDelivery lets an end-to-end test stop the daemon between a
// review's judgement and its delivery, the moment the exactly-once
// delivery is about: with HORIZON_TEST_ADVICE_HOLD naming a file, the
// watchdog creates "<file>.reached" and waits until the file exists.
func holdBeforeDelivery(ctx context.Context) {
	hold := os.Getenv("HORIZON_TEST_ADVICE_HOLD")
	if hold == "" {
		return
	}
	_ = os.WriteFile(hold+".reached", nil, 0o644)
	for ctx.Err() == nil {
		if _, err := os.Stat(hold); err == nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// deliver puts the judged notes from index from on into the session.
func (w *watchdog) deliver(ctx context.Context, from int, ended bool) {
	have, err := w.ses.Transcript(ctx, w.in.Lane, w.hb.Session)
	if err != nil {
		have = nil
	}
	given := map[string]bool{}
	for _, m := range have {
		if m.Advice != "" {
			given[m.Advice] = true
		}
	}
	for i := from; i < len(w.hb.Records); i++ {
		r := &w.hb.Records[i]
		if !r.Reached() {
			continue
		}
		if given[r.ID] {
			// Delivered before a crash that lost the heartbeat saying so.
			if r.Woke && ended {
				w.hb.Woke = true
			}
			continue
		}
		err := w.ses.Deliver(ctx, w.in.Lane, w.hb.Session, agent.Delivery{
			MessageID: r.Message, NoteID: r.ID, Text: adviceText(*r), Wake: r.Woke,
			Agent: agent.AgentWorker, Model: w.in.WorkerModel,
		})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			r.Verdict, r.Reason, r.Woke = horizon.AdviceFailed, "delivery failed: "+oneLine(err.Error(), 300), false
			continue
		}
		if r.Woke && ended {
			w.hb.Woke = true
		}
		w.log.Info("advisor note delivered", "RunID", w.in.RunID, "Feature", w.in.Feature, "Attempt", w.in.Attempt, "Note", r.ID, "Severity", r.Delivered, "Woke", r.Woke)
		w.tellPerson(ctx, *r)
	}
	w.save()
}

// tellPerson sends a concern the fact check confirmed, delivered to the
// worker, to the notification receivers too: once per feature (the
// run's advisor-notified.jsonl holds who was told), so a feature's
// attempts do not repeat it. Blockers reach a person as the feature's
// blocker; nits never do.
func (w *watchdog) tellPerson(ctx context.Context, r horizon.AdviceRecord) {
	if r.Delivered != horizon.SeverityConcern || !r.Confirmed || w.a.Notifier == nil {
		return
	}
	key := w.in.RunID + "/" + w.in.Feature
	line, _ := json.Marshal(map[string]string{"key": key, "note": r.ID, "attempt": strconv.Itoa(w.in.Attempt)})
	appended, err := textio.AppendOnce(filepath.Join(w.a.runDir(w.in.RunID), "advisor-notified.jsonl"), 0o644, line, func(old []byte) bool {
		var o struct{ Key string }
		return json.Unmarshal(old, &o) == nil && o.Key == key
	})
	if err != nil || !appended {
		if err != nil {
			w.log.Warn("advisor concern not sent to a person", "Error", err)
		}
		return
	}
	where := ""
	if e := r.Evidence; e != nil && e.File != "" {
		where = e.File
		if e.Line > 0 {
			where += ":" + strconv.Itoa(e.Line)
		}
		where = " (" + where + ")"
	}
	w.a.send(ctx, NotifyInput{
		Kind: notify.AdvisorConcern, RunID: w.in.RunID, Subject: w.in.Feature,
		Text:    fmt.Sprintf("The advisor told the worker of %s, %s: %s%s. Its evidence was checked in the lane. Further concerns on this %s are not sent.", w.in.Feature, w.in.turnName(), r.Note, where, w.in.kind()),
		Details: map[string]string{"feature": w.in.Feature, "attempt": strconv.Itoa(w.in.Attempt), "note": r.ID},
	})
}

// reviewDelta is the transcript since the message after, without the
// advisor's own messages, as text for the review; last is the newest
// message ID it covers.
func reviewDelta(msgs []agent.Message, after string) (string, string) {
	var b strings.Builder
	last := after
	for _, m := range msgs {
		if after != "" && m.ID <= after {
			continue
		}
		last = m.ID
		if m.Advice != "" {
			continue // the advisor never reviews advice
		}
		text := strings.TrimSpace(m.Text)
		if text == "" && len(m.Tools) == 0 {
			continue
		}
		fmt.Fprintf(&b, "### %s", m.Role)
		if len(m.Tools) > 0 {
			fmt.Fprintf(&b, " (tools: %s)", strings.Join(m.Tools, ", "))
		}
		b.WriteString("\n\n")
		if text != "" {
			b.WriteString(text)
			b.WriteString("\n\n")
		}
	}
	d := b.String()
	if len(d) > maxReviewDelta {
		d = "…[earlier part of the delta cut]\n" + d[len(d)-maxReviewDelta:]
	}
	if strings.TrimSpace(d) == "" {
		d = "(nothing new)"
	}
	return d, last
}

// earlier is the rolling summary for the next review's brief.
func (w *watchdog) earlier() []string {
	if len(w.hb.Earlier) == 0 {
		return nil
	}
	out := slices.Clone(w.hb.Earlier)
	if w.hb.Dropped > 0 {
		out = append([]string{fmt.Sprintf("(%d earlier reviews not listed)", w.hb.Dropped)}, out...)
	}
	return out
}

// remember adds review n to the rolling summary: what the worker did in
// its delta (steps) and what became of the review's notes.
func (w *watchdog) remember(n int, steps string) {
	var notes []string
	for _, r := range w.hb.Records {
		if r.Review != n || r.Note == "" {
			continue
		}
		v := string(r.Verdict)
		if r.Reached() {
			v += " as " + string(r.Delivered)
		}
		notes = append(notes, fmt.Sprintf("%s %q", v, textio.Runes(r.Note, 80)))
	}
	line := fmt.Sprintf("review %d: %s", n, steps)
	if len(notes) > 0 {
		line += "; your notes: " + strings.Join(notes, ", ")
	} else if slices.ContainsFunc(w.hb.Records, func(r horizon.AdviceRecord) bool { return r.Review == n && r.Verdict == horizon.AdviceFailed }) {
		line += "; the review failed"
	} else {
		line += "; no notes"
	}
	w.hb.Earlier = append(w.hb.Earlier, line)
	if len(w.hb.Earlier) > maxEarlier {
		w.hb.Dropped += len(w.hb.Earlier) - maxEarlier
		w.hb.Earlier = w.hb.Earlier[len(w.hb.Earlier)-maxEarlier:]
	}
}

// deltaSteps is what the worker did since the message after, in words:
// "3 steps (tools: edit ×2, read)".
func deltaSteps(msgs []agent.Message, after string) string {
	steps := 0
	count := map[string]int{}
	var order []string
	for _, m := range msgs {
		if (after != "" && m.ID <= after) || m.Advice != "" || m.Role != "assistant" {
			continue
		}
		steps++
		for _, t := range m.Tools {
			if count[t] == 0 {
				order = append(order, t)
			}
			count[t]++
		}
	}
	out := horizon.Plural(steps, "step")
	var tools []string
	for _, t := range order {
		if count[t] > 1 {
			tools = append(tools, fmt.Sprintf("%s ×%d", t, count[t]))
		} else {
			tools = append(tools, t)
		}
	}
	if len(tools) > 0 {
		out += " (tools: " + strings.Join(tools, ", ") + ")"
	}
	return out
}

// reviewPrompt is a review's brief: the feature, facts horizon measured
// (the lane's diff stat, the last gate's failing set, the language
// servers' diagnostics of the files changed since the last review), the
// rolling summary of earlier reviews (earlier) and the delta.
func reviewPrompt(ctx context.Context, in AdvisorInput, n int, delta string, diags []fileDiagnostics, earlier []string) string {
	var b strings.Builder
	if in.Loop != nil {
		// A loop has a goal, not a feature, and its session goes on
		// across activations.
		fmt.Fprintf(&b, "Review %d of the worker's session on loop %s (%s).\n\n## The goal\n\n%s\n\n## Facts horizon measured\n\n", n, in.RunID, in.turnName(), strings.TrimSpace(in.Brief))
	} else {
		fmt.Fprintf(&b, "Review %d of the worker's session on feature %s (attempt %d).\n\n## The feature\n\n%s\n\n## Facts horizon measured\n\n", n, in.Feature, in.Attempt, strings.TrimSpace(in.Brief))
	}
	stat, err := git(ctx, in.Lane, append([]string{"diff", "--stat", in.BaseCommit, "--", "."}, excluded...)...)
	switch {
	case err != nil:
		fmt.Fprintf(&b, "- diff stat: unavailable (%s)\n", oneLine(err.Error(), 300))
	case strings.TrimSpace(stat) == "":
		b.WriteString("- diff stat: no tracked file changed yet\n")
	default:
		fmt.Fprintf(&b, "- diff stat against the base commit:\n\n```\n%s\n```\n", lastBytes(stat, 4000))
	}
	if g := in.Gate; g != nil {
		fmt.Fprintf(&b, "- last gate (previous %s): %s", strings.Fields(in.turnName())[0], g.Verdict)
		if len(g.Failing) > 0 {
			fmt.Fprintf(&b, "; failing: %s", strings.Join(g.Failing, ", "))
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, "- no gate has run on this %s yet\n", in.kind())
	}
	writeDiagnostics(&b, diags)
	if len(earlier) > 0 {
		b.WriteString("\n## Earlier in this session\n\nA summary of your earlier reviews; the worker's messages they covered are not repeated below.\n\n")
		for _, l := range earlier {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	fmt.Fprintf(&b, "\n## What the worker did since your last review\n\n%s\nEnd with the horizon-advice block.\n", delta)
	return b.String()
}

// adviceText is a delivered note as the worker reads it; its first line
// is the tag every advisor message carries.
func adviceText(r horizon.AdviceRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s · %s %s]\n%s\n", agent.AdvicePrefix, r.Delivered, r.ID, r.Note)
	if e := r.Evidence; e != nil && e.File != "" {
		fmt.Fprintf(&b, "Evidence: %s", e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		fmt.Fprintf(&b, " — %s\n", e.ObservedFact)
	}
	if r.SuggestedPatch != "" {
		fmt.Fprintf(&b, "Suggested patch:\n```\n%s\n```\n", r.SuggestedPatch)
	}
	if r.Woke {
		b.WriteString("This is a blocker: reconsider before you go on. If you disagree, say why. End your reply with the horizon-report block, as before.\n")
	} else {
		b.WriteString("Advice from a reviewer watching your session; weigh it, no reply needed.\n")
	}
	return b.String()
}

// laneFiles reads lane files for the fact check: regular files inside the
// lane (symlinks resolved), at most 2 MB.
func laneFiles(lane string) advisor.Files {
	root, err := filepath.EvalSymlinks(lane)
	if err != nil {
		root = lane
	}
	return func(rel string) (string, bool) {
		p, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil || (p != root && !strings.HasPrefix(p, root+string(filepath.Separator))) {
			return "", false
		}
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > 2<<20 {
			return "", false
		}
		b, err := os.ReadFile(p)
		return string(b), err == nil
	}
}

// adviceMarkdown is the attempt's advice record in its transcript folder.
func adviceMarkdown(in AdvisorInput, recs []horizon.AdviceRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s · %s · %s · advice\n\nadvisor model `%s` · %s\n\n", in.RunID, in.Feature, in.turnName(), in.Model, horizon.AdviceSummary(recs))
	for _, r := range recs {
		fmt.Fprintf(&b, "- **%s** %s", r.ID, r.Verdict)
		if r.Severity != "" {
			fmt.Fprintf(&b, " · %s", r.Severity)
			if r.Delivered != "" && r.Delivered != r.Severity {
				fmt.Fprintf(&b, " → %s", r.Delivered)
			}
		}
		if r.Woke {
			b.WriteString(" · woke the worker")
		}
		if r.Note != "" {
			fmt.Fprintf(&b, ": %s", oneLine(r.Note, 300))
		}
		if r.Reason != "" {
			fmt.Fprintf(&b, " (%s)", r.Reason)
		}
		b.WriteString("\n")
	}
	js, _ := json.MarshalIndent(recs, "", "  ")
	fmt.Fprintf(&b, "\n```json\n%s\n```\n", js)
	return b.String()
}

// SessionTitle is the title of a run's session in OpenCode, by which the
// watchdog finds the worker's.
func SessionTitle(runID, feature string, attempt int, role horizon.Role) string {
	return fmt.Sprintf("horizon %s %s attempt %d (%s)", runID, feature, attempt, role)
}
