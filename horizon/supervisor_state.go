package horizon

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// SupervisorStatus is a supervisor's lifecycle state.
type SupervisorStatus string

// Supervisor statuses.
const (
	SupervisorRunning SupervisorStatus = "running"
	SupervisorPaused  SupervisorStatus = "paused"
	SupervisorStopped SupervisorStatus = "stopped"
)

// SupervisedRun is a run the supervisor started from its queue.
type SupervisedRun struct {
	RunID string `json:"run_id"`
	Entry string `json:"entry"`
	// Item is the roadmap item the run's plan came from ("" for a
	// person's goal).
	Item string `json:"item,omitempty"`
	Goal string `json:"goal"`
	// From is horizon/roadmap's tip the run started from; the run's
	// commits land on horizon/roadmap by fast-forward from it.
	From   string `json:"from"`
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Landed is horizon/roadmap's tip after the run's commits landed.
	Landed    string    `json:"landed,omitempty"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
}

// Active reports whether the run takes one of the supervisor's slots:
// it runs. A blocked run waits for a person and frees its slot.
func (r SupervisedRun) Active() bool { return r.Status == StatusRunning || r.Status == "" }

// SupervisorState is what `horizon supervisor status` shows and what a
// supervisor carries across continue-as-new.
type SupervisorState struct {
	ID       string           `json:"id"`
	Repo     string           `json:"repo"`
	Base     string           `json:"base"`
	Roadmap  string           `json:"roadmap"`
	Autonomy Autonomy         `json:"autonomy"`
	Status   SupervisorStatus `json:"status"`
	// Waiting says what the supervisor waits on now, in words ("" while
	// it works): an empty queue and roadmap, approvals, a roadmap error,
	// a merge conflict.
	Waiting      string    `json:"waiting,omitempty"`
	WaitingSince time.Time `json:"waiting_since,omitzero"`
	// Blocker, while set, is what stops the supervisor until a person
	// acts: the base branch does not merge into horizon/roadmap. Waiting
	// says the same in words.
	Blocker *SupervisorBlocker `json:"blocker,omitempty"`
	// RoadmapError is the roadmap's syntax error (file:line), shown until
	// the roadmap is fixed; the supervisor decomposes nothing meanwhile.
	RoadmapError string      `json:"roadmap_error,omitempty"`
	Queue        Queue       `json:"queue"`
	Items        ItemRecords `json:"items"`
	// Approved lists the queued plans a person approved (entry IDs).
	Approved []string `json:"approved,omitempty"`
	// Runs are the runs started, oldest first (the last few hundred).
	Runs []SupervisedRun `json:"runs"`
	// Tip is horizon/roadmap's tip as the supervisor last saw it.
	Tip string `json:"tip,omitempty"`
	// Decompositions and Histories count work done over the supervisor's
	// lifetime (across continue-as-new).
	Decompositions int `json:"decompositions"`
	// Merges counts merges into horizon/roadmap that went through the gate.
	Merges    int       `json:"merges,omitempty"`
	Histories int       `json:"histories"`
	StartedAt time.Time `json:"started_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`

	// DecomposeFailures counts decompositions that failed in a row; the
	// next waits until DecomposeAfter (backing off like a stalled
	// feature, run.stall_backoff). A decomposition that succeeds resets
	// both.
	DecomposeFailures int       `json:"decompose_failures,omitempty"`
	DecomposeAfter    time.Time `json:"decompose_after,omitzero"`

	// Ended is how the engine closed a supervisor that no longer runs
	// ("cancelled", "terminated", "failed", "timed out", "completed");
	// Status is then stopped, whatever the last state said. Set by the
	// reader, never by the workflow.
	Ended string `json:"ended,omitempty"`
	// Retrying is a step the engine retries, with its last error (set by
	// the reader from the engine's pending activities): a failure the
	// workflow has not seen yet, shown so that nobody waits on it blind.
	Retrying string `json:"retrying,omitempty"`
	// Outage is what the supervisor's decomposition in flight waits out
	// (the lead's model unreachable, say), read by the reader from the
	// engine's pending PlanWorkflow child as a run's outage is read: the
	// workflow cannot see its child's retries. Feature names the
	// decomposition ("decomposition of r1").
	Outage *Outage `json:"outage,omitempty"`
}

// SupervisorBlocker is a typed blocker of the supervisor itself: a branch
// that does not merge into horizon/roadmap (BlockerMergeConflict). Git
// found conflicts (Paths), or the merge applied and failed the gate (a
// conflict in behaviour; Evidence names the receipt). Either way another
// try finds the same, so only a person lifts it.
type SupervisorBlocker struct {
	Blocker
	// Branch would not merge into horizon/roadmap.
	Branch string `json:"branch"`
	// Paths are the files git left in conflict.
	Paths []string `json:"paths,omitempty"`
	// Lift says what a person does to lift it.
	Lift string `json:"lift"`
	// Item is the roadmap item whose run it holds back ("" when none).
	Item  string    `json:"item,omitempty"`
	Since time.Time `json:"since,omitzero"`
}

// Text is the blocker in words, as Waiting shows it.
func (b *SupervisorBlocker) Text() string {
	return fmt.Sprintf("blocked (%s): %s; %s", b.Type, b.Evidence, b.Lift)
}

// keptRuns bounds SupervisorState.Runs, so a supervisor that lives for
// months carries a bounded state into each history.
const keptRuns = 200

// Run returns a started run by ID.
func (s *SupervisorState) Run(id string) (*SupervisedRun, bool) {
	i := slices.IndexFunc(s.Runs, func(r SupervisedRun) bool { return r.RunID == id })
	if i < 0 {
		return nil, false
	}
	return &s.Runs[i], true
}

// AddRun records a started run, dropping the oldest ended ones past the
// bound.
func (s *SupervisorState) AddRun(r SupervisedRun) {
	s.Runs = append(s.Runs, r)
	for len(s.Runs) > keptRuns {
		i := slices.IndexFunc(s.Runs, func(r SupervisedRun) bool { return !r.Active() })
		if i < 0 {
			break
		}
		s.Runs = slices.Delete(s.Runs, i, i+1)
	}
}

// ActiveRuns counts the runs taking a slot.
func (s *SupervisorState) ActiveRuns() int {
	n := 0
	for _, r := range s.Runs {
		if r.Active() {
			n++
		}
	}
	return n
}

// Runnable is the first queue entry that may start now: a person's goal,
// or a plan under full autonomy or approved. Plans waiting for approval
// are stepped over, so a morning's approvals never hold other work.
func (s *SupervisorState) Runnable() (QueueEntry, bool) {
	for _, e := range s.Queue.Entries {
		if !s.NeedsApproval(e) {
			return e, true
		}
	}
	return QueueEntry{}, false
}

// NeedsApproval: the entry is a decomposed plan whose autonomy wants a
// person to approve it first, and nobody has.
func (s *SupervisorState) NeedsApproval(e QueueEntry) bool {
	if e.Kind != EntryPlan || slices.Contains(s.Approved, e.ID) {
		return false
	}
	a := e.Autonomy
	if a == "" {
		a = s.Autonomy
	}
	return a == AutonomySemi || a == AutonomySupervised
}

// PlanApproval is what queued plan e of repo's supervisor asks of a
// person while it waits for approval, in words and as the command that
// approves it: the daily report, the lists of needs and supervisor status
// say it the same way.
func PlanApproval(repo string, e QueueEntry) (what, command string) {
	return fmt.Sprintf("queued plan %s waits for approval before it runs: %s", e.ID, oneLine(e.Goal)),
		fmt.Sprintf("horizon approve --repo %s %s", repo, e.ID)
}

// AwaitingApproval lists the queued plans that wait for a person.
func (s *SupervisorState) AwaitingApproval() []QueueEntry {
	var out []QueueEntry
	for _, e := range s.Queue.Entries {
		if s.NeedsApproval(e) {
			out = append(out, e)
		}
	}
	return out
}

// Markdown renders the state for the Temporal UI's current details.
func (s *SupervisorState) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**supervisor** %s · %s · base %s · autonomy %s\n\n", s.Repo, s.Status, s.Base, s.Autonomy)
	if s.Blocker != nil {
		fmt.Fprintf(&b, "**blocked** `%s` since %s: %s\n\n", s.Blocker.Type, s.Blocker.Since.UTC().Format("2006-01-02 15:04 UTC"), viewCell(s.Blocker.Evidence))
	}
	if s.Waiting != "" {
		fmt.Fprintf(&b, "waiting since %s: %s\n\n", s.WaitingSince.UTC().Format("2006-01-02 15:04 UTC"), viewCell(s.Waiting))
	}
	if len(s.Queue.Entries) > 0 {
		b.WriteString("| queue | kind | goal |\n|---|---|---|\n")
		for _, e := range s.Queue.Entries {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", e.ID, e.Kind, viewCell(e.Goal))
		}
		b.WriteString("\n")
	}
	if len(s.Runs) > 0 {
		b.WriteString("| run | entry | status | goal |\n|---|---|---|---|\n")
		for _, r := range s.Runs[max(0, len(s.Runs)-20):] {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.RunID, r.Entry, r.Status, viewCell(r.Goal))
		}
	}
	return Safe(b.String())
}

// SupervisorID is the workflow ID of a repository's supervisor: one per
// repository, named by its absolute path.
func SupervisorID(repo string) string {
	sum := sha256.Sum256([]byte(repo))
	return "supervisor-" + hex.EncodeToString(sum[:4])
}

// DecomposeScheduleID is a repository's nightly decomposition schedule.
func DecomposeScheduleID(supervisor string) string { return supervisor + "-decompose" }

// DailyScheduleID is the daily pass's schedule: one per engine.
const DailyScheduleID = "horizon-daily"
