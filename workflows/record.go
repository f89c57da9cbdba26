package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// record is a planned run's written record: its decisions, numbered in
// order and queued until the next save writes them to decisions.jsonl
// with plan.json.
type record struct {
	s *runStatus
	// pending are decisions not yet written to decisions.jsonl.
	pending []horizon.Decision
}

// decide records a decision of the run itself.
func (r *record) decide(ctx workflow.Context, feature, what, why string, evidence ...string) {
	if d, ok := newDecision(ctx, feature, what, why, evidence...); ok {
		r.add(d)
	}
}

// add numbers a decision and queues it for decisions.jsonl.
func (r *record) add(d horizon.Decision) {
	r.s.state.Decisions++
	d.Seq = r.s.state.Decisions
	r.pending = append(r.pending, d)
}

// save writes plan.json and the pending decisions (idempotently).
func (r *record) save(ctx workflow.Context) error {
	var out activities.PlanArtifactsOutput
	if err := step(ctx, gitOptions("plan.json, decisions.jsonl"), a.SavePlan, activities.PlanArtifacts{
		RunID: r.s.state.RunID, Plan: *r.s.state.Plan, Decisions: r.pending,
	}, &out); err != nil {
		return fmt.Errorf("save plan: %w", err)
	}
	r.pending = nil
	return nil
}

// newDecision builds a decision at workflow time; one that does not
// validate (no what or why) is logged and dropped, never fatal.
func newDecision(ctx workflow.Context, feature, what, why string, evidence ...string) (horizon.Decision, bool) {
	d, err := horizon.NewDecision(workflow.Now(ctx), feature, what, why, evidence...)
	if err != nil {
		workflow.GetLogger(ctx).Warn("decision not recorded", "Error", err)
		return d, false
	}
	return d, true
}

// recount sums a planned run's usage: planning plus every feature's
// attempts.
func recount(st *horizon.RunState) {
	u := st.Planning
	if st.Plan != nil {
		for _, m := range st.Plan.Milestones {
			for _, f := range m.Features {
				u = u.Add(usageOf(f))
			}
		}
	}
	st.Usage = u
}

func usageOf(f horizon.Feature) horizon.Usage {
	var u horizon.Usage
	for _, a := range f.Attempts {
		u = u.Add(a.Usage)
	}
	return u
}
