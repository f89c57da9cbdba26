package activities

// `horizon specialist generate`: the lead drafts a specialist manifest in
// one read-only session (OpenCode agent horizon-lead: read, grep, glob,
// list; it cannot write). The session is an agent session like the
// others (its ID heartbeated, continued after a crash, its cost in the
// day's ledger and its transcript under runs/<draft>/transcripts); only
// its answer differs: a horizon-specialist block holding the manifest,
// which the application checks (specialist.CheckDraft) and writes only
// once a person said yes. Nothing here writes to the repository.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/applier"
)

// PurposeSpecialist is the lead's session that drafts a specialist
// manifest (a horizon-specialist block, not a plan).
const PurposeSpecialist = "specialist"

// DraftInput is one `horizon specialist generate`.
type DraftInput struct {
	ID   string // the draft's ID: its workflow's, and its files' (runs/<id>)
	Repo string // the repository's root (absolute): where the lead reads
	// Model, when set (--model, models.default), is the lead's model;
	// otherwise the leaderboard's lead role picks it (ModelsFile, or the
	// bundled one).
	Model      string
	ModelsFile string
}

// DraftPlan is the model the draft runs on: decided once, by
// PrepareSpecialistDraft.
type DraftPlan struct {
	Model string
	Paid  bool // metered: the session goes through the paid queue
	// Local is the lead role's best-ranked local model ("" when none):
	// near a ceiling the spend authority moves a metered draft to it.
	Local string
}

// SpecialistDraftOutput is the drafting session's end.
type SpecialistDraftOutput struct {
	SessionID string
	Usage     horizon.Usage
	// Manifest is the horizon-specialist block's content, unchecked;
	// ProtocolError says why there is none.
	Manifest      string `json:",omitempty"`
	ProtocolError string `json:",omitempty"`
	Transcript    string // the session's final message on disk
}

// PrepareSpecialistDraft resolves the lead's model for a draft. The draft
// needs OpenCode's read-only agent, so it runs on an OpenCode route: an
// applier model (Claude Code, Codex) is bad input, as is a model OpenCode
// does not offer; a lead role nobody connected serves is an unknown model.
// Neither changes by retrying.
func (a *Activities) PrepareSpecialistDraft(ctx context.Context, in DraftInput) (DraftPlan, error) {
	defer keepAlive(ctx)()
	if err := a.mustSee("repository", in.Repo); err != nil {
		return DraftPlan{}, err
	}
	lb, err := LoadLeaderboard(in.ModelsFile)
	if err != nil {
		return DraftPlan{}, badInput("specialist draft %s: %v", in.ID, err)
	}
	connected, err := a.Sessions.Models(ctx, in.Repo)
	if err != nil {
		return DraftPlan{}, fmt.Errorf("prepare specialist draft %s: models OpenCode can use: %w", in.ID, err)
	}
	connected = openCodeRoutes(connected)
	if in.Model != "" {
		if k := applierOf(in.Model); k != string(applier.OpenCode) {
			return DraftPlan{}, badInput("specialist draft: --model %s runs on %s, and the lead drafts in OpenCode's read-only agent: pick an OpenCode route (`horizon models` lists them)", in.Model, k)
		}
		if !slices.Contains(connected, in.Model) {
			return DraftPlan{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("specialist draft: --model (models.default) %s is not a model OpenCode can use (it has %s): `horizon models` lists them", in.Model, strings.Join(connected, ", ")), ErrTypeUnknownModel, nil)
		}
		return DraftPlan{Model: in.Model, Paid: Paid(lb, in.Model)}, nil
	}
	role := string(horizon.RoleLead)
	c, err := lb.Resolve(role, connected)
	if err != nil {
		return DraftPlan{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("specialist draft: the lead's role has no model OpenCode can use: %v; connect one (`horizon models`) or pass --model", err), ErrTypeUnknownModel, nil)
	}
	plan := DraftPlan{Model: c.Route, Paid: Paid(lb, c.Route)}
	if plan.Paid {
		if l, err := lb.ResolveLocal(role, connected); err == nil {
			plan.Local = l.Route
		}
	}
	return plan, nil
}

// SpecialistDraftSession runs the lead's drafting session in the
// repository (in.Lane) and reads its horizon-specialist block. It is an
// agent session as AgentSession runs one (prepared, run under a
// heartbeat that a retry continues, recorded), with its own answer.
func (a *Activities) SpecialistDraftSession(ctx context.Context, in SessionInput) (SpecialistDraftOutput, error) {
	if in.Role != horizon.RoleLead || in.Purpose != PurposeSpecialist {
		return SpecialistDraftOutput{}, badInput("specialist draft %s: a session of the lead with purpose %q, not %s/%s", in.RunID, PurposeSpecialist, in.Role, in.Purpose)
	}
	t := a.tellOutages(ctx, in.RunID, in.Feature)
	out, waited, err := a.specialistDraft(ctx, in, t)
	t.finish(ctx, err, waited)
	return out, err
}

func (a *Activities) specialistDraft(ctx context.Context, in SessionInput, t *outageTeller) (_ SpecialistDraftOutput, waited *horizon.Outage, _ error) {
	rec, res, waited, err := a.sessionTurn(ctx, in, t)
	if err != nil {
		return SpecialistDraftOutput{}, waited, err
	}
	out := SpecialistDraftOutput{SessionID: rec.SessionID, Usage: rec.Usage, Transcript: rec.Transcript}
	if out.Manifest, err = agent.ParseSpecialist(res.Text); err != nil {
		out.ProtocolError = err.Error()
	}
	return out, nil, nil
}
