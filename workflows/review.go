package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// dispose gives every finding of attempt n's audit (and every criterion
// it left unmet) a disposition (horizon.Rule, then the lead for the rest)
// and records each as a decision. A needs-user-decision disposition is
// a typed blocker on the feature (ok): the loop's owner takes it over,
// and the accept-now ones wait in the attempt for the next brief.
func (l *changeLoop) dispose(ctx workflow.Context, n int) (b horizon.Blocker, ok bool, err error) {
	c := l.s.state.Current()
	if c == nil || c.Audit == nil || (len(c.Audit.Findings) == 0 && len(horizon.Unmet(c.Criteria)) == 0) {
		return horizon.Blocker{}, false, nil
	}
	if version(ctx, changeDispositions, 1) < 1 {
		return horizon.Blocker{}, false, nil
	}
	decided, undecided := horizon.Rule(horizon.RuleInput{
		Audit: c.Audit, Paths: l.job.paths, Outside: ladder.OutsideAllowList(l.job.paths, findingFiles(c.Audit)), Receipt: c.Criteria,
	})
	if len(undecided) > 0 {
		lead, why, err := l.askLead(ctx, n, c.Audit, undecided)
		if err != nil {
			return horizon.Blocker{}, false, err
		}
		if why != "" {
			decided = append(decided, horizon.Fallback(c.Audit, undecided, why)...)
		} else {
			decided = append(decided, horizon.Merge(c.Audit, undecided, lead)...)
		}
	}
	c.Dispositions = decided
	for _, d := range decided {
		l.decide(ctx, fmt.Sprintf("%s: %s (attempt %d)", d.Kind, d.Subject, n), fmt.Sprintf("%s (by %s)", d.Rationale, d.By), receiptOf(c)...)
	}
	if nb, ok := horizon.NeedsPerson(decided); ok {
		c.Outcome = horizon.OutcomeBlocked
		return nb, true, nil
	}
	return horizon.Blocker{}, false, nil
}

// askLead has the lead decide the findings the rule left open, in a short
// read-only session on its own model. why says why there is no answer
// to use (the session's protocol error): the caller falls back.
func (l *changeLoop) askLead(ctx workflow.Context, n int, au *horizon.Audit, undecided []int) (_ []horizon.Disposition, why string, _ error) {
	model, queue, paid := l.setup.Models[horizon.RoleWorker], l.setup.queue(horizon.RoleWorker, l.paidQueue), l.setup.Paid[horizon.RoleWorker]
	if s := l.setup; s.Lead != "" {
		model, queue, paid = s.Lead, s.leadQueue(l.paidQueue), s.LeadPaid
	}
	ses, err := l.throttled(ctx, horizon.RoleLead, session{model: model, queue: queue}, paid)
	if err != nil {
		return nil, "", err
	}
	var out activities.SessionOutput
	if err := ses.call(ctx, l.bound(ctx, sessionOptions(l.limits, fmt.Sprintf("lead · dispositions %s · attempt %d · %s", l.job.id, n, ses.model), ses.queue)), a.AgentSession, activities.SessionInput{
		RunID: l.runID, Feature: l.job.id, Attempt: n, Role: horizon.RoleLead, Purpose: activities.PurposeDispositions,
		Lane: l.lane.Path, BaseCommit: l.baseCommit, Model: ses.model, Prompt: horizon.DispositionBrief(l.job.task, au, undecided), Title: l.goal,
	}, &out); err != nil {
		why, ok := sessionFailed(err)
		if !ok {
			return nil, "", err
		}
		return nil, why, nil
	}
	c := l.s.state.Current()
	c.Usage = c.Usage.Add(out.Usage)
	if out.ProtocolError != "" {
		return nil, "its answer was not valid: " + out.ProtocolError, nil
	}
	return out.Dispositions, "", nil
}

// decide records a decision of the loop, where its owner keeps them
// (a planned feature's decisions.jsonl; a one-feature run keeps them on
// its attempts only).
func (l *changeLoop) decide(ctx workflow.Context, what, why string, evidence ...string) {
	if l.onDecide != nil {
		l.onDecide(ctx, what, why, evidence...)
	}
}

// quickModel runs an attempt whose Decision Brief holds only small,
// explicit fixes (horizon.SmallBrief) on the quick role's model of its
// tier; broader briefs stay on the tier's build model.
func (l *changeLoop) quickModel(ctx workflow.Context, p plan, prev *horizon.Attempt) plan {
	if !p.routed || p.retrieve || prev == nil || !horizon.SmallBrief(prev.Dispositions) {
		return p
	}
	q := l.setup.Tiers[p.tier].Quick
	if q == "" || q == p.model || version(ctx, changeQuickBrief, 1) < 1 {
		return p
	}
	p.model = q
	p.reason += fmt.Sprintf("; a Decision Brief of %d small fixes: the quick role's model", len(horizon.Of(prev.Dispositions, horizon.DispositionAcceptNow)))
	return p
}

// criteriaMet reads the audit's per-criterion receipt into the attempt
// and says whether every criterion is met (or none was rated: the
// verdict stands alone).
func (l *changeLoop) criteriaMet() bool {
	c := l.s.state.Current()
	c.Criteria = horizon.Receipt(l.job.acceptance, c.Audit)
	return len(horizon.Unmet(c.Criteria)) == 0
}

func findingFiles(au *horizon.Audit) []string {
	var files []string
	for _, f := range au.Findings {
		if strings.TrimSpace(f.File) != "" {
			files = append(files, f.File)
		}
	}
	return files
}

func receiptOf(a *horizon.Attempt) []string {
	if a.Gate != nil && a.Gate.ReceiptID != "" {
		return []string{a.Gate.ReceiptID}
	}
	return nil
}
