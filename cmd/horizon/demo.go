package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/horizon/horizon/app/core"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

type demoOptions struct {
	app  *app
	dir  string // "": $HORIZON_HOME/demo/<time>
	keep bool
}

func newDemoCmd(a *app, runF func(context.Context, *demoOptions) error) *cobra.Command {
	o := &demoOptions{app: a}
	cmd := &cobra.Command{
		Use:   "demo [--dir DIR]",
		Short: "Run the whole loop on a sample repo against a scripted model (no API key)",
		Long: `Create a small repository whose gate is red (add.sh subtracts), start a
scripted stand-in model on loopback, and run horizon on it for real, as a
planned run like ` + "`horizon start`" + `: the daemon and its embedded engine, the
read-only lead's plan (f1 fixes add.sh, f2 tests negative numbers), then for
each feature an OpenCode worker session in its own lane, the gate, the
auditor and one commit onto horizon/<run>, and last the integration gate and
the handoff. The scripted auditor rejects f2's first attempt once, so you see
its finding carried to a corrective attempt too. The demo runs with full
autonomy (it never waits for ` + "`horizon approve`" + `). Takes under a minute; watch it
in the Web UI while it runs.

The demo needs opencode (npm opencode-ai) like any run; ` + "`horizon doctor`" + ` checks.`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return demoRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.dir, "dir", "", "where to create the sample repository (default: $HORIZON_HOME/demo/<time>)")
	cmd.Flags().BoolVar(&o.keep, "keep-model", false, "keep the scripted model running after the run (for poking at the sessions)")
	return cmd
}

func demoRun(ctx context.Context, o *demoOptions) error {
	a, dir, keep := o.app, o.dir, o.keep
	if dir == "" {
		if err := checkHome(a.cfg.Home); err != nil {
			return err
		}
		dir = filepath.Join(a.cfg.Home, "demo", time.Now().Format("20060102-150405"))
	}
	script, err := demo.Script()
	if err != nil {
		return err
	}
	model := fakemodel.New(script)
	if err := model.Start("127.0.0.1:0"); err != nil {
		return fmt.Errorf("start the scripted model: %w", err)
	}
	if !keep {
		defer model.Close()
	}
	if err := demo.CreateRepo(dir, model.URL()); err != nil {
		return err
	}
	fmt.Fprintf(a.errOut, "sample repository: %s (gate .horizon/verify.sh is red)\nscripted model:    %s\n", dir, model.URL())

	a.repoDir = dir
	a.cfg.Models.Default = demo.Model
	// The script answers the lead of a planned run whatever run.planned
	// says, and no checkpoint may wait for an approval: the scripted model
	// lives only as long as this process.
	p, err := core.Prepare(ctx, a.cfg, core.StartRequest{Repo: dir, Goal: demo.Goal, Kind: defaultKind, Mode: core.ModePlanned, Autonomy: string(horizon.AutonomyFull), BeforeModels: a.startEarly})
	if err != nil {
		a.abandonEarly(ctx)
		return err
	}
	err = a.withEngine(ctx, true, func(h *core.App) error {
		if _, err := h.StartPrepared(ctx, p); err != nil {
			return err
		}
		err := a.afterSubmit(ctx, h, p, false, false)
		var ee exitErr
		if errors.As(err, &ee) && ee.code == ExitInterrupted {
			// The scripted model dies with this process: the run could not go on.
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = h.Cancel(cctx, p.RunID)
			fmt.Fprintf(a.errOut, "demo run %s cancelled (its scripted model stops with the demo)\n", p.RunID)
		}
		return err
	})
	if err != nil {
		return err
	}
	// The features' commits in the order they landed, each with its diff
	// (the commit messages repeat the plan shown above).
	log := exec.CommandContext(ctx, "git", "-C", dir, "log", "--reverse", "-p", "--format=%n%h %s", "main.."+p.Branch)
	log.Stdout, log.Stderr = a.out, a.errOut
	fmt.Fprintf(a.out, "\nwhat landed on %s, one commit per feature (your main branch is untouched):\n", p.Branch)
	_ = log.Run()
	fmt.Fprint(a.out, demoNext(core.RunLink(a.cfg, p.RunID)))
	if keep {
		fmt.Fprintf(a.errOut, "scripted model still running at %s; Ctrl-C to stop\n", model.URL())
		<-ctx.Done()
	}
	_ = os.Stdout.Sync()
	return nil
}

// demoNext ends the demo: what still runs, how to stop it, and where to
// look next (ui is the run's Temporal UI page, "" when the UI is off).
func demoNext(ui string) string {
	var b strings.Builder
	b.WriteString("\nThe horizon daemon (with its OpenCode server, about 770 MB) is still running,\n")
	b.WriteString("so runs go on when this terminal closes; `horizon stop` stops it.\n\nnext:\n")
	b.WriteString("  horizon status      the run's plan tree, attempts, receipts and cost\n")
	b.WriteString("  horizon console     runs and what needs you, live in the terminal\n")
	b.WriteString("  horizon web         the dashboard in a browser\n")
	if ui != "" {
		fmt.Fprintf(&b, "  %s\n                      the run in the Temporal UI; its User Metadata tab holds the plan table\n", ui)
	}
	return b.String()
}
