package horizon

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/horizon/horizon/horizon/textio"
)

// Views of a planned run for people: PlanMarkdown for the Temporal Web UI,
// PlanTree for `horizon status`. Both are pure functions of the state (no
// clock, no map iteration), so a workflow may render them too. Everything
// shown comes from the state's records (attempts, receipt IDs, gate
// verdicts), never from what a model claimed.

// Limits of the views.
const (
	viewTitleWidth    = 48  // a feature title in the tree is clipped to this many runes
	viewEvidenceBytes = 200 // a blocker's evidence is clipped to this many bytes
)

// TotalAttempts counts the run's change attempts: over every feature of a
// planned run, or the single feature's Attempts.
func (s *RunState) TotalAttempts() int {
	if s.Plan == nil {
		return len(s.Attempts)
	}
	n := 0
	for _, m := range s.Plan.Milestones {
		for _, f := range m.Features {
			n += f.AttemptCount()
		}
	}
	return n
}

// ApproveCommand is the command that lets the run go on from the
// checkpoint it waits at, or "" when it is not waiting.
func (s *RunState) ApproveCommand() string {
	if s.Waiting == nil {
		return ""
	}
	cmd := "horizon approve " + s.RunID
	if s.Waiting.Subject != "" {
		cmd += " --subject " + s.Waiting.Subject
	}
	return cmd
}

// UnblockCommand is the command that puts a blocked feature back in line.
func (s *RunState) UnblockCommand(feature string) string {
	return fmt.Sprintf("horizon unblock %s %s --note \"...\"", s.RunID, feature)
}

// PlanMarkdown renders a planned run for the Temporal Web UI: a header
// line (status, phase, reason, spend against the budget, progress), the
// checkpoint it waits at with the approve command, then one table row per
// feature (milestone | feature | status | attempts | tier | last receipt |
// cost), parts of a decomposed feature under it, and the blocked features
// with their evidence and the unblock command. A run without a plan yet
// gets the header only.
func (s *RunState) PlanMarkdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** · %s", s.Status, dash(string(s.Phase)))
	if s.Reason != "" {
		fmt.Fprintf(&b, " · %s", viewCell(s.Reason))
	}
	fmt.Fprintf(&b, " · %s", s.viewSpend())
	if s.Plan != nil {
		c := s.Plan.Counts()
		fmt.Fprintf(&b, " · %d/%d features accepted", c.Accepted, c.Work())
	}
	if len(s.Stalled) > 0 {
		fmt.Fprintf(&b, " · **stalled**: %s", viewCell(s.Stalled[0].Detail))
	}
	if s.Autonomy != "" {
		fmt.Fprintf(&b, " · autonomy %s", s.Autonomy)
	}
	b.WriteString("\n")
	b.WriteString(s.Outage.markdown())
	if w := s.Waiting; w != nil {
		fmt.Fprintf(&b, "\n**Waiting for approval** of %s: %s — `%s`\n", viewCheckpoint(w), viewCell(w.Summary), s.ApproveCommand())
	}
	if s.Plan == nil {
		if s.Phase == PhasePlanning {
			b.WriteString("\nThe lead is planning the goal.\n")
		}
		return Safe(b.String())
	}
	b.WriteString("\n| milestone | feature | status | attempts | tier | last receipt | cost |\n|---|---|---|---|---|---|---|\n")
	var blocked []Feature
	for _, m := range s.Plan.Milestones {
		depth := viewDepths(m.Features)
		for i, f := range m.Features {
			ms := ""
			if i == 0 {
				ms = fmt.Sprintf("%s %s (%s)", m.ID, viewCell(m.Title), m.Status)
			}
			status := string(f.Status)
			if f.Status == FeatureBlocked && f.Blocker != nil {
				status += ": " + string(f.Blocker.Type)
				blocked = append(blocked, f)
			}
			receipt := "–"
			if id, verdict := viewLastReceipt(f); id != "" {
				receipt = fmt.Sprintf("`%s` %s", id, dash(verdict))
			}
			cost := "–"
			if len(f.Attempts) > 0 {
				cost = fmt.Sprintf("$%.4f", viewCost(f))
			}
			fmt.Fprintf(&b, "| %s | %s%s %s | %s | %d | %s | %s | %s |\n",
				ms, strings.Repeat("↳ ", depth[i]), f.ID, viewCell(f.Title), status, f.AttemptCount(), dash(viewLastTier(f)), receipt, cost)
		}
	}
	if len(blocked) > 0 {
		b.WriteString("\nBlocked:\n\n")
		for _, f := range blocked {
			fmt.Fprintf(&b, "- `%s` %s: %s — `%s`\n", f.ID, f.Blocker.Type, viewCell(textio.Head(oneLine(f.Blocker.Evidence), viewEvidenceBytes)), s.UnblockCommand(f.ID))
		}
	}
	var advice strings.Builder
	for _, m := range s.Plan.Milestones {
		for _, f := range m.Features {
			advice.WriteString(adviceMarkdown(f.ID, f.Attempts))
		}
	}
	if advice.Len() > 0 {
		b.WriteString("\nAdvisor:\n\n" + advice.String())
	}
	var review strings.Builder
	for _, m := range s.Plan.Milestones {
		for _, f := range m.Features {
			for _, l := range ReviewLines(f) {
				fmt.Fprintf(&review, "- `%s` %s\n", f.ID, viewCell(textio.Head(l, viewEvidenceBytes)))
			}
		}
	}
	if review.Len() > 0 {
		b.WriteString("\nReview (the last audit of each feature):\n\n" + review.String())
	}
	var asks strings.Builder
	for _, m := range s.Plan.Milestones {
		for _, f := range m.Features {
			asks.WriteString(asksMarkdown(f.ID, f.Attempts))
		}
	}
	if asks.Len() > 0 {
		b.WriteString("\n" + asksHeading + ":\n\n" + asks.String())
	}
	if g := s.Integration; g != nil {
		fmt.Fprintf(&b, "\nIntegration gate: %s (exit %d)", g.Verdict, g.ExitCode)
		if note := g.failedPartsNote(); note != "" {
			fmt.Fprintf(&b, ", %s", note)
		}
		if g.ReceiptID != "" {
			fmt.Fprintf(&b, ", receipt `%s`", g.ReceiptID)
		}
		b.WriteString("\n")
	}
	return Safe(b.String())
}

// PlanTree renders a planned run as plain text for a terminal: the run's
// goal, status, phase and reason, the checkpoint it waits at with the
// approve command, the budget, then each milestone with its features (ID,
// title, status, attempts, tier of the last attempt, last receipt and its
// gate verdict, cost); blocked features show their blocker and the unblock
// command, decomposed features their parts indented under them. Without a
// clock it shows the budget's deadline, not the time left (PlanTreeAt).
func (s *RunState) PlanTree() string { return s.PlanTreeAt(time.Time{}) }

// PlanTreeAt is PlanTree that also says, at now, how long the run has
// waited and how much of its time budget is left.
func (s *RunState) PlanTreeAt(now time.Time) string {
	var b strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-9s%s\n", label, fmt.Sprintf(format, args...))
	}
	line("run", "%s", s.RunID)
	line("goal", "%s", oneLine(s.Goal))
	status := string(s.Status)
	if s.Status == StatusRunning || s.Status == "" {
		status += " · " + dash(string(s.Phase))
	}
	line("status", "%s", status)
	if s.Reason != "" {
		line("reason", "%s", oneLine(s.Reason))
	}
	if w := s.Waiting; w != nil {
		since := ""
		if !w.Since.IsZero() {
			since = " since " + w.Since.UTC().Format("2006-01-02 15:04 UTC")
			if !now.IsZero() && now.After(w.Since) {
				since += " (" + viewDuration(now.Sub(w.Since)) + ")"
			}
		}
		line("waiting", "%s%s: %s", viewCheckpoint(w), since, oneLine(w.Summary))
		line("", "approve: %s", s.ApproveCommand())
	}
	for i, st := range s.Stalled {
		label := ""
		if i == 0 {
			label = "stalled"
		}
		line(label, "%s (flagged by the daily pass; the run goes on)", oneLine(st.Detail))
	}
	line("budget", "%s", s.viewBudget(now))
	usage := fmt.Sprintf("%d tokens · $%.4f", s.Usage.Tokens(), s.Usage.Cost)
	if s.Planning.Cost > 0 || s.Planning.Tokens() > 0 {
		usage += fmt.Sprintf(" (planning $%.4f)", s.Planning.Cost)
	}
	line("usage", "%s", usage)
	if s.Branch != "" {
		line("branch", "%s", s.Branch)
	}
	if s.Plan != nil {
		line("plan", "%s", s.viewProgress())
	}
	if g := s.Integration; g != nil {
		gate := fmt.Sprintf("%s (exit %d)", g.Verdict, g.ExitCode)
		if g.ReceiptID != "" {
			gate += " · receipt " + g.ReceiptID
		}
		line("final", "integration gate %s", gate)
	}
	if s.Handoff != "" {
		line("handoff", "%s", s.Handoff)
	}
	if s.Plan == nil {
		return b.String()
	}
	if len(s.Plan.Assumptions) > 0 {
		line("assumed", "%s", oneLine(s.Plan.Assumptions[0]))
		for _, a := range s.Plan.Assumptions[1:] {
			line("", "%s", oneLine(a))
		}
	}

	// Columns are as wide as the widest cell of the whole plan, so every
	// milestone lines up.
	idw, titlew := 0, 0
	for _, m := range s.Plan.Milestones {
		depth := viewDepths(m.Features)
		for i, f := range m.Features {
			idw = max(idw, 2*depth[i]+utf8.RuneCountInString(f.ID))
			titlew = max(titlew, utf8.RuneCountInString(viewClip(oneLine(f.Title), viewTitleWidth)))
		}
	}
	const statusw = len(FeatureDecomposed)
	for _, m := range s.Plan.Milestones {
		fmt.Fprintf(&b, "\n%s %s [%s]\n", m.ID, oneLine(m.Title), m.Status)
		depth := viewDepths(m.Features)
		for i, f := range m.Features {
			indent := strings.Repeat("  ", depth[i])
			row := fmt.Sprintf("  %s  %s  %s", viewPad(indent+f.ID, idw), viewPad(viewClip(oneLine(f.Title), viewTitleWidth), titlew), viewPad(string(f.Status), statusw))
			if d := s.viewDetails(f); d != "" {
				row += "  " + d
			}
			b.WriteString(strings.TrimRight(row, " ") + "\n")
			// Notes go under the title column.
			under := strings.Repeat(" ", 2+idw+2)
			for _, a := range f.Attempts {
				for _, l := range a.AskLines() {
					fmt.Fprintf(&b, "%sattempt %d %s\n", under, a.N, textio.Head(l, viewEvidenceBytes))
				}
			}
			for _, l := range ReviewLines(f) {
				fmt.Fprintf(&b, "%s%s\n", under, textio.Head(l, viewEvidenceBytes))
			}
			switch {
			case f.Status == FeatureBlocked && f.Blocker != nil:
				fmt.Fprintf(&b, "%sblocked: %s: %s\n", under, f.Blocker.Type, textio.Head(oneLine(f.Blocker.Evidence), viewEvidenceBytes))
				fmt.Fprintf(&b, "%sunblock: %s\n", under, s.UnblockCommand(f.ID))
			case f.Status == FeatureSkipped && f.Note != "":
				fmt.Fprintf(&b, "%sskipped: %s\n", under, textio.Head(oneLine(f.Note), viewEvidenceBytes))
			case f.Status.pending():
				if held := s.Plan.HeldBy(f.ID); len(held) > 0 {
					fmt.Fprintf(&b, "%swaits on %s\n", under, s.viewHeld(held))
				} else if f.Note != "" {
					fmt.Fprintf(&b, "%snote: %s\n", under, textio.Head(oneLine(f.Note), viewEvidenceBytes))
				}
			}
		}
	}
	return b.String()
}

// LastAudited is f's last attempt that an auditor judged (nil: none).
func (f Feature) LastAudited() *Attempt {
	for i := len(f.Attempts) - 1; i >= 0; i-- {
		if f.Attempts[i].Audit != nil {
			return &f.Attempts[i]
		}
	}
	return nil
}

// ReviewLines are what the last audit of f decided, a line each: its
// per-criterion receipt and every finding's disposition.
func ReviewLines(f Feature) []string {
	a := f.LastAudited()
	if a == nil {
		return nil
	}
	var out []string
	if r := ReceiptLine(a.Criteria); r != "" {
		line := fmt.Sprintf("attempt %d criteria: %s", a.N, r)
		for _, c := range Unmet(a.Criteria) {
			line += fmt.Sprintf("; %d %s: %s", c.Criterion, c.Status, oneLine(c.Text))
		}
		out = append(out, line)
	}
	for _, d := range a.Dispositions {
		out = append(out, fmt.Sprintf("attempt %d %s (%s): %s — %s", a.N, d.Kind, d.By, oneLine(d.Subject), oneLine(d.Rationale)))
	}
	return out
}

// viewDetails is a feature's record in a few words: attempts, tier of the
// last one, last receipt with its verdict, cost, commit, next strategy.
func (s *RunState) viewDetails(f Feature) string {
	var parts []string
	if n := f.AttemptCount(); n == 1 {
		parts = append(parts, "1 attempt")
	} else if n > 1 {
		parts = append(parts, fmt.Sprintf("%d attempts", n))
	}
	if t := viewLastTier(f); t != "" {
		parts = append(parts, t)
	}
	if id, verdict := viewLastReceipt(f); id != "" {
		parts = append(parts, strings.TrimSpace("receipt "+id+" "+verdict))
	}
	if len(f.Attempts) > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", viewCost(f)))
	}
	if f.Commit != "" {
		c := f.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		parts = append(parts, "commit "+c)
	}
	if (f.Status == FeatureRunning || f.Status.pending()) && f.Strategy != "" && f.AttemptCount() > 0 {
		parts = append(parts, "next: "+f.Strategy.Title())
	}
	return strings.Join(parts, " · ")
}

// viewProgress counts the plan's features in words.
func (s *RunState) viewProgress() string {
	p := s.Plan
	c := p.Counts()
	out := fmt.Sprintf("%d of %d features accepted", c.Accepted, c.Work())
	for _, n := range []struct {
		n    int
		what string
	}{{c.Running, "running"}, {c.Blocked, "blocked"}, {c.Skipped, "skipped"}, {c.Pending, "pending"}} {
		if n.n > 0 {
			out += fmt.Sprintf(", %d %s", n.n, n.what)
		}
	}
	if c.Waiting > 0 {
		out += fmt.Sprintf(" (%d waiting on blocked work)", c.Waiting)
	}
	out += fmt.Sprintf(" · ambiguity %s · revision %d", dash(string(p.Ambiguity)), p.Revision)
	if s.Autonomy != "" {
		out += " · autonomy " + string(s.Autonomy)
	}
	return out
}

// viewHeld names the features that hold one back, with their status.
func (s *RunState) viewHeld(ids []string) string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if f, ok := s.Plan.Feature(id); ok {
			out = append(out, fmt.Sprintf("%s (%s)", id, f.Status))
		} else {
			out = append(out, id)
		}
	}
	return strings.Join(out, ", ")
}

// viewSpend is what the run spent against its spend budget.
func (s *RunState) viewSpend() string {
	out := fmt.Sprintf("$%.4f spent", s.Usage.Cost)
	if s.Budget != nil && s.Budget.Spend > 0 {
		out += fmt.Sprintf(" of $%.2f", s.Budget.Spend)
	}
	if s.Budget != nil && !s.Budget.Deadline.IsZero() {
		out += " · until " + s.Budget.Deadline.UTC().Format("2006-01-02 15:04 UTC")
	}
	return out
}

// viewBudget is the budget line of the tree: time (and, at now, what is
// left of it) and spend.
func (s *RunState) viewBudget(now time.Time) string {
	bud := s.Budget
	if bud == nil || (bud.Time <= 0 && bud.Deadline.IsZero() && bud.Spend <= 0) {
		return fmt.Sprintf("none (spent $%.4f)", s.Usage.Cost)
	}
	var parts []string
	switch {
	case bud.Time > 0 || !bud.Deadline.IsZero():
		t := "time"
		if bud.Time > 0 {
			t += " " + viewDuration(bud.Time)
		}
		if !bud.Deadline.IsZero() {
			t += ", until " + bud.Deadline.UTC().Format("2006-01-02 15:04 UTC")
			// An ended run has no time left to count down.
			if !now.IsZero() && !s.Status.Terminal() {
				if left := bud.Deadline.Sub(now); left > 0 {
					t += " (" + viewDuration(left) + " left)"
				} else {
					t += " (reached)"
				}
			}
		}
		parts = append(parts, t)
	default:
		parts = append(parts, "time: no limit")
	}
	if bud.Spend > 0 {
		sp := fmt.Sprintf("spend $%.4f of $%.2f", s.Usage.Cost, bud.Spend)
		if left := bud.Spend - s.Usage.Cost; left > 0 {
			sp += fmt.Sprintf(" ($%.2f left)", left)
		} else {
			sp += " (reached)"
		}
		parts = append(parts, sp)
	} else {
		parts = append(parts, fmt.Sprintf("spend $%.4f, no limit", s.Usage.Cost))
	}
	return strings.Join(parts, " · ")
}

// viewCheckpoint names a checkpoint: "the plan", "milestone m2",
// "feature f3".
func viewCheckpoint(c *Checkpoint) string {
	switch {
	case c.Kind == CheckpointPlan:
		return "the plan"
	case c.Subject == "":
		return string(c.Kind)
	case c.Kind == "":
		return c.Subject
	}
	return string(c.Kind) + " " + c.Subject
}

// viewDepths returns how deep each feature of a milestone sits under
// decomposed parents (0 for a planned feature, 1 for its parts, …). Parts
// follow their parent, so one pass in order suffices.
func viewDepths(fs []Feature) []int {
	depth := make([]int, len(fs))
	at := map[string]int{} // feature ID → its index; looked up, never ranged over
	for i, f := range fs {
		if j, ok := at[f.Parent]; ok && f.Parent != "" {
			depth[i] = depth[j] + 1
		}
		at[f.ID] = i
	}
	return depth
}

// viewCost is what a feature's attempts cost.
func viewCost(f Feature) float64 {
	var c float64
	for _, a := range f.Attempts {
		c += a.Usage.Cost
	}
	return c
}

// viewLastTier is the tier of the feature's last attempt.
func viewLastTier(f Feature) string {
	if len(f.Attempts) == 0 {
		return ""
	}
	return f.Attempts[len(f.Attempts)-1].Tier
}

// viewLastReceipt is the feature's last gate receipt ID and that gate
// run's verdict as its attempt recorded it ("" when no attempt has it).
func viewLastReceipt(f Feature) (id, verdict string) {
	if len(f.ReceiptIDs) == 0 {
		return "", ""
	}
	id = f.ReceiptIDs[len(f.ReceiptIDs)-1]
	for i := len(f.Attempts) - 1; i >= 0; i-- {
		if g := f.Attempts[i].Gate; g != nil && g.ReceiptID == id {
			return id, g.Verdict
		}
	}
	return id, ""
}

// viewDuration is a duration in hours and minutes (72h, 70h20m, 45m, 30s).
func viewDuration(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	d = d.Round(time.Minute)
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case h == 0:
		return fmt.Sprintf("%dm", m)
	case m == 0:
		return fmt.Sprintf("%dh", h)
	}
	return fmt.Sprintf("%dh%02dm", h, m)
}

// viewCell makes text safe for one Markdown table cell.
func viewCell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}

// viewClip keeps the first n runes of s.
func viewClip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// viewPad pads s with spaces to n runes.
func viewPad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}
