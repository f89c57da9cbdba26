package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/horizon"
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
	dir := filepath.Join(a.cfg.DataDir(), "reports")
	date := o.date
	if date == "" {
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return exitErr{code: ExitEnvironment, msg: fmt.Sprintf("report: %v", err)}
		}
		var dates []string
		for _, e := range entries {
			if d, ok := strings.CutSuffix(e.Name(), ".json"); ok {
				dates = append(dates, d)
			}
		}
		if len(dates) == 0 {
			return usagef("no daily report yet in %s; `horizon supervisor trigger daily` makes one", dir)
		}
		sort.Strings(dates)
		date = dates[len(dates)-1]
	}
	md, js := horizon.ReportPaths(date)
	name := md
	if o.json {
		name = js
	}
	data, err := os.ReadFile(filepath.Join(a.cfg.Home, name))
	if errors.Is(err, os.ErrNotExist) {
		return usagef("no daily report of %s in %s", date, dir)
	}
	if err != nil {
		return exitErr{code: ExitEnvironment, msg: fmt.Sprintf("report: %v", err)}
	}
	_, err = a.out.Write(data)
	return err
}
