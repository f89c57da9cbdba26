package horizon

import (
	"fmt"
	"strings"
	"time"
)

// Markdown renders the daily report: a header, spend per day, then per
// repository what landed, what waits for a person, spend per run, stalled
// goals, the findings runs deferred (when any) and the roadmap. Each part is a small section writer with its own
// golden file.
func (r DailyReport) Markdown() string {
	var b strings.Builder
	writeReportHeader(&b, r)
	writeReportDays(&b, r.Days)
	if len(r.Repos) == 0 {
		b.WriteString("\nNo repository is supervised.\n")
	}
	for _, rr := range r.Repos {
		writeReportRepo(&b, rr)
	}
	return Safe(b.String())
}

func writeReportHeader(b *strings.Builder, r DailyReport) {
	fmt.Fprintf(b, "# horizon daily report %s\n\n", r.Date)
	fmt.Fprintf(b, "From %s to %s. A goal is stalled after %d attempts since its last accepted feature, or the same failing tests %d attempts in a row.\n",
		reportTime(r.Since), reportTime(r.Until), r.StallAttempts, SameFailingInARow)
	var landed, waiting, stalled int
	for _, rr := range r.Repos {
		landed, waiting, stalled = landed+len(rr.Landed), waiting+len(rr.Waiting), stalled+len(rr.Stalled)
	}
	fmt.Fprintf(b, "\n%s landed, %s for a person, %s.\n",
		countNoun(landed, "feature", "features"), countNoun(waiting, "thing waits", "things wait"), countNoun(stalled, "stalled goal", "stalled goals"))
}

func writeReportDays(b *strings.Builder, days []DaySpend) {
	b.WriteString("\n## Spend per day\n\n| day | spent | ceiling |\n|---|---|---|\n")
	for _, d := range days {
		ceiling := "none"
		if d.Ceiling > 0 {
			ceiling = fmt.Sprintf("$%.2f", d.Ceiling)
			if d.AtCeiling {
				ceiling += " **reached**"
			}
		}
		fmt.Fprintf(b, "| %s | $%.4f | %s |\n", d.Day, d.Spent, ceiling)
	}
}

func writeReportRepo(b *strings.Builder, rr RepoReport) {
	fmt.Fprintf(b, "\n## %s\n", rr.Repo)
	writeReportLanded(b, rr.Landed)
	writeReportWaiting(b, rr.Waiting)
	writeReportRuns(b, rr.Runs, rr.Queued)
	writeReportStalled(b, rr.Stalled)
	writeReportDeferred(b, rr.Deferred)
	writeReportRoadmap(b, rr.Roadmap)
}

func writeReportLanded(b *strings.Builder, ls []Landed) {
	b.WriteString("\n### Landed\n\n")
	if len(ls) == 0 {
		b.WriteString("Nothing landed.\n")
		return
	}
	b.WriteString("| run | feature | commit | receipt | at |\n|---|---|---|---|---|\n")
	for _, l := range ls {
		feature := viewCell(l.Title)
		if l.Feature != "" {
			feature = fmt.Sprintf("`%s` %s", l.Feature, feature)
		}
		fmt.Fprintf(b, "| `%s` | %s | `%s` on `%s` | `%s` | %s |\n", l.RunID, feature, l.Commit, l.Branch, l.Receipt, reportTime(l.At))
	}
}

func writeReportWaiting(b *strings.Builder, ws []Waiting) {
	b.WriteString("\n### Waiting for a person\n\n")
	if len(ws) == 0 {
		b.WriteString("Nothing waits.\n")
		return
	}
	for _, w := range ws {
		subject := ""
		if w.RunID != "" {
			subject = " `" + w.RunID + "`"
		}
		if w.Feature != "" {
			subject += " `" + w.Feature + "`"
		}
		fmt.Fprintf(b, "- **%s**%s: %s\n", w.Kind, subject, oneLine(w.What))
		if w.Command != "" {
			fmt.Fprintf(b, "  `%s`\n", w.Command)
		}
	}
}

func writeReportRuns(b *strings.Builder, rs []RunSpend, queued int) {
	b.WriteString("\n### Runs\n\n")
	if len(rs) == 0 {
		b.WriteString("No run was active.")
	} else {
		b.WriteString("| run | goal | status | attempts | spent | total | ceiling | budget |\n|---|---|---|---|---|---|---|---|\n")
		for _, r := range rs {
			fmt.Fprintf(b, "| `%s` | %s | %s | %d | $%.4f | $%.4f | %s | %s |\n",
				r.RunID, viewCell(viewClip(r.Goal, 60)), r.Status, r.Attempts, r.Spent, r.Total, usdOrNone(r.Ceiling), usdOrNone(r.Budget))
		}
	}
	fmt.Fprintf(b, "\n%s in the queue.\n", countNoun(queued, "goal", "goals"))
}

func writeReportStalled(b *strings.Builder, ss []Stall) {
	b.WriteString("\n### Stalled\n\n")
	if len(ss) == 0 {
		b.WriteString("Nothing stalled.\n")
		return
	}
	for _, s := range ss {
		subject := "`" + s.RunID + "`"
		if s.Feature != "" {
			subject += fmt.Sprintf(" `%s` %s", s.Feature, oneLine(s.Title))
		} else {
			subject += " " + oneLine(viewClip(s.Goal, 80))
		}
		fmt.Fprintf(b, "- %s: %s", subject, s.Detail)
		if len(s.Receipts) > 0 {
			fmt.Fprintf(b, " (receipts %s)", reportCodes(s.Receipts))
		}
		b.WriteString("\n")
	}
}

// writeReportDeferred lists the findings the runs deferred, each with its
// run and feature; a repository whose runs deferred none has no section.
func writeReportDeferred(b *strings.Builder, ds []ReportDeferred) {
	if len(ds) == 0 {
		return
	}
	b.WriteString("\n### Deferred findings\n\nRight, but not needed for the change they were found on; kept for later work.\n\n")
	for _, d := range ds {
		fmt.Fprintf(b, "- `%s` `%s` %s — %s\n", d.RunID, d.Feature, oneLine(d.Subject), oneLine(d.Rationale))
	}
}

// Markdown renders the roadmap's items as a table (or the error the
// supervisor waits on), as the daily report shows it; `horizon roadmap`
// may print it as is.
func (r RoadmapRef) Markdown() string {
	var b strings.Builder
	writeReportRoadmap(&b, &r)
	return Safe(strings.TrimPrefix(b.String(), "\n### Roadmap\n\n"))
}

func writeReportRoadmap(b *strings.Builder, rm *RoadmapRef) {
	if rm == nil {
		return
	}
	b.WriteString("\n### Roadmap\n\n")
	if rm.Error != "" {
		fmt.Fprintf(b, "Not readable, the supervisor waits:\n\n```\n%s\n```\n", rm.Error)
		return
	}
	if len(rm.Items) == 0 {
		fmt.Fprintf(b, "`%s` has no items.\n", rm.File)
		return
	}
	fmt.Fprintf(b, "`%s`:\n\n| line | item | state | run | detail |\n|---|---|---|---|---|\n", rm.File)
	for _, it := range rm.Items {
		line := "–"
		if it.Line > 0 {
			line = fmt.Sprint(it.Line)
		}
		run := "–"
		switch {
		case it.RunID != "":
			run = "`" + it.RunID + "`"
		case it.Entry != "":
			run = "`" + it.Entry + "`"
		}
		fmt.Fprintf(b, "| %s | `%s` %s | %s | %s | %s |\n", line, it.Item, viewCell(it.Title), it.State, run, reportDash(viewCell(it.Detail)))
	}
}

func reportTime(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func usdOrNone(v float64) string {
	if v <= 0 {
		return "none"
	}
	return fmt.Sprintf("$%.2f", v)
}

func reportCodes(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = "`" + id + "`"
	}
	return strings.Join(q, ", ")
}

func reportDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
