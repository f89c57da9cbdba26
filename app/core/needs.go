package core

// What waits for a person: one list every surface shows the same way.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/workflows"
)

// NeedKind is what a run waits on a person for.
type NeedKind string

// What a person is needed for, in the order the list shows them: what
// stops a run first, what only informs last.
const (
	NeedApproval NeedKind = "approve" // a checkpoint of semi or supervised autonomy
	NeedBlocker  NeedKind = "blocked" // a typed blocker: unblock with a note
	NeedCeiling  NeedKind = "ceiling" // the spend ceiling paused the run: raise it
	NeedStalled  NeedKind = "stalled" // the daily pass saw attempts burn without progress
)

var needOrder = []NeedKind{NeedApproval, NeedBlocker, NeedCeiling, NeedStalled}

// Need is one thing a run waits on a person for.
type Need struct {
	Kind    NeedKind `json:"kind"`
	RunID   string   `json:"run_id"`
	Subject string   `json:"subject,omitempty"` // the checkpoint (approval) or the feature (blocker, stall); "" for the run
	What    string   `json:"what"`              // in words, one line
	Command string   `json:"command"`           // the CLI command that does the same, for plain output
	// Supervisor says RunID is a supervisor's and Subject its queue entry:
	// a queued plan waiting for approval before it runs.
	Supervisor bool `json:"supervisor,omitempty"`
}

// Needs lists what the open runs (states, in the order of runs; the
// caller leaves out the closed ones, which need nobody) wait on a person
// for: approvals, blockers, ceilings, stalled goals; by kind, then in the
// order of runs.
func Needs(states []*horizon.RunState) []Need {
	var all []Need
	for _, s := range states {
		if s == nil {
			continue
		}
		all = append(all, runNeeds(s)...)
	}
	var out []Need
	for _, k := range needOrder {
		for _, n := range all {
			if n.Kind == k {
				out = append(out, n)
			}
		}
	}
	return out
}

// runNeeds is what one open run waits on a person for.
func runNeeds(s *horizon.RunState) []Need {
	var out []Need
	if w := s.Waiting; w != nil {
		out = append(out, Need{Kind: NeedApproval, RunID: s.RunID, Subject: w.Subject,
			What: WaitingFor(w), Command: s.ApproveCommand()})
	}
	if s.Plan != nil {
		for _, m := range s.Plan.Milestones {
			for _, f := range m.Features {
				if f.Status != horizon.FeatureBlocked {
					continue
				}
				what := f.ID + " blocked"
				if b := f.Blocker; b != nil {
					what = fmt.Sprintf("%s %s: %s", f.ID, b.Type, fold(b.Evidence))
				}
				out = append(out, Need{Kind: NeedBlocker, RunID: s.RunID, Subject: f.ID, What: what, Command: s.UnblockCommand(f.ID)})
			}
		}
	} else if s.Status == horizon.StatusBlocked {
		what := "blocked"
		if b := s.Blocker; b != nil {
			what = fmt.Sprintf("%s: %s", b.Type, fold(b.Evidence))
		}
		out = append(out, Need{Kind: NeedBlocker, RunID: s.RunID, What: what,
			Command: fmt.Sprintf("horizon unblock %s --note \"...\"", s.RunID)})
	}
	if atCeiling(s) {
		out = append(out, Need{Kind: NeedCeiling, RunID: s.RunID, What: fold(s.Reason),
			Command: fmt.Sprintf("horizon set-ceiling %s USD", s.RunID)})
	}
	for _, st := range s.Stalled {
		out = append(out, Need{Kind: NeedStalled, RunID: s.RunID, Subject: st.Feature, What: fold(st.Detail),
			Command: fmt.Sprintf("horizon status %s", s.RunID)})
	}
	return out
}

// atCeiling tells a run the spend ceiling holds from one a person paused:
// both wait in the paused phase, only a person's pause sets Paused, and
// the ceiling's reason names set-ceiling.
func atCeiling(s *horizon.RunState) bool {
	return s.Phase == horizon.PhasePaused && !s.Paused && strings.Contains(s.Reason, "set-ceiling")
}

// WaitingFor says what a checkpoint asks a person to approve: its
// summary, which names it ("milestone m2 (Measure and repeat): 2
// features"), or its name alone.
func WaitingFor(w *horizon.Checkpoint) string {
	if s := fold(w.Summary); s != "" {
		return s
	}
	return Checkpoint(w)
}

// Checkpoint names a checkpoint: "the plan", "milestone m2".
func Checkpoint(w *horizon.Checkpoint) string {
	if w.Kind == horizon.CheckpointPlan {
		return "the plan"
	}
	return strings.TrimSpace(string(w.Kind) + " " + w.Subject)
}

// fold folds whitespace so a text fits one row.
func fold(s string) string { return strings.Join(strings.Fields(s), " ") }

// Needs reads every open run and lists what they wait on a person for. A
// run that closes while it is read is left out.
func (r Reader) Needs(ctx context.Context) ([]Need, error) {
	exs, err := r.ListTypes(ctx, workflows.RunWorkflowTypes, "ExecutionStatus = 'Running'", 0)
	if err != nil {
		return nil, err
	}
	var states []*horizon.RunState
	for _, ex := range exs {
		st, _, err := r.Run(ctx, ex.ID)
		var nf *NotFoundError
		if errors.As(err, &nf) {
			continue
		}
		if err != nil {
			return nil, err
		}
		states = append(states, st)
	}
	sups, err := r.Supervisors(ctx)
	if err != nil {
		return nil, err
	}
	return append(Needs(states), SupervisorNeeds(sups)...), nil
}

// SupervisorNeeds lists the queued plans running supervisors hold for a
// person's approval: they wait like a run's checkpoint, and a list of what
// waits for a person that left them out would let them wait unseen.
func SupervisorNeeds(sups []horizon.SupervisorState) []Need {
	var out []Need
	for i := range sups {
		s := &sups[i]
		for _, e := range s.AwaitingApproval() {
			what, command := horizon.PlanApproval(s.Repo, e)
			out = append(out, Need{Kind: NeedApproval, RunID: s.ID, Subject: e.ID, What: what, Command: command, Supervisor: true})
		}
	}
	return out
}
