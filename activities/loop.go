package activities

// The loop (`horizon loop`): one persistent OpenCode session, prompted up to
// N times by LoopWorkflow, in a lane on branch horizon/loop-<id>. Each
// activation is one LoopActivation: a turn of the same session, crash safe
// like a worker's session (the session ID and the activation's marker are
// heartbeated, and the prompt carries the marker, so a retry waits for the
// turn it sent instead of sending it again). CompactLoop compacts the
// session between activations; FinishLoop commits the lane.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/applier"
	"github.com/horizon/horizon/ladder"
)

// Compactor is what a loop needs of OpenCode besides sessions: the model's
// context window and compaction. *agent.Server satisfies it.
type Compactor interface {
	ContextLimit(ctx context.Context, dir, model string) (int, error)
	Summarize(ctx context.Context, dir, sessionID, model string) error
}

// LoopBranch is the branch a loop leaves; id is the loop's ID
// ("loop-<time>-<hex>", its workflow ID).
func LoopBranch(id string) string { return "horizon/" + id }

// LoopFeature is what stands for the feature where a loop's activation
// goes where a feature's attempt would (the gate, the advisor's watchdog,
// SessionHost): the activation is the attempt.
const LoopFeature = "loop"

// LoopSessionTitle is the title of loop id's session in OpenCode, by
// which the advisor's watchdog finds it.
func LoopSessionTitle(id string) string { return "horizon " + id }

// LoopInput is one `horizon loop`.
type LoopInput struct {
	ID         string // the loop's ID, also its workflow ID
	Prompt     string // the goal, unchanged for every activation
	Repo       string // the repository's root (absolute)
	BaseCommit string // where the lane is cut
	Role       string // a leaderboard role: it picks the model, once
	// Model, when set (models.default), is the loop's model whatever the
	// role ranks.
	Model      string
	ModelsFile string
	Max        int     // activations, the first included
	CompactAt  float64 // occupancy at which the session is compacted
	Gate       bool    // satisfied counts only when the gate passes
	// ContextLimit, when positive (--context-limit), is the model's
	// context window in tokens, instead of OpenCode's catalog.
	ContextLimit int `json:",omitempty"`
}

// LoopPlan is how the loop runs, fixed by PrepareLoop.
type LoopPlan struct {
	Agent string
	Model string // provider/model
	Paid  bool
	// Local is the role's best-ranked local model ("" when none): the
	// spend authority moves a metered loop's turns to it near a ceiling.
	Local  string
	Dir    string // the lane
	Branch string
	Base   string
	// ContextLimit is the model's context window per OpenCode's provider
	// catalogue (0: unknown, and the session is never compacted).
	ContextLimit int
	// Review is the model that reviews for the auditor's role (the
	// advisor's watchdog without advisor.watchdog_model), ReviewLocal the
	// local one that ranks for it (near a spend ceiling); "" when none.
	Review      string `json:",omitempty"`
	ReviewLocal string `json:",omitempty"`
}

// LoopActivationInput is activation Activation of the loop.
type LoopActivationInput struct {
	Loop       LoopInput
	Plan       LoopPlan
	SessionID  string // the loop's session ("" before the first activation)
	Activation int    // k, from 1
	Prompt     string // the brief (horizon.LoopBrief), starting with the marker
	// Prior, when set, is the activation's usage already counted: an
	// advisor's blocker woke the session after the activation's report,
	// and this call waits for the turn that answers it. Its output counts
	// only what came after (and its spend is recorded apart).
	Prior *horizon.Usage `json:",omitempty"`
	// Watched says the advisor's watchdog reviews this activation: each
	// try tells the loop's workflow which worker runs it
	// (SignalSessionHost), so the watchdog runs where the loop's session
	// is.
	Watched bool `json:",omitempty"`
}

// LoopActivationOutput is what one activation ended with.
type LoopActivationOutput struct {
	SessionID string
	// Report is the activation's horizon-report; ProtocolError says why
	// there is none.
	Report        *horizon.Report `json:",omitempty"`
	ProtocolError string          `json:",omitempty"`
	Usage         horizon.Usage
	// Context is the last assistant message's input+output+reasoning
	// tokens: over the plan's ContextLimit, the session's occupancy.
	Context int64
	Resumed bool
	// Moved says the session could not be continued on this worker (it
	// lives in another worker's OpenCode store) and a fresh one took over
	// ("session moved: old → new (...)"); empty otherwise.
	Moved string `json:",omitempty"`
}

// LoopHeartbeat is an activation's heartbeat: the session, and which
// activation's prompt was sent already.
type LoopHeartbeat struct {
	SessionHeartbeat
	Activation int
	Prompted   bool
}

// LoopCompactInput compacts the loop's session before an activation.
type LoopCompactInput struct {
	Loop       LoopInput
	Plan       LoopPlan
	SessionID  string
	Activation int // the activation the compaction prepares
}

// LoopEnd is what FinishLoop records.
type LoopEnd struct {
	Loop        LoopInput
	Plan        LoopPlan
	SessionID   string
	Status      horizon.LoopStatus
	Activations int
	Compactions int
	Cost        float64
	Report      *horizon.Report
	Error       string
	Moves       []string              `json:",omitempty"`
	Advice      []LoopAdvice          `json:",omitempty"`
	Notes       *horizon.AdviceCounts `json:",omitempty"`
}

// LoopAdvice is the advisor's watch of one loop activation: every note it
// judged with its verdict (in order), and its record on disk.
type LoopAdvice struct {
	Activation int                    `json:"activation"`
	File       string                 `json:"file,omitempty"`
	Records    []horizon.AdviceRecord `json:"records"`
}

// LoopResult is LoopWorkflow's result, and `horizon loop --json`.
type LoopResult struct {
	Loop        string             `json:"loop"`
	Status      horizon.LoopStatus `json:"status"`
	Session     string             `json:"session"`
	Model       string             `json:"model"`
	Role        string             `json:"role"`
	Activations int                `json:"activations"`
	Compactions int                `json:"compactions"`
	Branch      string             `json:"branch,omitempty"`
	Commit      string             `json:"commit,omitempty"`
	Cost        float64            `json:"cost"`
	Report      *horizon.Report    `json:"report,omitempty"`
	Error       string             `json:"error,omitempty"`
	// Moves are the activations whose session could not be continued on
	// the worker that ran them (a cluster: another worker's OpenCode
	// store) and started afresh there, each as "session moved: ...".
	Moves []string `json:"moves,omitempty"`
	// Paused, while the loop waits at a spend ceiling, says why and how
	// to raise it.
	Paused string `json:"paused,omitempty"`
	// Advice is the advisor's watch of each activation (advisor.enabled),
	// Notes its notes counted by verdict: delivered into the session,
	// downgraded, refuted by the fact check, ...
	Advice []LoopAdvice          `json:"advice,omitempty"`
	Notes  *horizon.AdviceCounts `json:"notes,omitempty"`
}

// loopLaneDir is a loop's worktree, under "_loops": no run has that name,
// so `horizon gc` leaves it to FinishLoop.
func (a *Activities) loopLaneDir(id string) string { return filepath.Join(a.lanesDir(), "_loops", id) }

// PrepareLoop fixes the loop's model (the role's best-ranked connected
// model, or models.default) and its context window, and makes its lane.
func (a *Activities) PrepareLoop(ctx context.Context, in LoopInput) (LoopPlan, error) {
	defer keepAlive(ctx)()
	if err := a.mustSee("repository", in.Repo); err != nil {
		return LoopPlan{}, err
	}
	role, err := horizon.ParseLoopRole(in.Role)
	if err != nil {
		return LoopPlan{}, badInput("loop %s: %v", in.ID, err)
	}
	lb, err := LoadLeaderboard(in.ModelsFile)
	if err != nil {
		return LoopPlan{}, badInput("loop %s: %v", in.ID, err)
	}
	connected, err := a.Sessions.Models(ctx, in.Repo)
	if err != nil {
		return LoopPlan{}, fmt.Errorf("prepare loop %s: models OpenCode can use: %w", in.ID, err)
	}
	connected = openCodeRoutes(connected)
	model := in.Model
	if k := applierOf(model); model != "" && k != string(applier.OpenCode) {
		return LoopPlan{}, badInput("loop %s: --model %s runs on %s, and a loop's activations are turns of one OpenCode session (compaction, the next turn's marker): pick an OpenCode route (`horizon models` lists them)", in.ID, model, k)
	}
	if model == "" {
		c, err := lb.Resolve(string(role), connected)
		if err != nil {
			return LoopPlan{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("loop %s: role %s has no model: %v", in.ID, role, err), ErrTypeUnknownModel, nil)
		}
		model = c.Route
	} else if err := a.Sessions.ValidateModel(ctx, in.Repo, model); err != nil {
		return LoopPlan{}, classifySessionError(fmt.Errorf("prepare loop %s: %w", in.ID, err))
	}
	plan := LoopPlan{Agent: AgentWorker, Model: model, Paid: Paid(lb, model), Branch: LoopBranch(in.ID), Base: in.BaseCommit, Dir: a.loopLaneDir(in.ID)}
	if c, err := lb.ResolveLocal(string(role), connected); err == nil && plan.Paid {
		plan.Local = c.Route
	}
	plan.Review, plan.ReviewLocal = reviewModels(lb, in.Model, connected)
	if c, ok := a.Sessions.(Compactor); ok && in.ContextLimit <= 0 {
		if plan.ContextLimit, err = c.ContextLimit(ctx, in.Repo, model); err != nil {
			return LoopPlan{}, fmt.Errorf("prepare loop %s: %w", in.ID, err)
		}
		if plan.ContextLimit <= 0 {
			// Occupancy needs a window: without one the loop would never
			// compact, and its session would overflow instead.
			return LoopPlan{}, badInput("loop %s: OpenCode's catalog gives %s no context window, so the loop could not tell when to compact its session; give the window in tokens with --context-limit N", in.ID, model)
		}
	}
	if in.ContextLimit > 0 {
		plan.ContextLimit = in.ContextLimit
	}
	if err := branchLane(ctx, in.Repo, plan.Dir, plan.Branch, in.BaseCommit, "loop "+in.ID); err != nil {
		return LoopPlan{}, err
	}
	return plan, nil
}

// reviewModels are the models the advisor's watchdog may use beside a
// loop, chosen as for a run's auditor: the forced model (models.default),
// else the auditor's best-ranked connected one; local, the one that ranks
// for it near a spend ceiling.
func reviewModels(lb *ladder.Leaderboard, forced string, connected []string) (review, local string) {
	if forced != "" {
		if !Paid(lb, forced) {
			local = forced
		}
		return forced, local
	}
	if c, err := lb.Resolve(string(horizon.RoleAuditor), connected); err == nil {
		review = c.Route
	}
	if c, err := lb.ResolveLocal(string(horizon.RoleAuditor), connected); err == nil {
		local = c.Route
	}
	return review, local
}

// sessionHere reports whether this worker's OpenCode knows session sid:
// false only when it says it does not (a store it cannot read counts as
// known, and the session's own run says what is wrong).
func (a *Activities) sessionHere(ctx context.Context, dir, sid string) bool {
	r, ok := a.Sessions.(interface {
		Transcript(ctx context.Context, dir, sid string) ([]agent.Message, error)
	})
	if !ok {
		return true
	}
	_, err := r.Transcript(ctx, dir, sid)
	return err == nil || !agent.IsNotFound(err)
}

// movedLoop is an activation's move record ("" when it did not move).
func movedLoop(old, new, why string) string {
	if old == "" {
		return ""
	}
	return fmt.Sprintf("session moved: %s → %s (%s); it started afresh, told what the lane holds", old, new, why)
}

// LoopActivation runs one activation: a turn of the loop's session (the
// first creates it) with the brief as prompt, and the report it ends with.
// A retry after a crash continues the heartbeated session and, when the
// session already holds this activation's prompt (its marker), waits for
// or returns that turn instead of prompting again.
func (a *Activities) LoopActivation(ctx context.Context, in LoopActivationInput) (LoopActivationOutput, error) {
	a.tellHost(ctx, in.Watched, in.Loop.ID, LoopFeature, in.Activation)
	var hb LoopHeartbeat
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &hb)
	}
	if err := a.mustSee("loop lane", in.Plan.Dir); err != nil {
		return LoopActivationOutput{}, err
	}
	k := in.Activation
	sid := in.SessionID
	if hb.SessionID != "" {
		sid = hb.SessionID
	}
	log := activity.GetLogger(ctx)
	log.Info("loop activation starting", "Loop", in.Loop.ID, "Activation", k, "Model", in.Plan.Model, "Session", sid, "Prompted", hb.Prompted && hb.Activation == k)

	beat := beatOptions{OnlyWithDetails: true}
	if hb.SessionID != "" {
		beat.Details = hb
	}
	heart := startHeartbeat(ctx, beat)
	defer heart.Stop()
	// A session in another worker's OpenCode store cannot be continued
	// here: a fresh one takes over, told what the lane already holds, and
	// the loop's results say so.
	// (A daemon restarted on the same machine has a new identity but the
	// same store: its session is continued.)
	moved, lost := "", "not in this worker's store"
	if sid != "" && !a.sessionHere(ctx, in.Plan.Dir, sid) {
		if a.movedFrom(hb.SessionHeartbeat) {
			lost = "worker " + hb.Worker + " lost"
		}
		moved, sid = sid, ""
		in.Prompt = movedBrief(ctx, in.Prompt, in.Plan.Dir, in.Plan.Base, hb.SessionHeartbeat)
	}
	req := agent.SessionRequest{
		Directory:       in.Plan.Dir,
		Agent:           in.Plan.Agent,
		Model:           in.Plan.Model,
		Prompt:          in.Prompt,
		Title:           LoopSessionTitle(in.Loop.ID),
		ResumeSessionID: sid,
	}
	if sid != "" {
		// The marker tells a new turn from one a crashed attempt sent.
		req.Turn = horizon.LoopMarker(in.Loop.ID, k, in.Loop.Max)
	}
	prompted := hb.Prompted && hb.Activation == k
	res, err := a.Sessions.RunSession(ctx, req, func(p agent.Progress) {
		if p.Phase != "created" && p.Phase != "resumed" {
			prompted = true
		}
		d := LoopHeartbeat{SessionHeartbeat: SessionHeartbeat{SessionID: p.SessionID, Phase: p.Phase, Tool: p.Tool, Worker: a.Identity}, Activation: k, Prompted: prompted}
		if p.Phase == "created" || p.Phase == "prompted" {
			heart.Record(d) // what a retry must know, at once
		} else {
			heart.Update(d)
		}
	})
	heart.Stop()
	if err != nil {
		if ctx.Err() != nil {
			return LoopActivationOutput{SessionID: res.SessionID}, ctx.Err()
		}
		return LoopActivationOutput{SessionID: res.SessionID}, classifySessionError(err)
	}
	out := LoopActivationOutput{
		SessionID: res.SessionID, Resumed: res.Resumed, Context: res.Context,
		Moved: movedLoop(moved, res.SessionID, lost),
		Usage: horizon.Usage{Input: res.Usage.Input, Output: res.Usage.Output, Reasoning: res.Usage.Reasoning,
			CacheRead: res.Usage.CacheRead, CacheWrite: res.Usage.CacheWrite, Cost: res.Usage.Cost},
	}
	rep, _, perr := agent.ParseReport(res.Text)
	var pe *agent.ProtocolError
	switch {
	case perr == nil:
		out.Report = &rep
	case errors.As(perr, &pe):
		out.ProtocolError = pe.Reason
	default:
		out.ProtocolError = perr.Error()
	}
	key := fmt.Sprintf("loop/%s/%d", in.Loop.ID, k)
	if p := in.Prior; p != nil {
		// The turn a blocker woke: what the activation's first call did
		// not count is this call's (the session's usage is counted from
		// the activation's prompt on).
		out.Usage = usageAfter(out.Usage, *p)
		key += "/woken"
	}
	if err := a.recordSpend(in.Loop.ID, key, out.Usage.Cost); err != nil {
		return out, err
	}
	log.Info("loop activation ended", "Loop", in.Loop.ID, "Activation", k, "Session", out.SessionID, "Context", out.Context, "ProtocolError", out.ProtocolError)
	return out, nil
}

// usageAfter is what total holds beyond prior, never below zero.
func usageAfter(total, prior horizon.Usage) horizon.Usage {
	return horizon.Usage{
		Input: max(total.Input-prior.Input, 0), Output: max(total.Output-prior.Output, 0), Reasoning: max(total.Reasoning-prior.Reasoning, 0),
		CacheRead: max(total.CacheRead-prior.CacheRead, 0), CacheWrite: max(total.CacheWrite-prior.CacheWrite, 0), Cost: max(total.Cost-prior.Cost, 0),
	}
}

// CompactLoop compacts the loop's session (OpenCode's summarize). A retry
// after a crash finds the summary written and does nothing.
func (a *Activities) CompactLoop(ctx context.Context, in LoopCompactInput) error {
	defer keepAlive(ctx)()
	c, ok := a.Sessions.(Compactor)
	if !ok {
		return badInput("loop %s: this worker's sessions cannot be compacted", in.Loop.ID)
	}
	if err := c.Summarize(ctx, in.Plan.Dir, in.SessionID, in.Plan.Model); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return classifySessionError(fmt.Errorf("compact loop %s before activation %d: %w", in.Loop.ID, in.Activation, err))
	}
	activity.GetLogger(ctx).Info("loop session compacted", "Loop", in.Loop.ID, "Session", in.SessionID, "Activation", in.Activation)
	return nil
}

// FinishLoop commits what the loop changed onto its branch (once: a retry
// finds the worktree gone) and removes the lane's worktree.
func (a *Activities) FinishLoop(ctx context.Context, in LoopEnd) (LoopResult, error) {
	defer keepAlive(ctx)()
	res := LoopResult{Loop: in.Loop.ID, Status: in.Status, Session: in.SessionID, Model: in.Plan.Model, Role: in.Loop.Role,
		Activations: in.Activations, Compactions: in.Compactions, Branch: in.Plan.Branch, Cost: in.Cost, Report: in.Report, Error: in.Error, Moves: in.Moves,
		Advice: in.Advice, Notes: in.Notes}
	if in.Plan.Branch == "" {
		return res, nil // the lane was never made
	}
	msg := fmt.Sprintf("horizon %s (%s after %d of %d activations)\n\n%s\n\nHorizon-Loop: %s\n",
		in.Loop.ID, in.Status, in.Activations, in.Loop.Max, oneLine(in.Loop.Prompt, 400), in.Loop.ID)
	commit, err := commitBranchLane(ctx, in.Loop.Repo, in.Plan.Dir, in.Plan.Branch, in.Plan.Base, msg, "finish "+in.Loop.ID)
	if err != nil {
		return res, err
	}
	res.Commit = commit
	return res, nil
}
