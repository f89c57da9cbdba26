package console

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/horizon/horizon/horizon"
)

// The renderers here are pure text, shared by the live screen and the
// plain output: a run's cells in the list, and a run's detail as a list
// of small sections (summary, plan tree or attempts, advisor notes).

// runCells is what the list shows of a run: status, phase, progress and
// cost. Before its state is read, the engine's word is all there is.
func runCells(r RunRow, s *horizon.RunState) (status, phase, progress, cost string) {
	if s == nil {
		switch {
		case r.Open():
			status = "running"
		case r.Cancelled():
			status = "cancelled"
		case r.Failed():
			status = "failed"
		default:
			status = "closed"
		}
		return status, "…", "", ""
	}
	status = string(s.Status)
	if r.Open() && s.Paused {
		status = "paused"
	}
	phase = string(s.Phase)
	if s.Status.Terminal() && s.Status != horizon.StatusBlocked {
		phase = "–"
	}
	if s.Plan != nil {
		c := s.Plan.Counts()
		progress = fmt.Sprintf("%d/%d", c.Accepted, c.Work())
	} else {
		progress = fmt.Sprintf("%d att", len(s.Attempts))
	}
	return status, dash(phase), progress, fmt.Sprintf("$%.4f", s.Usage.Cost)
}

// detailLines is a run's detail: its summary, then its plan tree (a
// planned run) or its attempts (a one-feature run), then advisor notes.
// onScreen adds the console's key for what waits ("a approves") and
// shortens receipt IDs to their first 10 characters (enough to find one in
// receipts.jsonl); plain output lists the commands and whole IDs instead.
func detailLines(r RunRow, d *RunDetail, onScreen bool) []string {
	if d == nil || d.State == nil {
		return []string{
			field("goal", oneLine(r.Goal)),
			field("repo", r.Repo),
			"reading the run's state…",
		}
	}
	s := d.State
	hint := func(k string) string {
		if !onScreen {
			return ""
		}
		return " (" + k + ")"
	}
	v := view{hint: hint, receipts: 0}
	if onScreen {
		v.receipts = 10
	}
	lines := v.summary(s, d.Live, r.Open())
	if s.Plan != nil {
		lines = append(lines, v.plan(s.Plan)...)
	} else {
		for i := range s.Attempts {
			lines = append(lines, "  "+v.attempt(&s.Attempts[i]))
		}
	}
	return append(lines, adviceLines(d.Advice)...)
}

// view is how a detail is written: for the screen or for plain output.
type view struct {
	hint     func(key string) string // " (a approves)" on the screen, "" in plain output
	receipts int                     // receipt IDs are cut to this many characters (0: whole)
}

func field(label, value string) string { return fmt.Sprintf("%-8s %s", label, value) }

// summaryLines: goal, status with progress and spend, repository and
// branch, what the run waits at or on, why it ended.
func (v view) summary(s *horizon.RunState, live, open bool) []string {
	status := string(s.Status)
	if !s.Status.Terminal() || s.Status == horizon.StatusBlocked {
		status += " · " + dash(string(s.Phase))
	}
	if s.Plan != nil {
		c := s.Plan.Counts()
		status += fmt.Sprintf(" · %d/%d accepted", c.Accepted, c.Work())
	}
	status += fmt.Sprintf(" · $%.4f", s.Usage.Cost)
	if s.Ceiling > 0 {
		status += fmt.Sprintf(" of $%.2f", s.Ceiling)
	}
	if s.Autonomy != "" {
		status += " · autonomy " + string(s.Autonomy)
	}
	lines := []string{field("goal", oneLine(s.Goal)), field("status", status)}
	repo := s.Repo
	if s.Branch != "" {
		repo += " → " + s.Branch
	}
	lines = append(lines, field("repo", repo))
	if open && !live {
		lines = append(lines, field("engine", "no worker answers (the daemon is down?): `horizon resume` brings it back"))
	}
	if w := s.Waiting; w != nil {
		lines = append(lines, field("waiting", waitingFor(w)+v.hint("a approves")))
	}
	if s.Paused {
		lines = append(lines, field("paused", "by you, before its next attempt"+v.hint("p resumes")))
	}
	if o := s.Outage; o != nil {
		lines = append(lines, field("outage", o.Line()))
	}
	if s.Reason != "" && s.Waiting == nil { // a waiting run's reason says what the waiting line does
		lines = append(lines, field("reason", oneLine(s.Reason)))
	}
	for _, st := range s.Stalled {
		lines = append(lines, field("stalled", oneLine(st.Detail)))
	}
	if g := s.Integration; g != nil {
		lines = append(lines, field("final", fmt.Sprintf("integration gate %s%s", g.Verdict, v.receipt(g))))
	}
	return lines
}

// planLines is the plan tree: each milestone with its features (parts of a
// decomposed feature indented under it), each feature with its attempts.
func (v view) plan(p *horizon.Plan) []string {
	var lines []string
	for _, m := range p.Milestones {
		lines = append(lines, fmt.Sprintf("%s %s [%s]", m.ID, oneLine(m.Title), m.Status))
		for _, f := range m.Features {
			indent := "  " + strings.Repeat("  ", depth(p, f))
			row := fmt.Sprintf("%s%s %s · %s", indent, f.ID, oneLine(f.Title), f.Status)
			if c := featureCost(f); len(f.Attempts) > 0 {
				row += fmt.Sprintf(" · $%.4f", c)
			}
			lines = append(lines, row)
			if b := f.Blocker; f.Status == horizon.FeatureBlocked && b != nil {
				lines = append(lines, fmt.Sprintf("%s  blocker %s: %s%s", indent, b.Type, oneLine(b.Evidence), v.hint("u unblocks")))
			}
			if f.Status == horizon.FeatureSkipped && f.Note != "" {
				lines = append(lines, fmt.Sprintf("%s  skipped: %s", indent, oneLine(f.Note)))
			}
			for i := range f.Attempts {
				lines = append(lines, indent+"  "+v.attempt(&f.Attempts[i]))
			}
		}
	}
	return lines
}

// attemptLine is one attempt: its number, tier and applier, outcome, the
// gate's verdict with its receipt, the audit's verdict, cost.
func (v view) attempt(a *horizon.Attempt) string {
	head := []string{fmt.Sprintf("#%d", a.N)}
	for _, w := range []string{a.Action, a.Tier, a.Applier, string(a.Outcome)} {
		if w != "" {
			head = append(head, w)
		}
	}
	parts := []string{strings.Join(head, " ")}
	if a.ProtocolError != "" {
		parts = append(parts, "protocol error")
	}
	if g := a.Gate; g != nil {
		parts = append(parts, "gate "+g.Verdict+v.receipt(g))
	}
	if au := a.Audit; au != nil {
		audit := "audit " + string(au.Verdict)
		if n := len(au.Findings); n > 0 {
			audit += fmt.Sprintf(" (%d: %s)", n, oneLine(au.Findings[0].Note))
		}
		parts = append(parts, audit)
	}
	parts = append(parts, fmt.Sprintf("$%.4f", a.Usage.Cost))
	return strings.Join(parts, " · ")
}

// adviceLines lists an advisor's notes, most severe first as written.
func adviceLines(notes []AdvisorNote) []string {
	if len(notes) == 0 {
		return nil
	}
	lines := []string{"advisor notes"}
	for _, n := range notes {
		where := ""
		if n.Feature != "" {
			where = n.Feature + " "
		}
		if e := n.Evidence; e != nil && e.File != "" {
			where += e.File
			if e.Line > 0 {
				where += fmt.Sprintf(":%d", e.Line)
			}
			where += " "
		}
		lines = append(lines, fmt.Sprintf("  [%s] %s%s", n.Severity, where, oneLine(n.Note)))
	}
	return lines
}

func (v view) receipt(g *horizon.GateRun) string {
	if g.ReceiptID == "" {
		return ""
	}
	if v.receipts > 0 && len(g.ReceiptID) > v.receipts {
		return " " + g.ReceiptID[:v.receipts]
	}
	return " " + g.ReceiptID
}

// depth is how deep a feature sits under decomposed parents.
func depth(p *horizon.Plan, f horizon.Feature) int {
	d := 0
	for parent := f.Parent; parent != "" && d < 8; d++ {
		pf, _ := p.Feature(parent)
		if pf == nil {
			break
		}
		parent = pf.Parent
	}
	return d
}

func featureCost(f horizon.Feature) float64 {
	c := 0.0
	for _, a := range f.Attempts {
		c += a.Usage.Cost
	}
	return c
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// repoName is a repository's last path element: the list has no room for
// whole paths, the detail shows them.
func repoName(repo string) string {
	if repo == "" {
		return "–"
	}
	return filepath.Base(repo)
}
