package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/internal/repo"
)

type gateOptions struct {
	app   *app
	json  bool
	quiet bool
}

func newGateCmd(a *app, runF func(context.Context, *gateOptions) error) *cobra.Command {
	o := &gateOptions{app: a}
	cmd := &cobra.Command{
		Use:   "gate [--repo DIR] [--json]",
		Short: "Run the repository's gate once, as a run would, and print its receipt",
		Long: `Find the gate (.horizon/verify.sh, .zecor/verify.sh, .fleet/verify.sh, else a
detected go test / pytest / npm test / cargo test) and run it in the work
tree the way a run does: its own process group, the gate.timeout wall clock
with the whole group killed on overrun, vendor credentials stripped from its
environment (gate.allow_env lets some through), output capped.

Prints the receipt: verdict (pass, fail, timeout, error), exit code,
duration and the failing tests as the test tool names them. The receipt is
also appended to $HORIZON_HOME/gate/receipts.jsonl. --json prints it as JSON.

Exit: 0 pass, 1 fail/timeout/error, 2 no gate or not runnable.`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return gateRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the receipt as JSON (id, command, verdict, exit_code, duration_ms, failing, ...)")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "do not stream the gate's output")
	return cmd
}

func gateRun(ctx context.Context, o *gateOptions) error {
	a := o.app
	dir := a.repoDir
	// The gate runs in any directory, a repository's or not; a bare
	// repository has no files to run it on.
	info, err := repo.Inspect(dir)
	if bare := (*repo.BareError)(nil); errors.As(err, &bare) {
		return usageError{err}
	}
	if err == nil {
		dir = info.Root
	}
	g, err := gate.Discover(dir)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := gate.Options{Dir: dir, Timeout: a.cfg.Gate.Timeout, AllowEnv: a.cfg.Gate.EnvAllow}
	if !o.json && !o.quiet {
		fmt.Fprintf(a.errOut, "$ %s   (in %s)\n", g.Source, dir)
		opts.OnOutput = func(line string) { fmt.Fprintln(a.errOut, line) }
	}
	res := gate.Run(ctx, g, opts)
	rec := gate.NewReceipt("", "", 0, headOf(dir), g, res)
	if err := gate.AppendReceipt(filepath.Join(a.cfg.Home, "gate", "receipts.jsonl"), rec); err != nil {
		a.log.Warn().Err(err).Msg("record receipt")
	}
	if o.json {
		if err := json.NewEncoder(a.out).Encode(rec); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.out, "receipt  %s\ngate     %s\nverdict  %s (exit %d, %d ms)\n", rec.ID, rec.Command, rec.Verdict, rec.ExitCode, rec.DurationMS)
		switch {
		case len(rec.Failing) > 0:
			fmt.Fprintf(a.out, "failing  %s\n", strings.Join(rec.Failing, ", "))
		case !rec.FailingKnown && rec.Verdict != gate.Pass:
			fmt.Fprintln(a.out, "failing  (output format not recognised)")
		}
		if rec.Err != "" {
			fmt.Fprintf(a.out, "error    %s\n", rec.Err)
		}
	}
	if res.Verdict != gate.Pass {
		return exitErr{code: ExitRunEnded}
	}
	return nil
}

func headOf(dir string) string {
	info, err := repo.Inspect(dir)
	if err != nil {
		return ""
	}
	return info.Head
}
