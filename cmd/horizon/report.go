package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/internal/core"
)

type reportOptions struct {
	app  *app
	date string
	json bool
}

func newReportCmd(a *app, runF func(context.Context, *reportOptions) error) *cobra.Command {
	o := &reportOptions{app: a}
	cmd := &cobra.Command{
		Use:   "report [--date YYYY-MM-DD] [--json]",
		Short: "Print a daily pass's report (the newest by default): what landed, what waits for you, spend, stalled goals",
		Long: `The daily pass (supervisor.daily_cron, default 07:00) writes
$HORIZON_HOME/reports/<date>.md and <date>.json: per repository what landed
since the pass before (feature, commit, receipt), what is blocked or waits
for a person (with the command that lets it go on), spend per run and per
day against the ceilings, and stalled goals. ` + "`horizon supervisor trigger daily`" + `
runs a pass now.`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.date != "" {
				if _, err := time.Parse(time.DateOnly, o.date); err != nil {
					return usagef("--date %q: want YYYY-MM-DD", o.date)
				}
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return reportShow(o)
		},
	}
	cmd.Flags().StringVar(&o.date, "date", "", "the report's date (default: the newest)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the report's JSON")
	return cmd
}

func reportShow(o *reportOptions) error {
	a := o.app
	r := core.Reports{DataDir: a.cfg.DataDir()}
	date := o.date
	if date == "" {
		latest, err := r.Latest()
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
