package core

// `horizon plan`: the lead plans a goal in the foreground, and nothing runs.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/workflows"
)

// PlanResult is a plan the lead made, with its tries and cost.
type PlanResult = workflows.PlanResult

// PlanFailedError is planning that ended without a plan: the lead's tries
// were all rejected (Rejected says why, each), or a spend ceiling stopped
// it (Ceiling).
type PlanFailedError struct {
	Reason   string
	Rejected []string
	Ceiling  bool
}

func (e *PlanFailedError) Error() string { return e.Reason }

// PlanID is the ID of the planning of a prepared run.
func (p *Prepared) PlanID() string { return strings.Replace(p.RunID, "run-", "plan-", 1) }

// Plan makes the lead plan p's goal and waits for the plan.
func (a *App) Plan(ctx context.Context, p *Prepared) (*PlanResult, error) {
	in := workflows.PlanInput{
		RunID: p.PlanID(), Goal: p.Goal, Repo: p.Repo,
		BaseCommit: p.BaseCommit, Model: p.input.Model, ModelsFile: p.input.ModelsFile, Limits: p.input.Limits,
		PaidQueue: p.input.PaidQueue, Spend: spendLimits(a.cfg), Foreground: true,
	}
	h, err := a.runs().StartPlan(ctx, in)
	if err != nil {
		return nil, err
	}
	var res PlanResult
	if err := h.Get(ctx, &res); err != nil {
		var failed *temporal.ApplicationError
		if errors.As(err, &failed) && failed.Type() == workflows.FailureSpendCeiling {
			// In the foreground the spend authority does not wait at a
			// ceiling: the person hears which one, and how to raise it.
			return nil, &PlanFailedError{Reason: PlainReason(failed.Error()), Ceiling: true}
		}
		if errors.As(err, &failed) && failed.HasDetails() && failed.Details(&res) == nil {
			return nil, &PlanFailedError{Reason: PlainReason(failed.Error()), Rejected: res.Rejected}
		}
		return nil, fmt.Errorf("planning %s: %w", in.RunID, err)
	}
	return &res, nil
}

// engineSuffix is what the engine's application errors append to their
// message: for people it is noise.
var engineSuffix = regexp.MustCompile(`\s*\(type: [^()]*, retryable: (?:true|false)\)`)

// PlainReason is a reason without the engine's failure annotations.
func PlainReason(s string) string { return engineSuffix.ReplaceAllString(s, "") }
