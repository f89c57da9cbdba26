package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
)

// fetchState returns a run's state as the core reads it (from the status
// query while it runs, from its result or failure details once closed).
// An unknown run is bad input. live is false when the run is open but no
// worker answered (the daemon is down).
func fetchState(ctx context.Context, h *core.App, id string) (*horizon.RunState, bool, error) {
	v, err := h.Run(ctx, id)
	if nf := (*core.NotFoundError)(nil); errors.As(err, &nf) {
		return nil, false, usageError{err}
	}
	if err != nil {
		return nil, false, err
	}
	return v.State, v.Live, nil
}

// listedRun is a line of `horizon list`: the core's run row with what the
// run's state adds (its status, attempts and cost). Its JSON is the
// command's output, kept as it was.
type listedRun struct {
	RunID     string         `json:"run_id"`
	Status    horizon.Status `json:"status"`
	Goal      string         `json:"goal"`
	Repo      string         `json:"repo"`
	Branch    string         `json:"branch"`
	Attempts  int            `json:"attempts"`
	Cost      float64        `json:"cost"`
	StartedAt time.Time      `json:"started_at"`
	open      bool           // the engine still runs it
}

// listRuns lists runs, newest first; a run that continued as new is
// listed once, started when its oldest history did.
func listRuns(ctx context.Context, h *core.App, req core.ListRequest) ([]listedRun, error) {
	rows, err := h.Runs(ctx, req)
	if err != nil {
		return nil, err
	}
	out := make([]listedRun, 0, len(rows))
	for _, r := range rows {
		out = append(out, listedRun{RunID: r.ID, Goal: r.Goal, Repo: r.Repo, Branch: r.Branch, StartedAt: r.StartedAt, open: r.Open()})
	}
	return out, nil
}

// follower prints what changed between two states, one line per event.
type follower struct {
	w    io.Writer
	last *horizon.RunState
}

func (f *follower) show(s *horizon.RunState) {
	prev := f.last
	f.last = s
	ts := time.Now().Format("15:04:05")
	var old []horizon.Attempt
	if prev != nil {
		old = prev.Attempts
	}
	f.attempts(ts, "", old, s.Attempts)
	if s.Plan != nil {
		f.plan(ts, prev, s)
	}
	if prev == nil || prev.Phase != s.Phase || prev.Status != s.Status {
		line := fmt.Sprintf("%s  %-10s %s", ts, s.Status, s.Phase)
		if c := s.Current(); c != nil && !s.Status.Terminal() {
			line += fmt.Sprintf(" · attempt %d/%d", c.N, s.MaxAttempts)
		}
		if rf := runningFeature(s); rf != nil && !s.Status.Terminal() {
			line += fmt.Sprintf(" · feature %s", rf.ID)
		}
		fmt.Fprintln(f.w, line)
	}
	if w := s.Waiting; w != nil && (prev == nil || prev.Waiting == nil || prev.Waiting.Kind != w.Kind || prev.Waiting.Subject != w.Subject) {
		what := string(w.Kind) + " " + w.Subject
		if w.Kind == horizon.CheckpointPlan {
			what = "the plan"
		}
		fmt.Fprintf(f.w, "%s  waiting for your approval of %s: %s\n", ts, strings.TrimSpace(what), oneLine(w.Summary, 200))
		fmt.Fprintf(f.w, "          approve: %s\n          (it costs nothing while it waits; `horizon status %s` shows the plan)\n", s.ApproveCommand(), s.RunID)
	}
}

// attempts prints the events of one list of attempts (the run's, or a
// feature's when prefix names it).
func (f *follower) attempts(ts, prefix string, prev, cur []horizon.Attempt) {
	for i := range cur {
		cur := &cur[i]
		var old *horizon.Attempt
		if i < len(prev) {
			old = &prev[i]
		}
		if cur.Tier != "" && (old == nil || old.Tier == "") {
			what := "attempt"
			if cur.Action != "" {
				what = cur.Action
			}
			fmt.Fprintf(f.w, "%s    %s%s %d at %s (%s %s): %s\n", ts, prefix, what, cur.N, cur.Tier, cur.Applier, cur.Model, oneLine(cur.Route, 120))
		}
		if cur.WorkerSession != "" && (old == nil || old.WorkerSession == "") {
			resumed := ""
			if cur.Resumed {
				resumed = " (continued after a restart)"
			}
			fmt.Fprintf(f.w, "%s    %sattempt %d worker session %s%s\n", ts, prefix, cur.N, cur.WorkerSession, resumed)
		}
		if cur.ProtocolError != "" && (old == nil || old.ProtocolError == "") {
			fmt.Fprintf(f.w, "%s    %sattempt %d worker: %s\n", ts, prefix, cur.N, cur.ProtocolError)
		}
		if cur.Report != nil && (old == nil || old.Report == nil) {
			fmt.Fprintf(f.w, "%s    %sattempt %d worker reports %s: %s\n", ts, prefix, cur.N, cur.Report.Status, oneLine(cur.Report.Summary, 100))
		}
		if cur.Gate != nil && (old == nil || old.Gate == nil) {
			fmt.Fprintf(f.w, "%s    %sattempt %d gate %s (exit %d, %d ms)\n", ts, prefix, cur.N, cur.Gate.Verdict, cur.Gate.ExitCode, cur.Gate.DurationMS)
		}
		if cur.Audit != nil && (old == nil || old.Audit == nil) {
			fmt.Fprintf(f.w, "%s    %sattempt %d audit %s", ts, prefix, cur.N, cur.Audit.Verdict)
			for _, fd := range cur.Audit.Findings {
				fmt.Fprintf(f.w, "; [%s] %s", fd.Severity, oneLine(fd.Note, 80))
			}
			fmt.Fprintln(f.w)
		}
		if cur.Outcome != "" && cur.Outcome != horizon.OutcomeRunning && (old == nil || old.Outcome != cur.Outcome) {
			fmt.Fprintf(f.w, "%s    %sattempt %d %s · %d tokens · $%.4f\n", ts, prefix, cur.N, cur.Outcome, cur.Usage.Tokens(), cur.Usage.Cost)
		}
	}
}

// plan prints a planned run's feature-level events: the plan arriving, a
// feature starting, its attempts, it being accepted, blocked, decomposed,
// skipped or put back in line, a milestone finishing, the integration gate.
func (f *follower) plan(ts string, prev, s *horizon.RunState) {
	var before *horizon.Plan
	if prev != nil {
		before = prev.Plan
	}
	if before == nil {
		c := s.Plan.Counts()
		fmt.Fprintf(f.w, "%s    plan: %s, %s, ambiguity %s (%d accepted so far)\n", ts, plural(len(s.Plan.Milestones), "milestone"), plural(c.Work(), "feature"), s.Plan.Ambiguity, c.Accepted)
		for _, m := range s.Plan.Milestones {
			var ids []string
			for _, ft := range m.Features {
				if ft.Status != horizon.FeatureDecomposed {
					ids = append(ids, ft.ID)
				}
			}
			fmt.Fprintf(f.w, "%s      %s %s [%s]: %s\n", ts, m.ID, oneLine(m.Title, 60), m.Status, strings.Join(ids, ", "))
		}
	}
	if before == nil {
		return // the listing above says where things are
	}
	for mi := range s.Plan.Milestones {
		m := &s.Plan.Milestones[mi]
		for fi := range m.Features {
			ft := &m.Features[fi]
			old, _ := before.Feature(ft.ID)
			var oldAttempts []horizon.Attempt
			if old != nil {
				oldAttempts = old.Attempts
			}
			f.attempts(ts, ft.ID+" ", oldAttempts, ft.Attempts)
			if old != nil && old.Status == ft.Status {
				continue
			}
			if old == nil && (ft.Status == horizon.FeaturePending || ft.Status == "") {
				continue // a new part: its parent's decomposition names it
			}
			f.featureEvent(ts, s, ft)
		}
		if mi < len(before.Milestones) && before.Milestones[mi].Status != m.Status && m.Status == horizon.MilestoneDone {
			fmt.Fprintf(f.w, "%s    milestone %s %s done\n", ts, m.ID, oneLine(m.Title, 60))
		}
	}
	if g := s.Integration; g != nil && (prev.Integration == nil || prev.Integration.ReceiptID != g.ReceiptID || prev.Integration.Verdict != g.Verdict) {
		fmt.Fprintf(f.w, "%s    integration gate on %s: %s (exit %d)\n", ts, s.Branch, g.Verdict, g.ExitCode)
	}
}

// featureEvent prints a feature's new status.
func (f *follower) featureEvent(ts string, s *horizon.RunState, ft *horizon.Feature) {
	switch ft.Status {
	case horizon.FeatureRunning:
		fmt.Fprintf(f.w, "%s    %s started: %s\n", ts, ft.ID, oneLine(ft.Title, 100))
	case horizon.FeatureAccepted:
		line := fmt.Sprintf("%s    %s accepted after %s", ts, ft.ID, plural(ft.AttemptCount(), "attempt"))
		if ft.Commit != "" {
			line += " · commit " + short(ft.Commit)
		}
		if n := len(ft.ReceiptIDs); n > 0 {
			line += " · receipt " + ft.ReceiptIDs[n-1]
		}
		fmt.Fprintln(f.w, line)
	case horizon.FeatureBlocked:
		what := "blocked"
		if b := ft.Blocker; b != nil {
			what = fmt.Sprintf("blocked (%s): %s", b.Type, oneLine(b.Evidence, 160))
		}
		fmt.Fprintf(f.w, "%s    %s %s\n          unblock: %s\n", ts, ft.ID, what, s.UnblockCommand(ft.ID))
	case horizon.FeatureDecomposed:
		var parts []string
		for _, m := range s.Plan.Milestones {
			for _, p := range m.Features {
				if p.Parent == ft.ID {
					parts = append(parts, p.ID)
				}
			}
		}
		fmt.Fprintf(f.w, "%s    %s decomposed into %s\n", ts, ft.ID, strings.Join(parts, ", "))
	case horizon.FeatureSkipped:
		fmt.Fprintf(f.w, "%s    %s skipped: %s\n", ts, ft.ID, oneLine(ft.Note, 120))
	default:
		fmt.Fprintf(f.w, "%s    %s back in line (%s)\n", ts, ft.ID, oneLine(ft.Note, 120))
	}
}

// runningFeature is the feature a planned run is working on, or nil.
func runningFeature(s *horizon.RunState) *horizon.Feature {
	if s.Plan == nil {
		return nil
	}
	for mi := range s.Plan.Milestones {
		for fi := range s.Plan.Milestones[mi].Features {
			if ft := &s.Plan.Milestones[mi].Features[fi]; ft.Status == horizon.FeatureRunning {
				return ft
			}
		}
	}
	return nil
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}

// follow polls the run until it closes or ctx ends, printing progress.
func follow(ctx context.Context, h *core.App, id string, w io.Writer) (*horizon.RunState, error) {
	f := &follower{w: w}
	warned := false
	for {
		s, live, err := fetchState(ctx, h, id)
		if err != nil {
			if ctx.Err() != nil {
				return f.last, ctx.Err()
			}
			return nil, err
		}
		if !live && s.Status == horizon.StatusRunning && !warned {
			fmt.Fprintln(w, "  (no worker is answering; if the daemon stopped, `horizon resume` brings it back)")
			warned = true
		}
		if live || s.Status.Terminal() {
			f.show(s)
		}
		if s.Status.Terminal() {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return f.last, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// summary prints the end of a run and returns its exit code.
func summary(w io.Writer, s *horizon.RunState) int {
	fmt.Fprintf(w, "\nrun %s %s", s.RunID, s.Status)
	if s.Reason != "" {
		fmt.Fprintf(w, ": %s", s.Reason)
	}
	if s.Plan != nil {
		c := s.Plan.Counts()
		fmt.Fprintf(w, "\n  features %d of %d accepted", c.Accepted, c.Work())
		for _, n := range []struct {
			n    int
			what string
		}{{c.Blocked, "blocked"}, {c.Skipped, "skipped"}, {c.Pending + c.Running, "not done"}} {
			if n.n > 0 {
				fmt.Fprintf(w, " · %d %s", n.n, n.what)
			}
		}
		fmt.Fprintf(w, " · attempts %d · %d tokens · $%.4f\n", s.TotalAttempts(), s.Usage.Tokens(), s.Usage.Cost)
	} else {
		fmt.Fprintf(w, "\n  attempts %d · %d tokens · $%.4f\n", len(s.Attempts), s.Usage.Tokens(), s.Usage.Cost)
	}
	if s.Handoff != "" {
		fmt.Fprintf(w, "  handoff: %s\n", s.Handoff)
	}
	if s.Plan != nil {
		for _, m := range s.Plan.Milestones {
			for _, ft := range m.Features {
				if ft.Status == horizon.FeatureBlocked {
					fmt.Fprintf(w, "  %s blocked: %s\n", ft.ID, s.UnblockCommand(ft.ID))
				}
			}
		}
		if c := s.Plan.Counts(); c.Accepted > 0 {
			fmt.Fprintf(w, "  accepted work on branch %s (one commit per feature)\n  see it: git log --stat %s..%s   merge it: git merge %s\n", s.Branch, short(s.BaseCommit), s.Branch, s.Branch)
		}
	}
	switch s.Status {
	case horizon.StatusCompleted:
		if s.Plan == nil {
			fmt.Fprintf(w, "  accepted change %s on branch %s\n  see it: git log -p %s -1   merge it: git merge %s\n", short(s.Commit), s.Branch, s.Branch, s.Branch)
		}
		return ExitOK
	case horizon.StatusFailed:
		if s.ReasonKind == horizon.ReasonBadInput {
			return ExitUsage
		}
	}
	return ExitRunEnded
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
