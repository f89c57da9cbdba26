package console

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/horizon/textio"
)

// Print writes once, as text, what the console's first screen shows: the
// runs (like `horizon list`, with phase and progress), what needs you with
// the command that does it, and the first run's detail. It is the console
// when its output is not a terminal (a pipe, a file, a cron mail), so it
// reads every listed run's state once.
func Print(ctx context.Context, w io.Writer, b Backend) error {
	rows, err := listRuns(ctx, b)
	if err != nil {
		return fmt.Errorf("list runs: %w", err)
	}
	rows = orderRows(rows)
	details := map[string]*RunDetail{}
	states := map[string]*horizon.RunState{}
	for _, r := range rows {
		d, err := readRun(ctx, b, r.ID)
		if err != nil {
			return fmt.Errorf("read run %s: %w", r.ID, err)
		}
		details[r.ID], states[r.ID] = &d, d.State
	}
	sups, err := b.AllSupervisors(ctx)
	if err != nil {
		return fmt.Errorf("list supervisors: %w", err)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "no runs yet; start one with `horizon start \"<goal>\"`")
		if needs := Needs(nil, nil, sups); err == nil && len(needs) > 0 {
			writeNeeds(w, needs)
		}
		return err
	}
	writeRuns(w, rows, states)
	loops, _ := b.LoopRows(ctx)
	tasks, _ := b.TaskRows(ctx)
	writeLoopsAndTasks(w, loops, tasks)
	writeNeeds(w, Needs(rows, states, sups))
	fmt.Fprintf(w, "\nRUN %s\n", rows[0].ID)
	for _, l := range detailLines(rows[0], details[rows[0].ID], false) {
		fmt.Fprintln(w, l)
	}
	return nil
}

func writeRuns(w io.Writer, rows []RunRow, states map[string]*horizon.RunState) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tPHASE\tPROGRESS\tCOST\tREPO\tGOAL")
	for _, r := range rows {
		status, phase, progress, cost := runCells(r, states[r.ID])
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, status, phase, dash(progress), dash(cost), repoName(r.Repo), textio.Runes(oneLine(r.Goal), 60))
	}
	tw.Flush()
}

func writeNeeds(w io.Writer, needs []Need) {
	fmt.Fprintf(w, "\nNEEDS YOU (%d)\n", len(needs))
	if len(needs) == 0 {
		fmt.Fprintln(w, "  nothing waits for you")
		return
	}
	for _, n := range needs {
		fmt.Fprintf(w, "  %-8s %s  %s\n           %s\n", n.Kind, n.RunID, n.What, n.Command)
	}
}

// writeLoopsAndTasks lists the loops and tasks under the runs, each with
// its status; nothing when there are none.
func writeLoopsAndTasks(w io.Writer, loops []core.LoopRow, tasks []core.TaskMeta) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(loops) > 0 {
		fmt.Fprintln(tw, "\nLOOP\tSTATUS\tROLE\tACTIVATIONS\tCOST")
		for _, l := range loops {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t$%.4f\n", l.Loop, l.Status, dash(l.Role), l.Activations, l.Cost)
		}
	}
	if len(tasks) > 0 {
		fmt.Fprintln(tw, "\nTASK\tSTATUS\tSPECIALIST\tPROMPT")
		for _, t := range tasks {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.ID, t.Status, t.Specialist, textio.Runes(oneLine(t.Prompt), 60))
		}
	}
	tw.Flush()
}

// goingOn counts the loops and tasks still running, for the header: "1
// loop running", "2 loops, 1 task running"; "" when none runs.
func goingOn(loops []core.LoopRow, tasks []core.TaskMeta) string {
	nl, nt := 0, 0
	for _, l := range loops {
		if l.Status == horizon.LoopRunning {
			nl++
		}
	}
	for _, t := range tasks {
		if t.Status == core.TaskRunning {
			nt++
		}
	}
	var parts []string
	if nl > 0 {
		parts = append(parts, horizon.Plural(nl, "loop"))
	}
	if nt > 0 {
		parts = append(parts, horizon.Plural(nt, "task"))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + " running"
}
