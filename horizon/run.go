package horizon

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/horizon/horizon/horizon/vocab"
)

// Status is a run's lifecycle state as scripts see it.
type Status string

// Run statuses.
const (
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusBlocked   Status = "blocked"
	StatusCancelled Status = "cancelled"
)

// Terminal reports whether the run has ended.
func (s Status) Terminal() bool { return s != StatusRunning && s != "" }

// Phase is what a running run is doing now.
type Phase string

// Phases of the verified-change loop.
const (
	PhasePreflight Phase = "preflight"
	PhaseLane      Phase = "preparing lane"
	PhaseBaseline  Phase = "baseline gate"
	PhaseWorking   Phase = "worker"
	PhaseGate      Phase = "gate"
	PhaseAudit     Phase = "auditor"
	PhaseCommit    Phase = "committing"
	PhaseDone      Phase = "done"
	PhasePaused    Phase = "paused"
	PhasePlanning  Phase = "planning"
	PhaseFeatures  Phase = "features"
	PhaseApproval  Phase = "waiting for approval"
	PhaseBlocked   Phase = "blocked"
	PhaseFinalGate Phase = "integration gate"
	// PhaseBackoff: a stalled feature waits before its next attempt
	// (StallPolicy); the reason says until when.
	PhaseBackoff Phase = "backing off"
)

// ReasonKind classifies why a run ended other than completed.
type ReasonKind string

// Reasons a run ends without an accepted change.
const (
	ReasonBadInput    ReasonKind = "bad_input"
	ReasonMaxAttempts ReasonKind = "max_attempts"
	ReasonBlocked     ReasonKind = "blocked"
	ReasonCancelled   ReasonKind = "cancelled"
	ReasonError       ReasonKind = "error"
	// ReasonBudget: the run-level budget (time or spend) ran out, the one
	// hard stop of a planned run.
	ReasonBudget ReasonKind = "budget"
	// ReasonIntegration: every feature was accepted but the gate on the
	// integration branch kept failing after its repair features.
	ReasonIntegration ReasonKind = "integration"
)

// Outcome is how one attempt ended (vocab.Outcome).
type Outcome = vocab.Outcome

// Attempt outcomes. Only OutcomeAccepted means the change is in.
const (
	OutcomeAccepted      = vocab.OutcomeAccepted
	OutcomeGateFailed    = vocab.OutcomeGateFailed
	OutcomeRejected      = vocab.OutcomeRejected
	OutcomeProtocolError = vocab.OutcomeProtocolError
	OutcomeBlocked       = vocab.OutcomeBlocked
	OutcomeRunning       = vocab.OutcomeRunning
	OutcomeRetrieved     = vocab.OutcomeRetrieved // a retrieval step finished
)

// Usage is what the model calls of a session cost.
type Usage struct {
	Input      int64   `json:"input"`
	Output     int64   `json:"output"`
	Reasoning  int64   `json:"reasoning,omitempty"`
	CacheRead  int64   `json:"cache_read,omitempty"`
	CacheWrite int64   `json:"cache_write,omitempty"`
	Cost       float64 `json:"cost"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		Input: u.Input + o.Input, Output: u.Output + o.Output, Reasoning: u.Reasoning + o.Reasoning,
		CacheRead: u.CacheRead + o.CacheRead, CacheWrite: u.CacheWrite + o.CacheWrite, Cost: u.Cost + o.Cost,
	}
}

// Tokens is input + output + reasoning.
func (u Usage) Tokens() int64 { return u.Input + u.Output + u.Reasoning }

// GateRun summarises one gate run in the lane. Its receipt (the full record,
// appended to the run's receipts.jsonl) is referenced by ReceiptID: the ID
// travels through the workflow, never a verdict a model wrote.
type GateRun struct {
	ReceiptID    string   `json:"receipt_id,omitempty"`
	Verdict      string   `json:"verdict"` // pass | fail | timeout | error
	ExitCode     int      `json:"exit_code"`
	DurationMS   int64    `json:"duration_ms"`
	Command      string   `json:"command"`
	Tail         string   `json:"tail,omitempty"` // last lines of output, the evidence a next attempt gets
	Failing      []string `json:"failing,omitempty"`
	FailingKnown bool     `json:"failing_known"`           // false: the output's format was not recognised
	Snapshot     string   `json:"snapshot,omitempty"`      // commit object of the lane state that was gated
	Tree         string   `json:"tree,omitempty"`          // its tree: equal trees are identical diffs
	ChangedFiles []string `json:"changed_files,omitempty"` // against the base commit
	ChangedLines int      `json:"changed_lines,omitempty"`
	Note         string   `json:"note,omitempty"` // e.g. "gate script edited by the worker was restored"
	// Reverted are the worker's changes to protected paths (gate.protected
	// and the gate script) that were undone before the gate ran: out of
	// scope, never judged, never committed.
	Reverted []string `json:"reverted,omitempty"`
	// Vanished are tests that failed at baseline and did not appear in
	// this run's results, passing or failing: deleting a failing test is
	// not a way to pass (vanished_tests). Judged refuses such a run.
	Vanished []string `json:"vanished,omitempty"`
	// VanishedGreen are tests that passed at baseline and did not appear
	// in this run: evidence the auditor must address.
	VanishedGreen []string `json:"vanished_green,omitempty"`
	// PassingUnknown says the gate's output names no passing tests, so a
	// test's absence could only be judged from the sources (see Vanished).
	PassingUnknown bool `json:"passing_unknown,omitempty"`
	// Parts are the parts of a gate made of several (the gate script,
	// gate.test_command, gate.lint_command), each judged on its own; nil
	// for a gate of one script or command, and in runs recorded before.
	// Then Verdict passes only when every part passed, ExitCode is the
	// first failed part's, and Tail and Failing are the test parts' only:
	// the lint step's findings are in its own part, never in the failing
	// test set.
	Parts []GatePart `json:"parts,omitempty"`
}

// GatePart is one part of a gate made of several, with its own verdict
// and evidence.
type GatePart struct {
	Name       GatePartName `json:"name"` // script | test | lint
	Command    string       `json:"command"`
	Verdict    string       `json:"verdict"` // pass | fail | timeout | error
	ExitCode   int          `json:"exit_code"`
	DurationMS int64        `json:"duration_ms"`
	// Tail is the end of the part's output (and its error), kept only
	// when it did not pass: the evidence a next attempt gets.
	Tail    string   `json:"tail,omitempty"`
	Failing []string `json:"failing,omitempty"` // the part's own failing set
}

// Passed reports whether the part exited 0.
func (p GatePart) Passed() bool { return p.Verdict == "pass" }

// Trigger is an escalation signal computed from artifacts (receipts,
// diffs), never from what a model said.
type Trigger struct {
	Kind     string   `json:"kind"`
	Evidence []string `json:"evidence,omitempty"`
	Detail   string   `json:"detail"`
}

// Passed is true only for an exit-0 gate with no vanished test (Judged).
func (g *GateRun) Passed() bool { ok, _ := g.Judged(); return ok }

// Attempt is one pass through worker → gate → auditor, or a retrieval
// step (Action "retrieve": a read-only agent gathers context; no change,
// no gate).
type Attempt struct {
	N              int      `json:"n"`
	Action         string   `json:"action,omitempty"`   // "" (an attempt) or "retrieve"
	Tier           string   `json:"tier,omitempty"`     // T0…T4 of the routing ladder
	Applier        string   `json:"applier,omitempty"`  // ast-grep, opencode, reader+opencode
	Route          string   `json:"route,omitempty"`    // why the ladder chose this tier
	Guidance       string   `json:"guidance,omitempty"` // a reader's diagnosis or retrieved context
	Strategy       Strategy `json:"strategy,omitempty"` // the recovery strategy of a planned feature's attempt
	Model          string   `json:"model"`
	WorkerSession  string   `json:"worker_session,omitempty"`
	AuditorSession string   `json:"auditor_session,omitempty"`
	// AuditorModel is the model the auditor's session ran on: its role's
	// model, or a local one near a spend ceiling.
	AuditorModel  string   `json:"auditor_model,omitempty"`
	Resumed       bool     `json:"resumed,omitempty"` // a session continued after a crash
	Report        *Report  `json:"report,omitempty"`
	ProtocolError string   `json:"protocol_error,omitempty"`
	Gate          *GateRun `json:"gate,omitempty"`
	Audit         *Audit   `json:"audit,omitempty"`
	// Criteria is the audit's per-criterion receipt against the feature's
	// acceptance criteria (Receipt); Dispositions what was decided about
	// each of its findings and unmet criteria (Rule, the lead).
	Criteria     []CriterionRating `json:"criteria,omitempty"`
	Dispositions []Disposition     `json:"dispositions,omitempty"`
	Triggers     []Trigger         `json:"triggers,omitempty"`
	Outcome      Outcome           `json:"outcome"`
	Usage        Usage             `json:"usage"`
	StartedAt    time.Time         `json:"started_at"`
	EndedAt      time.Time         `json:"ended_at,omitzero"`

	// Moved records sessions that could not follow a lost worker and were
	// started afresh on another: "session moved: old → new (worker W lost)".
	Moved []string `json:"moved,omitempty"`

	// Consults are the worker's calls to the consult_advisor tool; their
	// cost is part of Usage.
	Consults []Consult `json:"consults,omitempty"`
	// Advice is every note the advisor's watchdog gave during the
	// attempt's worker session, with what became of it, in review order.
	Advice []AdviceRecord `json:"advice,omitempty"`
	// Asked are the questions the worker asked and the tool calls its
	// permissions denied (NewAsks bounds them); AskBlocker reads them.
	Asked []Ask `json:"asked,omitempty"`
	// AlreadyDone marks an accepted attempt that changed no file: what it
	// was asked for was already on the branch, as its gate receipt and
	// audit show, so the feature is done with no commit of its own.
	AlreadyDone bool `json:"already_done,omitempty"`
	// Research is what the researcher found before the worker of an
	// attempt under the research strategy: its notes' file and sources.
	Research *ResearchNote `json:"research,omitempty"`
}

// OutcomeCell is the attempt's outcome, with "already done" for an
// accepted attempt that had nothing to commit.
func (a Attempt) OutcomeCell() string {
	if a.AlreadyDone {
		return string(a.Outcome) + " (already done)"
	}
	return string(a.Outcome)
}

// RunState is the whole observable state of a run, returned by the status
// query and carried in the workflow's result or failure details.
type RunState struct {
	RunID       string          `json:"run_id"`
	Goal        string          `json:"goal"`
	Repo        string          `json:"repo"`
	BaseRef     string          `json:"base_ref,omitempty"`
	BaseCommit  string          `json:"base_commit"`
	Branch      string          `json:"branch"`
	Feature     string          `json:"feature"`
	LaneBranch  string          `json:"lane_branch,omitempty"`
	Lane        string          `json:"lane,omitempty"`
	Model       string          `json:"model"`            // the worker's
	Models      map[Role]string `json:"models,omitempty"` // role → provider/model
	MaxAttempts int             `json:"max_attempts"`
	Status      Status          `json:"status"`
	Phase       Phase           `json:"phase"`
	Reason      string          `json:"reason,omitempty"`
	ReasonKind  ReasonKind      `json:"reason_kind,omitempty"`
	Blocker     *Blocker        `json:"blocker,omitempty"`
	Commit      string          `json:"commit,omitempty"`
	Baseline    *GateRun        `json:"baseline,omitempty"` // the gate on the base commit, before any change
	Handoff     string          `json:"handoff,omitempty"`  // path of handoff.md, written when the run ends
	Paused      bool            `json:"paused,omitempty"`   // held by `horizon pause` before its next attempt
	Attempts    []Attempt       `json:"attempts"`
	Usage       Usage           `json:"usage"`
	Ceiling     float64         `json:"ceiling,omitempty"`     // spend ceiling in USD, 0: none
	DayCeiling  float64         `json:"day_ceiling,omitempty"` // all runs' spend per UTC day, 0: none
	DaySpent    float64         `json:"day_spent,omitempty"`   // today's spend across runs, as last read
	StartedAt   time.Time       `json:"started_at"`
	UpdatedAt   time.Time       `json:"updated_at"`

	// Gate is the run's gate as decided on the base commit; every gate run
	// restores and runs exactly that.
	Gate *GateRecord `json:"gate_record,omitempty"`

	// Planned runs (horizon start without --single) also carry:

	// Plan is the lead's plan with every feature's attempts, receipts and
	// status; nil for a single-feature run (whose attempts are Attempts).
	Plan     *Plan    `json:"plan,omitempty"`
	Autonomy Autonomy `json:"autonomy,omitempty"`
	// Waiting is the checkpoint the run waits at for `horizon approve`.
	Waiting *Checkpoint `json:"waiting,omitempty"`
	// Budget is the run's hard stop in time and spend.
	Budget *Budget `json:"budget,omitempty"`
	// Integration is the last gate run on the integration branch, after
	// every feature was accepted.
	Integration *GateRun `json:"integration,omitempty"`
	// Decisions counts the decisions recorded in decisions.jsonl.
	Decisions int `json:"decisions,omitempty"`
	// Histories counts the workflow histories the run has spanned
	// (continue-as-new starts a fresh one with this state).
	Histories int `json:"histories,omitempty"`
	// Stalled is set by the daily pass: the run's goals that burned
	// attempts without progress. The run keeps going; this is for a person.
	Stalled []Stall `json:"stalled,omitempty"`
	// Planning is what the lead's sessions (planning, decompositions) cost;
	// Usage includes it.
	Planning Usage `json:"planning,omitzero"`
	// Outage is what the run waits out while it runs: an activity failing
	// on infrastructure, retried until it passes or the budget ends the
	// run. The workflow keeps what its retrying activities report (for
	// its Markdown); `horizon status` reads it afresh from the engine (the
	// pending activity's attempts, last failure and heartbeat).
	Outage *Outage `json:"outage,omitempty"`
	// Backoff is the stalled feature waiting before its next attempt
	// (StallPolicy), nil when none waits; Reason says the same in words
	// meanwhile, so every view that shows the reason shows it.
	Backoff *Backoff `json:"backoff,omitempty"`
}

// Checkpoint is a point where the run waits for a person (autonomy semi
// or supervised): the plan (HIGH ambiguity), a milestone, a feature.
type Checkpoint struct {
	Kind    CheckpointKind `json:"kind"`
	Subject string         `json:"subject"` // "plan", a milestone ID or a feature ID
	Summary string         `json:"summary"` // what is to be approved, in words
	Since   time.Time      `json:"since"`
}

// Budget is a run's hard stop: wall time from the run's start and total
// spend. Zero values mean no limit. Its JSON names the time's unit:
// "time_seconds" (budgetJSON).
type Budget struct {
	Time     time.Duration
	Spend    float64
	Deadline time.Time // StartedAt + Time
}

// budgetJSON is a Budget as JSON. Time is whole seconds; TimeNanos reads
// "time", nanoseconds, as states written before the unit was named hold it.
type budgetJSON struct {
	TimeSeconds int64     `json:"time_seconds,omitempty"`
	TimeNanos   int64     `json:"time,omitempty"`
	Spend       float64   `json:"spend,omitempty"`
	Deadline    time.Time `json:"deadline,omitzero"`
}

// MarshalJSON writes the time in seconds, under a name that says so.
func (b Budget) MarshalJSON() ([]byte, error) {
	return json.Marshal(budgetJSON{TimeSeconds: int64(b.Time / time.Second), Spend: b.Spend, Deadline: b.Deadline})
}

// UnmarshalJSON reads "time_seconds", or the older "time" in nanoseconds.
func (b *Budget) UnmarshalJSON(data []byte) error {
	var j budgetJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	b.Time = time.Duration(j.TimeNanos)
	if j.TimeSeconds != 0 {
		b.Time = time.Duration(j.TimeSeconds) * time.Second
	}
	b.Spend, b.Deadline = j.Spend, j.Deadline
	return nil
}

// Exceeded says whether the budget is spent at now with spent USD, and why.
func (b *Budget) Exceeded(now time.Time, spent float64) (string, bool) {
	if b == nil {
		return "", false
	}
	if !b.Deadline.IsZero() && !now.Before(b.Deadline) {
		return fmt.Sprintf("run budget: time limit %s reached at %s", b.Time, b.Deadline.UTC().Format(time.RFC3339)), true
	}
	if b.Spend > 0 && spent >= b.Spend {
		return fmt.Sprintf("run budget: spend limit $%.4f reached ($%.4f spent)", b.Spend, spent), true
	}
	return "", false
}

// Current returns the attempt in progress or last finished, or nil.
func (s *RunState) Current() *Attempt {
	if len(s.Attempts) == 0 {
		return nil
	}
	return &s.Attempts[len(s.Attempts)-1]
}

// End marks the run terminal.
func (s *RunState) End(st Status, kind ReasonKind, reason string, now time.Time) {
	s.Status, s.ReasonKind, s.Reason, s.UpdatedAt = st, kind, reason, now
	s.Outage = nil // an ended run waits on nothing
	if st == StatusCompleted {
		s.Phase = PhaseDone
	}
}

// Recount recomputes the run's usage from its attempts.
func (s *RunState) Recount() {
	var u Usage
	for _, a := range s.Attempts {
		u = u.Add(a.Usage)
	}
	s.Usage = u
}

// IntegrationBranch is where accepted features land for a run.
func IntegrationBranch(runID string) string { return "horizon/" + runID }

// LaneBranch is the branch of one feature's lane.
func LaneBranch(runID, feature string) string { return "horizon-lanes/" + runID + "/" + feature }

// Markdown renders the live progress table shown in the Temporal UI.
func (s *RunState) Markdown() string {
	if s.Plan != nil {
		return s.PlanMarkdown()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** · %s", s.Status, s.Phase)
	if s.Reason != "" {
		fmt.Fprintf(&b, " · %s", s.Reason)
	}
	b.WriteString("\n")
	b.WriteString(s.Outage.markdown())
	// A one-feature run stalls too; the flag is for the person watching
	// the Temporal UI, as on a planned run's header.
	for _, st := range s.Stalled {
		fmt.Fprintf(&b, "\n**stalled**: %s (flagged by the daily pass; the run goes on)\n", viewCell(st.Detail))
	}
	fmt.Fprintf(&b, "\nbranch `%s` · model `%s` · %d tokens · $%.4f\n\n", s.Branch, s.Model, s.Usage.Tokens(), s.Usage.Cost)
	b.WriteString("| attempt | tier | model | worker | gate | audit | outcome | signals | tokens | cost |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, a := range s.Attempts {
		n := fmt.Sprint(a.N)
		if a.Action != "" {
			n += " (" + a.Action + ")"
		}
		var sig []string
		for _, t := range a.Triggers {
			sig = append(sig, t.Kind)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %d | $%.4f |\n",
			n, dash(a.Tier), dash(a.Model), a.reportCell(), a.gateCell(), a.auditCell(), a.OutcomeCell(), dash(strings.Join(sig, ", ")), a.Usage.Tokens(), a.Usage.Cost)
	}
	for _, l := range GateTrustLines(s.Attempts) {
		fmt.Fprintf(&b, "\n%s\n", viewCell(l))
	}
	if c := s.Current(); c != nil && c.Route != "" {
		fmt.Fprintf(&b, "\nladder: %s\n", c.Route)
	}
	b.WriteString(adviceMarkdown("", s.Attempts))
	if asks := asksMarkdown("", s.Attempts); asks != "" {
		b.WriteString("\n" + asksHeading + ":\n\n" + asks)
	}
	return Safe(b.String())
}

// adviceMarkdown lists, for the Web UI, what the advisor's watchdog said
// per attempt that had advice ("" when none had); feature names the
// attempts' feature in a planned run.
func adviceMarkdown(feature string, attempts []Attempt) string {
	var b strings.Builder
	for _, a := range attempts {
		sum := AdviceSummary(a.Advice)
		if sum == "" {
			continue
		}
		if b.Len() == 0 && feature == "" {
			b.WriteString("\nAdvisor:\n\n")
		}
		who := fmt.Sprintf("attempt %d", a.N)
		if feature != "" {
			who = fmt.Sprintf("`%s` attempt %d", feature, a.N)
		}
		fmt.Fprintf(&b, "- %s: %s\n", who, sum)
	}
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func (a *Attempt) reportCell() string {
	switch {
	case a.ProtocolError != "":
		return "protocol error"
	case a.Report != nil:
		return string(a.Report.Status)
	case a.WorkerSession != "":
		return "working"
	}
	return "–"
}

func (a *Attempt) gateCell() string {
	if a.Gate == nil {
		return "–"
	}
	cell := fmt.Sprintf("%s (exit %d)", a.Gate.Verdict, a.Gate.ExitCode)
	if failed := a.Gate.FailedParts(); len(failed) > 0 {
		names := make([]string, len(failed))
		for i, p := range failed {
			names[i] = string(p)
		}
		cell += ", failed: " + strings.Join(names, "+")
	}
	if n := len(a.Gate.Vanished); n > 0 {
		cell += fmt.Sprintf(", %d vanished", n)
	}
	if n := len(a.Gate.Reverted); n > 0 {
		cell += fmt.Sprintf(", %d reverted", n)
	}
	return cell
}

func (a *Attempt) auditCell() string {
	if a.Audit == nil {
		return "–"
	}
	if n := len(a.Audit.Findings); n > 0 {
		return fmt.Sprintf("%s (%d findings)", a.Audit.Verdict, n)
	}
	return string(a.Audit.Verdict)
}

// GoalTitle is a goal (or roadmap item) as a title that names it in a
// notification or a list: its first line with spaces folded and control
// characters dropped, clipped to 80 runes.
func GoalTitle(goal string) string {
	line := strings.TrimSpace(goal)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, line)
	return viewClip(oneLine(line), 80)
}
