package horizon

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The daily pass writes $HORIZON_HOME/reports/<date>.md and <date>.json:
// per repository what landed since the last pass, what waits for a person
// (with the exact command that lets it go on), spend per run and per day
// against the ceilings, stalled goals and the roadmap's state. The pass's
// activities gather a ReportInput (run states, the supervisor's queue and
// records, the roadmap as read from the base branch); BuildReport turns it
// into a DailyReport, pure and deterministic; Markdown renders it. The
// JSON file is the DailyReport itself.

// ReportInput is what the daily pass gathered. It is plain data with JSON
// tags so it can cross an activity boundary.
type ReportInput struct {
	// Since is the previous pass; zero (the first pass) means a day
	// before Until.
	Since time.Time `json:"since,omitzero"`
	// Until is this pass's time; its UTC date names the report.
	Until time.Time `json:"until"`
	// StallAttempts is supervisor.stall_attempts (see DetectStalls).
	StallAttempts int `json:"stall_attempts"`
	// DayCeiling is spend.day_ceiling in USD, 0 for none.
	DayCeiling float64     `json:"day_ceiling,omitempty"`
	Repos      []RepoInput `json:"repos"`
}

// RepoInput is one repository's part of the input.
type RepoInput struct {
	Repo string `json:"repo"`
	// Runs are the repository's runs still going and those updated since
	// the last pass, in any order (the report sorts them).
	Runs []RunState `json:"runs"`
	// Roadmap is the roadmap as last read; nil when there is none or it
	// could not be read (RoadmapError says why).
	Roadmap *Roadmap `json:"roadmap,omitempty"`
	// RoadmapError is the roadmap's syntax error (Error() of a
	// *RoadmapError): the supervisor waits for a fix.
	RoadmapError string      `json:"roadmap_error,omitempty"`
	Records      ItemRecords `json:"records,omitempty"`
	Queue        Queue       `json:"queue"`
	// Approvals are the queued plans the supervisor holds for a person's
	// approval (SupervisorState.AwaitingApproval).
	Approvals []QueueEntry `json:"approvals,omitempty"`
	// Outage is what the supervisor's decomposition waits out
	// (SupervisorState.Outage), nil when none.
	Outage *Outage `json:"outage,omitempty"`
}

// DailyReport is the daily pass's report; it is also the JSON file.
type DailyReport struct {
	// Date is Until's UTC date, YYYY-MM-DD: the files' name.
	Date          string    `json:"date"`
	Since         time.Time `json:"since"`
	Until         time.Time `json:"until"`
	StallAttempts int       `json:"stall_attempts"`
	// Days is the spend of all repositories on each UTC day the window
	// touches, whole days (attempts outside the window included), against
	// spend.day_ceiling. Planning sessions carry no time and are left out
	// (they are in each run's Total).
	Days  []DaySpend   `json:"days"`
	Repos []RepoReport `json:"repos"`
}

// RepoReport is one repository's section.
type RepoReport struct {
	Repo    string      `json:"repo"`
	Landed  []Landed    `json:"landed"`
	Waiting []Waiting   `json:"waiting"`
	Runs    []RunSpend  `json:"runs"`
	Stalled []Stall     `json:"stalled"`
	Queued  int         `json:"queued"`
	Roadmap *RoadmapRef `json:"roadmap,omitempty"`
	// Deferred are the findings the reported runs deferred (Deferred of
	// each run's plan), run by run; none for a report written before
	// findings had dispositions.
	Deferred []ReportDeferred `json:"deferred,omitempty"`
}

// ReportDeferred is a finding a run deferred: right, but not needed for
// the feature it was found on, so kept for later work.
type ReportDeferred struct {
	RunID     string `json:"run_id"`
	Feature   string `json:"feature"`
	Subject   string `json:"subject"`
	Rationale string `json:"rationale"`
}

// RoadmapRef is the roadmap's state in a report: the items, or the error
// the supervisor waits on.
type RoadmapRef struct {
	File  string       `json:"file,omitempty"`
	Error string       `json:"error,omitempty"`
	Items []ItemStatus `json:"items"`
}

// Landed is a feature (or a one-feature run's change) accepted within the
// window, with the evidence: the commit on the run's branch and the gate
// receipt of the verified attempt.
type Landed struct {
	RunID   string    `json:"run_id"`
	Feature string    `json:"feature,omitempty"` // empty for a one-feature run
	Title   string    `json:"title"`
	Branch  string    `json:"branch"`
	Commit  string    `json:"commit"`
	Receipt string    `json:"receipt"`
	At      time.Time `json:"at"`
}

// WaitKind says what a person is waited for.
type WaitKind string

// What a run or the supervisor can wait for.
const (
	WaitBlocked  WaitKind = "blocked"  // a typed blocker with evidence
	WaitApproval WaitKind = "approval" // a checkpoint (semi or supervised autonomy)
	WaitPaused   WaitKind = "paused"   // held by `horizon pause`
	WaitCeiling  WaitKind = "ceiling"  // paused at a spend ceiling
	WaitRoadmap  WaitKind = "roadmap"  // the roadmap has a syntax error, or an item could not be decomposed
	WaitOutage   WaitKind = "outage"   // the supervisor's decomposition waits out an outage (the lead's model unreachable)
)

// Waiting is something that goes on only when a person acts.
type Waiting struct {
	Kind    WaitKind `json:"kind"`
	RunID   string   `json:"run_id,omitempty"`
	Feature string   `json:"feature,omitempty"`
	// What is what it waits on, with the evidence, in words.
	What string `json:"what"`
	// Command is the exact command that lets it go on ("USD" and "..."
	// are for the person to fill in); empty when the fix is an edit.
	Command string `json:"command,omitempty"`
}

// RunSpend is one run's spend: within the window and in total, against
// its ceiling and its spend budget.
type RunSpend struct {
	RunID  string `json:"run_id"`
	Goal   string `json:"goal"`
	Status Status `json:"status"`
	// Spent is the cost of the attempts that ended within the window.
	Spent float64 `json:"spent"`
	// Attempts is how many attempts ended within the window.
	Attempts int `json:"attempts"`
	// Total is the run's whole cost, planning included.
	Total   float64 `json:"total"`
	Ceiling float64 `json:"ceiling,omitempty"` // the run's spend ceiling, 0: none
	Budget  float64 `json:"budget,omitempty"`  // the run's spend budget, 0: none
}

// DaySpend is the spend of one UTC day.
type DaySpend struct {
	Day     string  `json:"day"` // YYYY-MM-DD
	Spent   float64 `json:"spent"`
	Ceiling float64 `json:"ceiling,omitempty"`
	// AtCeiling: the day reached its ceiling (runs paused until the next
	// day or a raise).
	AtCeiling bool `json:"at_ceiling,omitempty"`
}

// ReportDate is the report's name for a pass at t: its UTC date.
func ReportDate(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// ReportPaths are the report's files relative to $HORIZON_HOME.
func ReportPaths(date string) (markdown, json string) {
	return "reports/" + date + ".md", "reports/" + date + ".json"
}

// BuildReport makes the report of a pass. The window is (Since, Until]:
// an attempt or acceptance belongs to it by when it ended. Repositories
// keep their input order; runs are sorted by start, then ID.
func BuildReport(in ReportInput) DailyReport {
	until := in.Until.UTC()
	since := in.Since.UTC()
	if in.Since.IsZero() {
		since = until.Add(-24 * time.Hour)
	}
	threshold := in.StallAttempts
	if threshold < 1 {
		threshold = DefaultStallAttempts
	}
	r := DailyReport{Date: ReportDate(until), Since: since, Until: until, StallAttempts: threshold, Repos: []RepoReport{}}
	w := window{since: since, until: until}
	perDay := map[string]float64{}
	for _, ri := range in.Repos {
		runs := slices.Clone(ri.Runs)
		slices.SortStableFunc(runs, func(a, b RunState) int {
			if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
				return c
			}
			return strings.Compare(a.RunID, b.RunID)
		})
		rr := RepoReport{Repo: ri.Repo, Landed: []Landed{}, Waiting: []Waiting{}, Runs: []RunSpend{}, Stalled: []Stall{}, Queued: ri.Queue.Len()}
		for _, s := range runs {
			rr.Landed = append(rr.Landed, w.landed(s)...)
			rr.Waiting = append(rr.Waiting, waitingOn(s)...)
			rr.Stalled = append(rr.Stalled, DetectStalls(s, threshold)...)
			spend := RunSpend{RunID: s.RunID, Goal: s.Goal, Status: s.Status, Total: s.Usage.Cost, Ceiling: s.Ceiling}
			if s.Budget != nil {
				spend.Budget = s.Budget.Spend
			}
			for _, a := range runAttempts(s) {
				if a.Outcome == OutcomeRunning {
					continue // its cost is not known yet
				}
				t := attemptTime(a)
				perDay[ReportDate(t)] += a.Usage.Cost
				if w.has(t) {
					spend.Spent += a.Usage.Cost
					spend.Attempts++
				}
			}
			spend.Spent, spend.Total = roundUSD(spend.Spent), roundUSD(spend.Total)
			if spend.Attempts > 0 || !s.Status.Terminal() || w.has(s.UpdatedAt) {
				rr.Runs = append(rr.Runs, spend)
				rr.Deferred = append(rr.Deferred, deferredOf(s)...)
			}
		}
		for _, e := range ri.Approvals {
			what, command := PlanApproval(ri.Repo, e)
			rr.Waiting = append(rr.Waiting, Waiting{Kind: WaitApproval, Feature: e.ID, What: what, Command: command})
		}
		if o := ri.Outage; o != nil {
			rr.Waiting = append(rr.Waiting, Waiting{Kind: WaitOutage, What: "the supervisor waits out an outage: " + o.Line() +
				"; it goes on by itself once that is back, and a decomposition with no plan by supervisor.decompose_timeout is cancelled and tried again later"})
		}
		rr.Roadmap, rr.Waiting = roadmapRef(ri, rr.Waiting)
		r.Repos = append(r.Repos, rr)
	}
	for d := since.Truncate(24 * time.Hour); !d.After(until); d = d.Add(24 * time.Hour) {
		day := DaySpend{Day: ReportDate(d), Spent: roundUSD(perDay[ReportDate(d)]), Ceiling: in.DayCeiling}
		day.AtCeiling = day.Ceiling > 0 && day.Spent >= day.Ceiling
		r.Days = append(r.Days, day)
	}
	return r
}

// roundUSD rounds sums of costs to a millionth of a dollar, so float
// noise (1.1299999999999997) stays out of the JSON file.
func roundUSD(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// window is a pass's time window, (since, until].
type window struct{ since, until time.Time }

func (w window) has(t time.Time) bool { return t.After(w.since) && !t.After(w.until) }

// runAttempts are every attempt of a run: its features' (plan order) or
// its own.
func runAttempts(s RunState) []Attempt {
	if s.Plan == nil {
		return s.Attempts
	}
	var out []Attempt
	for _, f := range s.Plan.features() {
		out = append(out, f.Attempts...)
	}
	return out
}

// landed lists what a run landed within the window, judged by receipts:
// an accepted feature with a commit whose verified attempt (gate passed
// with a receipt, auditor accepted) ended in the window.
func (w window) landed(s RunState) []Landed {
	branch := s.Branch
	if branch == "" {
		branch = IntegrationBranch(s.RunID)
	}
	var out []Landed
	if s.Plan == nil {
		if s.Status != StatusCompleted || s.Commit == "" {
			return nil
		}
		for i := len(s.Attempts) - 1; i >= 0; i-- {
			if a := s.Attempts[i]; attemptVerified(a) && w.has(attemptTime(a)) {
				return []Landed{{RunID: s.RunID, Title: oneLine(s.Goal), Branch: branch, Commit: s.Commit, Receipt: a.Gate.ReceiptID, At: attemptTime(a)}}
			}
		}
		return nil
	}
	for _, f := range s.Plan.features() {
		if f.Status != FeatureAccepted || f.Commit == "" {
			continue
		}
		if a, ok := f.Verified(); ok && w.has(attemptTime(a)) {
			out = append(out, Landed{RunID: s.RunID, Feature: f.ID, Title: f.Title, Branch: branch, Commit: f.Commit, Receipt: a.Gate.ReceiptID, At: attemptTime(a)})
		}
	}
	return out
}

// deferredOf lists a planned run's deferred findings, in plan order; a
// one-feature run has no plan to keep them in.
func deferredOf(s RunState) []ReportDeferred {
	if s.Plan == nil {
		return nil
	}
	var out []ReportDeferred
	for _, d := range Deferred(*s.Plan) {
		out = append(out, ReportDeferred{RunID: s.RunID, Feature: d.Feature, Subject: oneLine(d.Subject), Rationale: oneLine(d.Rationale)})
	}
	return out
}

// waitingOn lists what a run waits on a person for, each with the
// command that lets it go on.
func waitingOn(s RunState) []Waiting {
	if s.Status == StatusCompleted || s.Status == StatusCancelled || s.Status == StatusFailed {
		return nil
	}
	var out []Waiting
	if s.Waiting != nil {
		out = append(out, Waiting{Kind: WaitApproval, RunID: s.RunID, Feature: featureSubject(s), Command: s.ApproveCommand(),
			What: fmt.Sprintf("waits at the %s checkpoint: %s", s.Waiting.Kind, oneLine(s.Waiting.Summary))})
	}
	if s.Plan != nil {
		for _, f := range s.Plan.features() {
			if f.Status == FeatureBlocked {
				out = append(out, Waiting{Kind: WaitBlocked, RunID: s.RunID, Feature: f.ID, Command: s.UnblockCommand(f.ID),
					What: fmt.Sprintf("%s: %s", oneLine(f.Title), blockerWords(f.Blocker))})
			}
		}
	} else if s.Blocker != nil && (s.Status == StatusBlocked || s.Phase == PhaseBlocked) {
		out = append(out, Waiting{Kind: WaitBlocked, RunID: s.RunID, Command: fmt.Sprintf("horizon unblock %s --note \"...\"", s.RunID),
			What: fmt.Sprintf("%s: %s", oneLine(s.Goal), blockerWords(s.Blocker))})
	}
	switch {
	case s.Paused:
		out = append(out, Waiting{Kind: WaitPaused, RunID: s.RunID, Command: "horizon resume " + s.RunID, What: "paused by `horizon pause`"})
	case s.Phase == PhasePaused:
		w := Waiting{Kind: WaitCeiling, RunID: s.RunID, Command: "horizon set-ceiling " + s.RunID + " USD"}
		if s.DayCeiling > 0 && s.DaySpent >= s.DayCeiling {
			w.Command += " --day"
			w.What = fmt.Sprintf("paused at the daily spend ceiling of $%.2f ($%.2f spent today); USD is the new ceiling", s.DayCeiling, s.DaySpent)
		} else {
			w.What = fmt.Sprintf("paused at its spend ceiling of $%.2f ($%.2f spent); USD is the new ceiling", s.Ceiling, s.Usage.Cost)
		}
		out = append(out, w)
	}
	return out
}

// featureSubject is the feature a run's checkpoint is about, if any.
func featureSubject(s RunState) string {
	if s.Waiting != nil && s.Waiting.Kind == CheckpointFeature {
		return s.Waiting.Subject
	}
	return ""
}

func blockerWords(b *Blocker) string {
	if b == nil {
		return "blocked (no blocker recorded)"
	}
	return string(b.Type) + " — " + viewClip(oneLine(b.Evidence), 300)
}

// roadmapRef is the roadmap part of a repository's report; a roadmap
// error and items blocked without a run (their decomposition failed) are
// also things waiting for a person.
func roadmapRef(ri RepoInput, waiting []Waiting) (*RoadmapRef, []Waiting) {
	switch {
	case ri.RoadmapError != "":
		waiting = append(waiting, Waiting{Kind: WaitRoadmap, What: "the supervisor waits for the roadmap to be fixed on the base branch: " + ri.RoadmapError})
		return &RoadmapRef{Error: ri.RoadmapError, Items: []ItemStatus{}}, waiting
	case ri.Roadmap == nil:
		return nil, waiting
	}
	items := RoadmapStatus(*ri.Roadmap, ri.Records, ri.Queue)
	for _, it := range items {
		if it.State == ItemBlocked && it.RunID == "" {
			waiting = append(waiting, Waiting{Kind: WaitRoadmap, What: fmt.Sprintf("roadmap item %s (%s) could not be decomposed: %s; reword or re-pin it to have it decomposed afresh", it.Item, it.Title, it.Detail)})
		}
	}
	return &RoadmapRef{File: ri.Roadmap.File, Items: items}, waiting
}
