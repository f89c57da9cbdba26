package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
)

type reportOptions struct {
	app  *app
	date string
	json bool
	now  bool
}

func newReportCmd(a *app, runF func(context.Context, *reportOptions) error) *cobra.Command {
	o := &reportOptions{app: a}
	cmd := &cobra.Command{
		Use:   "report [--date YYYY-MM-DD | --now] [--json]",
		Short: "Print a daily pass's report (the newest by default): what landed, what waits for you, spend, stalled goals",
		Long: `The daily pass (supervisor.daily_cron, default 07:00) writes
$HORIZON_HOME/reports/<date>.md and <date>.json: per repository what landed
since the pass before (feature, commit, receipt), what is blocked or waits
for a person (with the command that lets it go on), spend per run and per
day against the ceilings, and stalled goals. ` + "`horizon supervisor trigger daily`" + `
runs a pass now.

With no report yet (no supervisor has run a daily pass), or with --now,
the report is written here and now from the engine's records, the same
report a pass would write; it needs the daemon (` + "`horizon resume`" + `).`,
		Example: `  horizon report                  # the newest report, or today's made now when there is none
  horizon report --now            # today's report, made now
  horizon report --date 2026-12-01 --json`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.now && o.date != "" {
				return usagef("--now makes today's report; leave out --date %s", o.date)
			}
			if o.date != "" {
				if _, err := time.Parse(time.DateOnly, o.date); err != nil {
					return usagef("--date %q: want YYYY-MM-DD", o.date)
				}
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return reportShow(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.date, "date", "", "the report's date (default: the newest)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the report's JSON")
	cmd.Flags().BoolVar(&o.now, "now", false, "write today's report now from the engine's records (needs the daemon)")
	return cmd
}

func reportShow(ctx context.Context, o *reportOptions) error {
	a := o.app
	r := core.Reports{DataDir: a.cfg.DataDir()}
	date := o.date
	if date == "" {
		latest, err := r.Latest()
		var nr *core.NoReportError
		if o.now || errors.As(err, &nr) {
			return reportNow(ctx, o)
		}
		if err != nil {
			return reportError(err)
		}
		date = latest
	}
	read := r.Markdown
	if o.json {
		read = r.JSON
	}
	data, err := read(date)
	if err != nil {
		return reportError(err)
	}
	_, err = a.out.Write(data)
	return err
}

// reportError says a missing report as bad input, one that cannot be
// read as the environment.
func reportError(err error) error {
	var nr *core.NoReportError
	if errors.As(err, &nr) {
		return usageError{err}
	}
	return exitErr{code: ExitEnvironment, msg: fmt.Sprintf("report: %v", err)}
}

// reportNow writes today's report through the core and prints it.
func reportNow(ctx context.Context, o *reportOptions) error {
	a := o.app
	return a.withEngine(ctx, false, func(h *core.App) error {
		rep, err := h.ReportNow(ctx)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		fmt.Fprintf(a.errOut, "report %s written now from the engine's records\n", rep.Date)
		data := []byte(rep.Markdown)
		if o.json {
			data = rep.Report
		}
		_, err = a.out.Write(data)
		return err
	})
}
