package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/ladder"
)

// SpecialistDraftInput asks the lead to draft a specialist manifest
// (`horizon specialist generate`).
type SpecialistDraftInput struct {
	Draft activities.DraftInput
	// Purpose is what the specialist is for, as the person said it;
	// Prompt the lead's brief (specialist.DraftBrief).
	Purpose    string
	Prompt     string
	BaseCommit string // the repository's HEAD, for a session moved after a crash
	Limits     Limits
	// PaidQueue is the task queue of metered sessions; Spend the ceilings
	// the draft's session observes.
	PaidQueue string
	Spend     SpendLimits
}

// SpecialistDraftResult is the lead's draft, unchecked: the application
// validates the manifest and writes it only once a person agreed.
type SpecialistDraftResult struct {
	Model   string
	Session activities.SpecialistDraftOutput
}

// SpecialistDraftWorkflow has the lead, a read-only agent on the lead
// role's model, draft one specialist manifest: PrepareSpecialistDraft
// (the model), then the session, granted by the spend authority like
// every metered call. A person waits on it, so at a ceiling it fails
// (FailureSpendCeiling) rather than wait for a raise, as `horizon plan`
// does. A session lost in a crash is continued by the activity's retry.
func SpecialistDraftWorkflow(ctx workflow.Context, in SpecialistDraftInput) (SpecialistDraftResult, error) {
	limits := in.Limits.withDefaults()
	s := &runStatus{state: horizon.RunState{RunID: in.Draft.ID, Goal: "specialist: " + in.Purpose, Repo: in.Draft.Repo, Status: horizon.StatusRunning,
		Phase: horizon.PhasePlanning, Ceiling: in.Spend.Ceiling, DayCeiling: in.Spend.DayCeiling, StartedAt: workflow.Now(ctx)}}
	if err := registerCeilings(ctx, s); err != nil {
		return SpecialistDraftResult{}, err
	}
	var plan activities.DraftPlan
	if err := execute(ctx, gitOptions("the lead's model"), a.PrepareSpecialistDraft, in.Draft, &plan); err != nil {
		return SpecialistDraftResult{}, err
	}
	queue := ""
	if plan.Paid {
		queue = in.PaidQueue
	}
	au := authority{s: s, local: map[horizon.Role]string{horizon.RoleLead: plan.Local}, throttleAt: in.Spend.ThrottleAt,
		subject: "specialist draft", foreground: true,
		spend: func(ctx workflow.Context) (ladder.Spend, error) {
			return spendOf(ctx, &s.state, 0, in.Spend.ThrottleAt, time.Time{})
		}}
	g, err := au.grant(ctx, horizon.RoleLead, session{model: plan.Model, queue: queue}, plan.Paid)
	if err != nil {
		return SpecialistDraftResult{}, err
	}
	var out activities.SpecialistDraftOutput
	if err := g.call(ctx, sessionOptions(limits, "lead · specialist draft", g.queue), a.SpecialistDraftSession, activities.SessionInput{
		RunID: in.Draft.ID, Feature: "specialist", Attempt: 1, Role: horizon.RoleLead, Purpose: activities.PurposeSpecialist,
		Goal: in.Purpose, Lane: in.Draft.Repo, BaseCommit: in.BaseCommit, Model: g.model, Prompt: in.Prompt, Title: "specialist: " + in.Purpose,
	}, &out); err != nil {
		return SpecialistDraftResult{}, err
	}
	workflow.GetLogger(ctx).Info("specialist drafted", "RunID", in.Draft.ID, "Model", g.model, "Session", out.SessionID, "ProtocolError", out.ProtocolError)
	return SpecialistDraftResult{Model: g.model, Session: out}, nil
}
