package activities

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

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
func (a *Activities) AgentSession(ctx context.Context, in SessionInput) (SessionOutput, error) {
	var hb SessionHeartbeat
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &hb)
	}
	agentName := AgentWorker
	prompt := in.Prompt
	if in.Role == "explorer" || in.Role == "lead" {
		agentName = AgentExplorer
	}
	if in.Role == "auditor" {
		agentName = AgentAuditor
		diff, err := laneDiff(ctx, in.Lane, in.BaseCommit)
		if err != nil {
			return SessionOutput{}, err
		}
		prompt = strings.Replace(prompt, horizon.DiffPlaceholder, diff, 1)
	}
	if err := a.mustSee("lane", in.Lane); err != nil {
		return SessionOutput{}, err
	}
	moved := a.movedFrom(hb)
	if moved {
		prompt = movedBrief(ctx, prompt, in.Lane, in.BaseCommit, hb)
	}
	activity.GetLogger(ctx).Info("session starting", "RunID", in.RunID, "Feature", in.Feature, "Role", in.Role, "Attempt", in.Attempt, "ResumeSession", hb.SessionID)

	// Keep the heartbeat alive between progress events (a long model call
	// is silent); the SDK throttles what reaches the server.
	beat := beatOptions{OnlyWithDetails: true}
	if hb.SessionID != "" {
		beat.Details = hb
	}
	heart := startHeartbeat(ctx, beat)
	defer heart.Stop()
	res, err := a.Sessions.RunSession(ctx, agent.SessionRequest{
		Directory:       in.Lane,
		Agent:           agentName,
		Model:           in.Model,
		Prompt:          prompt,
		Title:           fmt.Sprintf("horizon %s %s attempt %d (%s)", in.RunID, in.Feature, in.Attempt, in.Role),
		ResumeSessionID: hb.SessionID,
	}, func(p agent.Progress) {
		heart.Update(SessionHeartbeat{SessionID: p.SessionID, Phase: p.Phase, Tool: p.Tool, Worker: a.Identity})
	})
	heart.Stop()
	if err != nil {
		if ctx.Err() != nil {
			return SessionOutput{}, ctx.Err()
		}
		return SessionOutput{}, classifySessionError(err)
	}
	// Record the final ID synchronously: a crash from here on must continue,
	// not restart, the session.
	heart.Record(SessionHeartbeat{SessionID: res.SessionID, Phase: "done", Worker: a.Identity})

	out := SessionOutput{
		SessionID: res.SessionID,
		Resumed:   res.Resumed,
		Asked:     res.Asked,
		Usage: horizon.Usage{
			Input: res.Usage.Input, Output: res.Usage.Output, Reasoning: res.Usage.Reasoning,
			CacheRead: res.Usage.CacheRead, CacheWrite: res.Usage.CacheWrite, Cost: res.Usage.Cost,
		},
		Transcript: filepath.Join(a.runDir(in.RunID), "transcripts", fmt.Sprintf("%s-attempt-%d-%s.md", in.Feature, in.Attempt, in.Role)),
	}
	if moved && !res.Resumed && res.SessionID != hb.SessionID {
		out.Moved = movedNote(hb.SessionID, res.SessionID, hb.Worker)
		activity.GetLogger(ctx).Warn(out.Moved, "RunID", in.RunID, "Feature", in.Feature, "Attempt", in.Attempt)
	}
	if err := writeArtifact(out.Transcript, []byte(transcript(in, prompt, res))); err != nil {
		return out, err
	}
	if err := a.recordSpend(in.RunID, fmt.Sprintf("%s/%s/%d/%s", in.RunID, in.Feature, in.Attempt, in.Role), out.Usage.Cost); err != nil {
		return out, err
	}
	if in.Role == "explorer" {
		out.Notes = lastBytes(res.Text, 6000)
		return out, nil
	}
	if in.Role == "lead" {
		p, err := validPlan(in.Goal, res.Text)
		if err != nil {
			out.ProtocolError = err.Error()
		} else {
			out.Plan = &p
		}
		return out, nil
	}
	var (
		warnings []string
		perr     error
	)
	if in.Role == horizon.RoleAuditor {
		var au horizon.Audit
		au, warnings, perr = agent.ParseAudit(res.Text)
		if perr == nil {
			out.Audit = &au
		}
	} else {
		var rep horizon.Report
		rep, warnings, perr = agent.ParseReport(res.Text)
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
	return out, nil
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

// classifySessionError turns agent errors into Temporal errors: an unknown
// model is bad input (never retried); the rest retry per the policy.
func classifySessionError(err error) error {
	var um *agent.UnknownModelError
	if errors.As(err, &um) {
		return temporal.NewNonRetryableApplicationError(um.Error(), ErrTypeUnknownModel, nil)
	}
	return err
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
