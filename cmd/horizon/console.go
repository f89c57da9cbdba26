package main

import (
	"context"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/console"
	"github.com/horizon/horizon/app/core"
)

type consoleOptions struct {
	app      *app
	plain    bool
	interval time.Duration
}

func newConsoleCmd(a *app, runF func(context.Context, *consoleOptions) error) *cobra.Command {
	o := &consoleOptions{app: a}
	cmd := &cobra.Command{
		Use:   "console [--plain] [--interval D]",
		Short: "A live terminal view of every run, what waits for you, and keys to act on it",
		Long: `A live view of horizon in the terminal (80×24 is enough), in three parts:

  RUNS       every run of every repository, open ones first: the tail of
             its ID (the RUN title has all of it), status, phase, progress
             (features accepted of the plan's, or attempts of a one-feature
             run), cost, repository and goal
  NEEDS YOU  what runs wait on you for: approvals (semi and supervised
             autonomy), blocked features, spend ceilings reached, goals the
             daily pass found stalled
  RUN        the selected run: its plan tree, each feature with its attempts
             (tier, applier, outcome, gate verdict with its receipt, audit
             verdict, cost), blockers, advisor notes

Keys:
  ↑ ↓ (k j)   select a run, or a need once tab moved there
  tab         move between RUNS and NEEDS YOU; enter selects a need's run
  pgdn pgup   scroll the run's detail (also J K)
  a           approve the checkpoint the run waits at (asks y/n); the
              approval names the checkpoint, so it cannot pass a later one
  u           unblock a blocked feature: asks for the note (what changed),
              which the feature's next attempt reads; enter sends, esc leaves
  s           skip a feature of a planned run (the selected need's, or one
              you name): asks for the note (why it is left out, the handoff
              shows it), then y/n; a running feature is stopped first
  p           pause the run before its next attempt, or resume it
  x           cancel the run (asks y/n)
  r           read everything again now
  q           quit; no run is touched (esc and ctrl+c too)

What it reads, and how often: the run list comes from the engine's
visibility store (one call every --interval, no run is asked anything);
the selected run is asked for its state every 2 s while it is open; the
others are read when they first appear, when they close, and at most every
30 s while open. A ceiling is raised with ` + "`horizon set-ceiling RUN USD`" + `.

When the output is not a terminal (a pipe, a file), or with --plain, it
prints the same information once as text, each need with the command that
deals with it, and exits.`,
		Example: `  horizon console
  horizon console --plain | less
  horizon console --interval 15s   # list the runs less often`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.interval < time.Second {
				return usagef("--interval %s: give at least 1s, e.g. --interval 5s", o.interval)
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return consoleRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.plain, "plain", false, "print the runs, what needs you and the first run's detail once as text, then exit")
	cmd.Flags().DurationVar(&o.interval, "interval", 5*time.Second, "how often the run list is read from the engine")
	return cmd
}

func consoleRun(ctx context.Context, o *consoleOptions) error {
	a := o.app
	return a.withEngine(ctx, false, func(h *core.App) error {
		if o.plain || !terminal(a.rawOut) || !terminal(os.Stdin) {
			return console.Print(ctx, a.out, h)
		}
		return console.Run(ctx, h, console.Options{ListEvery: o.interval}, os.Stdin, a.rawOut)
	})
}

func terminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}
