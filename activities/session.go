package activities

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
)

// Agent names materialised as OpenCode agent files.
const (
	AgentWorker  = "horizon-worker"
	AgentAuditor = "horizon-auditor"
	// AgentExplorer is the read-only agent that gathers context for a
	// retrieval step (OpenCode agent horizon-lead: read, grep, glob only).
	AgentExplorer = "horizon-lead"
)

// maxDiffBytes bounds the diff attached to the auditor's brief.
const maxDiffBytes = 60000

// AgentSession runs one OpenCode session in the lane: the worker's or the
// auditor's. The session ID is heartbeated as soon as it exists; a retry
// after a crash continues that session. Success is never read from the
// session: the output carries the parsed protocol block (or the protocol
// error) for the workflow, which decides with the gate and the auditor.
//
// While it waits out an outage (OpenCode retrying the model call, failed
// attempts) it tells the workflow that scheduled it (tellOutages), so the
// run's Markdown says what it waits on; its end clears that.
func (a *Activities) AgentSession(ctx context.Context, in SessionInput) (SessionOutput, error) {
	t := a.tellOutages(ctx, in.RunID, in.Feature)
	a.tellHost(ctx, in.Watched, in.RunID, in.Feature, in.Attempt)
	out, waited, err := a.agentSession(ctx, in, t)
	t.finish(ctx, err, waited)
	return out, err
}

// agentSession is one attempt of AgentSession; waited is the outage a
// retryable failure leaves the next attempt in. Its steps: prepare the
// brief, run the session under a heartbeat, record what it cost and said,
// read its protocol block, bound what it hands back (boundOutput).
func (a *Activities) agentSession(ctx context.Context, in SessionInput, t *outageTeller) (_ SessionOutput, waited *horizon.Outage, _ error) {
	out, res, waited, err := a.sessionTurn(ctx, in, t)
	if err != nil {
		return out, waited, err
	}
	readProtocol(ctx, in, res.Text, &out)
	if err := boundOutput(a.runDir(in.RunID), in, &out); err != nil {
		return out, nil, err
	}
	return out, nil, nil
}

// sessionTurn is one attempt of a session without its answer read: the
// request prepared (a crashed attempt's session continued, from the
// heartbeat), the session run under a heartbeat, what it cost and said
// recorded. Each activity that runs a session reads its own block from
// res.Text.
func (a *Activities) sessionTurn(ctx context.Context, in SessionInput, t *outageTeller) (_ SessionOutput, res agent.SessionResult, waited *horizon.Outage, _ error) {
	a.notifyOutage(ctx, in)
	var hb SessionHeartbeat
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &hb)
	}
	req, moved, err := a.prepareSession(ctx, in, hb)
	if err != nil {
		return SessionOutput{}, res, nil, err
	}
	activity.GetLogger(ctx).Info("session starting", "RunID", in.RunID, "Feature", in.Feature, "Role", in.Role, "Purpose", in.Purpose, "Attempt", in.Attempt, "ResumeSession", hb.SessionID)
	res, waited, err = a.runSession(ctx, req, hb, t)
	if err != nil {
		return SessionOutput{}, res, waited, err
	}
	out, err := a.recordSession(ctx, in, req.Prompt, res, hb, moved)
	return out, res, nil, err
}

// prepareSession is the session's request: the role's agent, the brief
// (the auditor's with the lane's diff, a moved session's with what the
// lane holds), the worker's consults registered. moved says the session
// was last run by another daemon (hb).
func (a *Activities) prepareSession(ctx context.Context, in SessionInput, hb SessionHeartbeat) (_ agent.SessionRequest, moved bool, _ error) {
	agentName := AgentWorker
	prompt := in.Prompt
	if in.Role == horizon.RoleExplorer || in.Role == horizon.RoleLead {
		agentName = AgentExplorer
	}
	if in.Role == horizon.RoleAuditor {
		agentName = AgentAuditor
		diff, err := laneDiff(ctx, in.Lane, in.BaseCommit)
		if err != nil {
			return agent.SessionRequest{}, false, err
		}
		prompt = strings.Replace(prompt, horizon.DiffPlaceholder, diff, 1)
	}
	if err := a.mustSee("lane", in.Lane); err != nil {
		return agent.SessionRequest{}, false, err
	}
	if in.Role == horizon.RoleWorker {
		if err := a.registerConsults(in); err != nil {
			return agent.SessionRequest{}, false, err
		}
	}
	var perm []agent.PermissionRule
	if in.Role == horizon.RoleWorker && in.Project != nil {
		// The lane's preparation wrote them; the session's rules and the
		// brief come from the manifests as they are now.
		ps, err := a.projectSpecialists(ctx, *in.Project)
		if err != nil {
			// The run checked them when it started: one edited since is
			// left out of this session, not the end of the attempt.
			activity.GetLogger(ctx).Warn("the repository's specialists are not offered to the worker", "RunID", in.RunID, "Feature", in.Feature, "Error", err.Error())
		} else {
			perm, prompt = sessionRules(ps), prompt+ps.Brief()
		}
	}
	moved = a.movedFrom(hb)
	if moved {
		prompt = movedBrief(ctx, prompt, in.Lane, in.BaseCommit, hb)
	}
	return agent.SessionRequest{
		Directory:       in.Lane,
		Agent:           agentName,
		Model:           in.Model,
		Prompt:          prompt,
		Title:           SessionTitle(in.RunID, in.Feature, in.Attempt, horizon.Role(in.part())),
		ResumeSessionID: cmp.Or(hb.SessionID, in.ResumeSessionID),
		Permission:      perm,
	}, moved, nil
}

// runSession runs req under a heartbeat carrying the session's progress
// (hb: the previous attempt's), telling the run (t) when OpenCode retries
// the model call and when the model answers again. A retryable failure
// returns the outage the next attempt goes on in (waited).
func (a *Activities) runSession(ctx context.Context, req agent.SessionRequest, hb SessionHeartbeat, t *outageTeller) (_ agent.SessionResult, waited *horizon.Outage, _ error) {
	// Keep the heartbeat alive between progress events (a long model call
	// is silent); the SDK throttles what reaches the server.
	if hb.Retry != nil {
		// The previous attempt ended (its timeout, a crash) while OpenCode
		// retried: the outage goes on from then.
		hb.Outage = outageAfter(hb.Outage, hb.Retry, errors.New(hb.Retry.Message), time.Now())
		hb.Retry = nil // this attempt reports its own
	}
	if hb.Outage != nil && activity.IsActivity(ctx) && activity.GetInfo(ctx).Attempt > 1 {
		// A retry of a session that failed on infrastructure: the run
		// still waits, until this attempt gets going.
		t.tell(outageOf(hb.Outage, nil))
	}
	beat := beatOptions{OnlyWithDetails: true}
	if hb.SessionID != "" || hb.Outage != nil {
		beat.Details = hb
	}
	heart := startHeartbeat(ctx, beat)
	defer heart.Stop()
	cur := hb // the latest details; progress comes from this goroutine
	var retrySince time.Time
	retryTold, toldRetry := false, 0 // OpenCode's retry last told
	pending := hb.Outage != nil      // a retried session, not going yet
	res, err := a.Sessions.RunSession(ctx, req, func(p agent.Progress) {
		cur = SessionHeartbeat{SessionID: p.SessionID, Phase: p.Phase, Tool: p.Tool, Outage: hb.Outage, Worker: a.Identity}
		if p.Retry != nil {
			if retrySince.IsZero() {
				retrySince = time.Now()
			}
			cur.Retry = &SessionRetry{Attempt: p.Retry.Attempt, Message: p.Retry.Message, Next: p.Retry.Next, Since: retrySince}
			if !retryTold || p.Retry.Attempt != toldRetry {
				// OpenCode retries the model call: the run waits from now.
				retryTold, toldRetry = true, p.Retry.Attempt
				t.tell(outageOf(hb.Outage, cur.Retry))
			}
		} else {
			retrySince = time.Time{}
			if (retryTold || pending) && answering(p.Phase) {
				// The model answers again (a busy session alone may be
				// one more call about to fail).
				retryTold, pending = false, false
				t.over()
			}
		}
		heart.Update(cur)
	})
	heart.Stop()
	if err != nil {
		if ctx.Err() != nil {
			return res, nil, ctx.Err()
		}
		cerr := classifySessionError(err)
		if retryable(cerr) {
			// The next attempt, and `horizon status` meanwhile, read
			// since when the session has been failing and why.
			cur.Outage = outageAfter(hb.Outage, cur.Retry, err, time.Now())
			cur.Retry = nil
			heart.Record(cur)
			waited := outageOf(cur.Outage, nil)
			return res, &waited, cerr
		}
		return res, nil, cerr
	}
	// Record the final ID synchronously: a crash from here on must continue,
	// not restart, the session.
	heart.Record(SessionHeartbeat{SessionID: res.SessionID, Phase: "done", Worker: a.Identity})
	return res, nil, nil
}

// recordSession is the session's output without its protocol block: its
// usage (less what an advised session's first call counted), the
// transcript written, the worker's consults, the spend recorded.
func (a *Activities) recordSession(ctx context.Context, in SessionInput, prompt string, res agent.SessionResult, hb SessionHeartbeat, moved bool) (SessionOutput, error) {
	if in.ResumeSessionID != "" {
		// A session continued after the advisor woke it: what it cost
		// before was counted by the call that ran it.
		res.Usage = minusUsage(res.Usage, in.PriorUsage)
	}
	out := SessionOutput{
		SessionID: res.SessionID,
		Resumed:   res.Resumed,
		Asked:     res.Asked,
		Usage: horizon.Usage{
			Input: res.Usage.Input, Output: res.Usage.Output, Reasoning: res.Usage.Reasoning,
			CacheRead: res.Usage.CacheRead, CacheWrite: res.Usage.CacheWrite, Cost: res.Usage.Cost,
		},
		Transcript: filepath.Join(a.runDir(in.RunID), "transcripts", fmt.Sprintf("%s-attempt-%d-%s.md", in.Feature, in.Attempt, in.part())),
	}
	if moved && !res.Resumed && res.SessionID != hb.SessionID {
		out.Moved = movedNote(hb.SessionID, res.SessionID, hb.Worker)
		activity.GetLogger(ctx).Warn(out.Moved, "RunID", in.RunID, "Feature", in.Feature, "Attempt", in.Attempt)
	}
	if err := writeArtifact(out.Transcript, []byte(transcript(in, prompt, res))); err != nil {
		return out, err
	}
	if in.Role == horizon.RoleWorker {
		if err := a.addConsults(in, &out); err != nil {
			return out, err
		}
	}
	spendKey := fmt.Sprintf("%s/%s/%d/%s", in.RunID, in.Feature, in.Attempt, in.part())
	if in.ResumeSessionID != "" {
		spendKey += "/advised"
	}
	if err := a.recordSpend(in.RunID, spendKey, out.Usage.Cost); err != nil {
		return out, err
	}
	return out, nil
}

// readProtocol reads the session's final message (text) as its role
// answers: the explorer's notes, the lead's plan, the auditor's audit, the
// worker's report. A block that does not parse is the workflow's to judge
// (out.ProtocolError), not an activity failure.
func readProtocol(ctx context.Context, in SessionInput, text string, out *SessionOutput) {
	switch in.Role {
	case horizon.RoleExplorer:
		// Bounded with the other hand-backs (boundOutput): the head and
		// the file that keeps the whole.
		out.Notes = strings.TrimSpace(text)
		return
	case horizon.RoleLead:
		if in.Purpose == PurposeDispositions {
			ds, err := agent.ParseDispositions(text)
			if err != nil {
				out.ProtocolError = err.Error()
			}
			out.Dispositions = ds
			return
		}
		p, err := validPlan(in.Goal, text)
		if err != nil {
			out.ProtocolError = err.Error()
		} else {
			out.Plan = &p
		}
		return
	}
	var (
		warnings []string
		perr     error
	)
	if in.Role == horizon.RoleAuditor {
		var au horizon.Audit
		au, warnings, perr = agent.ParseAudit(text)
		if perr == nil {
			confirmFindings(in.Lane, &au)
			out.Audit = &au
		}
	} else {
		var rep horizon.Report
		rep, warnings, perr = agent.ParseReport(text)
		if perr == nil {
			out.Report = &rep
		}
	}
	if perr != nil {
		out.ProtocolError = perr.Error()
	}
	if len(warnings) > 0 {
		activity.GetLogger(ctx).Warn("protocol block accepted with remarks", "Role", in.Role, "Attempt", in.Attempt, "Warnings", warnings)
	}
}

// confirmFindings marks the findings whose file exists in the lane and
// holds the line they name: evidence horizon checked, which the
// dispositions' rule trusts (horizon.Rule). A finding that names no line
// is confirmed by its file alone.
func confirmFindings(lane string, au *horizon.Audit) {
	for i := range au.Findings {
		f := &au.Findings[i]
		if f.File == "" || lane == "" || !filepath.IsLocal(filepath.FromSlash(f.File)) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(lane, filepath.FromSlash(f.File)))
		if err != nil {
			continue
		}
		f.Confirmed = f.Line <= bytes.Count(data, []byte("\n"))+1
	}
}

// minusUsage is u without what prior counted (never below zero).
func minusUsage(u agent.Usage, prior horizon.Usage) agent.Usage {
	return agent.Usage{
		Input: max(u.Input-prior.Input, 0), Output: max(u.Output-prior.Output, 0), Reasoning: max(u.Reasoning-prior.Reasoning, 0),
		CacheRead: max(u.CacheRead-prior.CacheRead, 0), CacheWrite: max(u.CacheWrite-prior.CacheWrite, 0), Cost: max(u.Cost-prior.Cost, 0),
	}
}

func transcript(in SessionInput, prompt string, res agent.SessionResult) string {
	return fmt.Sprintf("# %s · %s · attempt %d · %s\n\nsession `%s` · model `%s` · resumed %v · %d in / %d out tokens · $%.4f\n\n## Brief\n\n%s\n\n## Final message\n\n%s\n",
		in.RunID, in.Feature, in.Attempt, in.Role, res.SessionID, in.Model, res.Resumed, res.Usage.Input, res.Usage.Output, res.Usage.Cost, prompt, res.Text)
}

// laneDiff is the change under audit: tracked and untracked files against
// the base commit, bounded.
func laneDiff(ctx context.Context, lane, base string) (string, error) {
	// intent-to-add makes untracked files visible to diff without staging content.
	if _, err := git(ctx, lane, "add", "-A", "--intent-to-add", "--", "."); err != nil {
		return "", fmt.Errorf("audit diff: %w", err)
	}
	args := append([]string{"diff", base, "--", "."}, excluded...)
	d, err := git(ctx, lane, args...)
	if err != nil {
		return "", fmt.Errorf("audit diff: %w", err)
	}
	if len(d) > maxDiffBytes {
		d = d[:maxDiffBytes] + fmt.Sprintf("\n…[diff cut at %d of %d bytes; read the files for the rest]", maxDiffBytes, len(d))
	}
	if d == "" {
		d = "(no changes against the base commit)"
	}
	return d, nil
}

// classifySessionError turns agent errors into Temporal errors. An
// unknown model is bad input; a provider that refuses in words waiting
// cannot change is ErrTypeProviderRefused, with the blocker it makes; a
// step that failed on its own content (the context overflowed, the output
// was cut) is ErrTypeSessionFailed, which another attempt, not a retry of
// this one, may fix. Everything else is an outage (the provider
// unreachable or answering 5xx, OpenCode gone, the disk full) and is
// retried until it passes or the run's budget ends it.
func classifySessionError(err error) error {
	var um *agent.UnknownModelError
	if errors.As(err, &um) {
		return temporal.NewNonRetryableApplicationError(um.Error(), ErrTypeUnknownModel, nil)
	}
	var se *agent.SessionError
	if !errors.As(err, &se) {
		return err
	}
	if b, ok := refusal(se); ok {
		return temporal.NewNonRetryableApplicationError(b.Evidence, ErrTypeProviderRefused, nil, b)
	}
	if sessionFault(se) {
		return temporal.NewNonRetryableApplicationError(se.Error(), ErrTypeSessionFailed, nil)
	}
	return err
}

// retryable reports whether the engine retries err.
func retryable(err error) bool {
	var app *temporal.ApplicationError
	return !errors.As(err, &app) || !app.NonRetryable()
}

// Words providers use when a model is gone or an account is out of quota;
// matched lower-cased against the provider's message.
var (
	goneModelWords = []string{"model_not_found", "model not found", "does not exist", "no such model", "unknown model",
		"not a valid model", "decommissioned", "has been deprecated", "is not supported", "no longer available"}
	quotaWords = []string{"insufficient_quota", "exceeded your current quota", "quota exceeded", "quota has been exceeded",
		"billing", "credit balance", "out of credits", "insufficient credits", "payment required"}
)

// refusal returns the typed blocker for a provider's answer that waiting
// cannot change: credentials refused (401, 403, OpenCode's
// ProviderAuthError) are missing_credential; a model the provider does not
// serve, or an account it says is out of quota, is unavailable_service.
// Rate limits (429 without quota words), timeouts and 5xx pass.
func refusal(se *agent.SessionError) (horizon.Blocker, bool) {
	msg := strings.ToLower(se.Message)
	var typ horizon.BlockerType
	switch {
	case se.Name == "ProviderAuthError" || se.StatusCode == 401 || se.StatusCode == 403:
		typ = horizon.BlockerMissingCredential
	case se.StatusCode == 402 || (se.StatusCode == 429 || se.StatusCode == 0 || se.StatusCode == 400) && containsAny(msg, quotaWords):
		typ = horizon.BlockerUnavailableService
	case se.StatusCode == 404 || (se.StatusCode == 400 || se.StatusCode == 0) && containsAny(msg, goneModelWords):
		typ = horizon.BlockerUnavailableService
	default:
		return horizon.Blocker{}, false
	}
	what := se.Name
	if se.StatusCode != 0 {
		what = fmt.Sprintf("HTTP %d", se.StatusCode)
	}
	words := strings.TrimSpace(se.Message)
	if words == "" {
		words = "(no message)"
	}
	b, err := horizon.NewBlocker(typ, fmt.Sprintf("the model provider refused the session (%s): %s", what, words))
	return b, err == nil
}

// sessionFault reports a step that failed on what it was asked, not on the
// infrastructure: retrying the same turn gives the same error.
func sessionFault(se *agent.SessionError) bool {
	switch se.Name {
	case "ContextOverflowError", "MessageOutputLengthError", "StructuredOutputError":
		return true
	}
	return se.StatusCode == 400 || se.StatusCode == 413 || se.StatusCode == 422
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// outageAfter extends the session's run of failed attempts with err:
// since the first failure (or OpenCode's first retry), with the last error
// and the tries so far (OpenCode's retries within the attempt count).
func outageAfter(prev *SessionOutage, retry *SessionRetry, err error, now time.Time) *SessionOutage {
	since := now
	if retry != nil && !retry.Since.IsZero() {
		since = retry.Since
	}
	tries := 1
	if retry != nil {
		tries = max(retry.Attempt, 1)
	}
	if prev != nil {
		tries += prev.Tries
		if !prev.Since.IsZero() && prev.Since.Before(since) {
			since = prev.Since
		}
	}
	return &SessionOutage{Since: since, Error: err.Error(), Tries: tries}
}

// validPlan parses the lead's horizon-plan block and validates it as a
// plan of goal; the error names every problem, for the lead's next try.
func validPlan(goal, text string) (horizon.Plan, error) {
	block, _, err := agent.ParsePlan(text)
	if err != nil {
		return horizon.Plan{}, err
	}
	return horizon.PlanFromBlock(goal, block)
}

// outageOf is the outage a session's heartbeat says it waits out: its
// failed attempts (prev), and OpenCode's retry of the model call now.
func outageOf(prev *SessionOutage, retry *SessionRetry) horizon.Outage {
	var o horizon.Outage
	if prev != nil {
		o = horizon.Outage{Since: prev.Since, Tries: prev.Tries, LastError: prev.Error}
	}
	if retry != nil {
		if o.Since.IsZero() || retry.Since.Before(o.Since) {
			o.Since = retry.Since
		}
		o.Tries += max(retry.Attempt, 1)
		o.Next, o.LastError = retry.Next, retry.Message
	}
	return o
}

// answering reports a session phase that only a model's answer brings:
// a tool runs, or the session is done.
func answering(phase string) bool {
	return phase == "tool" || phase == "done"
}
