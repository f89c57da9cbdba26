package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/repo"
)

type loopOptions struct {
	app       *app
	prompt    string
	role      string
	max       int
	compactAt float64
	gate      bool
	detach    bool
	json      bool
	// contextLimit is --context-limit (0: OpenCode's catalog).
	contextLimit int
}

// newLoopCmd is `horizon loop`: zilX's /loop on the engine.
func newLoopCmd(a *app, runF func(context.Context, *loopOptions) error) *cobra.Command {
	o := &loopOptions{app: a}
	cmd := &cobra.Command{
		Use:   "loop [--repo DIR] [--agent ROLE] --max N [--compact-at F] [--gate] [--detach] [--json] -- <prompt>",
		Short: "Drive one persistent agent session toward a goal, up to N activations (Ctrl-C detaches)",
		Long: `A loop prompts one OpenCode session, on one model fixed at the start (the
best-ranked connected model of --agent's role), up to --max times. Each
activation must end with a horizon-report block: satisfied ends the loop (with
--gate only if the repository's gate passes), continue prompts the next
activation, blocked ends it. When the last activation left the session's
context at or over --compact-at of the model's window, the session is
compacted first and the next prompt carries a checkpoint: the unchanged goal,
"activation k of N" and the last report. The window is OpenCode's catalog's
for the model; a model the catalog gives none (a local or custom provider)
needs --context-limit N (tokens), or the loop refuses to start: it could
never tell when to compact.

The loop works in a lane and leaves its change committed on branch
horizon/loop-<id>. Results: satisfied, blocked, limit_reached, protocol_error,
cancelled, failed. ` + "`horizon cancel ID`" + ` aborts the session.`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.prompt = strings.TrimSpace(strings.Join(args, " "))
			if o.prompt == "" {
				return usagef("loop: %v", core.ErrEmptyPrompt)
			}
			if !cmd.Flags().Changed("max") {
				return usagef("loop: --max N is required (1..%d, the first activation included)", horizon.LoopMaxActivations)
			}
			if err := horizon.CheckLoop(o.max, o.compactAt); err != nil {
				return usageError{err}
			}
			if o.contextLimit < 0 {
				return usagef("loop: --context-limit %d: give the model's window in tokens (or leave it out: OpenCode's catalog)", o.contextLimit)
			}
			role, err := horizon.ParseLoopRole(o.role)
			if err != nil {
				return usageError{err}
			}
			o.role = string(role)
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return loopRun(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.role, "agent", string(horizon.RoleBuild), "the role whose best-ranked connected model runs the loop: lead, quick, build, explore, analyze or research")
	f.IntVar(&o.max, "max", 0, fmt.Sprintf("activations at most, the first included (1..%d; required)", horizon.LoopMaxActivations))
	f.Float64Var(&o.compactAt, "compact-at", horizon.LoopCompactDefault, fmt.Sprintf("context occupancy (%.2f..%.2f) at which the session is compacted before the next activation", horizon.LoopCompactMin, horizon.LoopCompactMax))
	f.IntVar(&o.contextLimit, "context-limit", 0, "the model's context window in tokens, for compaction (default: OpenCode's catalog; needed when it has none)")
	f.BoolVar(&o.gate, "gate", false, "satisfied counts only if the repository's gate passes; otherwise the gate's evidence starts the next activation")
	f.BoolVarP(&o.detach, "detach", "d", false, "start the loop and print its ID; do not follow it")
	f.BoolVar(&o.json, "json", false, "print the loop's result as JSON ({loop, status, session, model, role, activations, compactions, branch, commit, cost, report, error})")
	return cmd
}

func loopRun(ctx context.Context, o *loopOptions) error {
	a := o.app
	info, err := repo.Inspect(a.repoDir)
	if err != nil {
		return err
	}
	if o.gate {
		// A gate that cannot run would fail the loop at its first
		// "satisfied": refuse it now.
		if _, err := gate.Discover(info.Root); err != nil {
			return err
		}
	}
	return a.withEngine(ctx, true, func(h *core.App) error {
		id, err := h.StartLoop(ctx, core.LoopRequest{
			Prompt: o.prompt, Repo: info.Root, BaseCommit: info.Head, Role: o.role,
			Max: o.max, CompactAt: o.compactAt, Gate: o.gate, ContextLimit: o.contextLimit,
		})
		if err != nil {
			if errors.Is(err, horizon.ErrLoopLimits) || errors.Is(err, core.ErrEmptyPrompt) {
				return usageError{err}
			}
			return err
		}
		if o.detach {
			if o.json {
				return json.NewEncoder(a.out).Encode(core.LoopResult{Loop: id, Status: horizon.LoopRunning, Role: o.role})
			}
			fmt.Fprintln(a.out, id)
			fmt.Fprintf(a.errOut, "loop %s started; `horizon cancel %s` stops it\n", id, id)
			return nil
		}
		fmt.Fprintf(a.errOut, "loop %s started (%d activations at most); Ctrl-C stops following, the loop goes on; `horizon cancel %s` stops it\n", id, o.max, id)
		return a.followLoop(ctx, h.Loops(), id, o.max, o.json)
	})
}

// followLoop prints a loop's activations until it ends; Ctrl-C detaches.
func (a *app) followLoop(ctx context.Context, l core.Loops, id string, max int, asJSON bool) error {
	fctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	progress := a.out
	if asJSON {
		progress = a.errOut
	}
	var shown core.LoopResult
	res, err := l.Wait(fctx, id, func(st core.LoopResult) {
		printLoopProgress(progress, shown, st, max)
		shown = st
	})
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() == nil {
			fmt.Fprintf(a.errOut, "\nstopped following; loop %s goes on. `horizon cancel %s` stops it.\n", id, id)
			return exitErr{code: ExitInterrupted}
		}
		return runError("loop", id, err)
	}
	if asJSON {
		if err := json.NewEncoder(a.out).Encode(res); err != nil {
			return err
		}
	} else {
		printLoopEnd(a.out, res)
	}
	if res.Status != horizon.LoopSatisfied {
		return exitErr{code: ExitRunEnded}
	}
	return nil
}

// printLoopProgress says what changed since shown.
func printLoopProgress(w io.Writer, shown, st core.LoopResult, max int) {
	if st.Compactions > shown.Compactions {
		fmt.Fprintf(w, "session compacted (%d so far)\n", st.Compactions)
	}
	if st.Activations > shown.Activations {
		line := fmt.Sprintf("activation %d of %d", st.Activations, max)
		if r := st.Report; r != nil {
			line += ": " + string(r.Status)
			if s := strings.TrimSpace(r.Summary); s != "" {
				line += " · " + oneLine(s, 120)
			}
		}
		fmt.Fprintln(w, line)
	}
}

// printLoopEnd writes the loop's result for a person.
func printLoopEnd(w io.Writer, r core.LoopResult) {
	fmt.Fprintf(w, "loop %s %s after %s, %s\n", r.Loop, r.Status, plural(r.Activations, "activation"), plural(r.Compactions, "compaction"))
	fmt.Fprintf(w, "  model %s · session %s\n", orDash(r.Model), orDash(r.Session))
	if r.Branch != "" {
		fmt.Fprintf(w, "  branch %s", r.Branch)
		if r.Commit != "" {
			fmt.Fprintf(w, " at %s", short(r.Commit))
		} else {
			fmt.Fprint(w, " (no change)")
		}
		fmt.Fprintln(w)
	}
	if r.Report != nil && r.Report.Blocker != nil {
		fmt.Fprintf(w, "  blocked: %s: %s\n", r.Report.Blocker.Type, r.Report.Blocker.Evidence)
	}
	if n := r.Notes; n != nil {
		dir := ""
		if len(r.Advice) > 0 && r.Advice[len(r.Advice)-1].File != "" {
			dir = filepath.Dir(r.Advice[len(r.Advice)-1].File)
		}
		fmt.Fprintf(w, "  %s\n", loopAdvice(*n, dir))
	}
	if r.Error != "" {
		fmt.Fprintf(w, "  %s\n", r.Error)
	}
}

// loopAdvice is the advisor's watch of the loop in one line: the notes
// delivered into the session, what became of the others, and where the
// records are.
func loopAdvice(n horizon.AdviceCounts, dir string) string {
	line := "advisor: " + plural(n.Delivered, "note") + " delivered"
	if n.Woke > 0 {
		line += fmt.Sprintf(" (%d woke the session)", n.Woke)
	}
	for _, c := range []struct {
		n    int
		what string
	}{{n.Downgraded, "downgraded"}, {n.Recorded, "recorded only"}, {n.Refuted, "refuted"}, {n.Suppressed, "suppressed"}, {n.Failed, "failed"}} {
		if c.n > 0 {
			line += fmt.Sprintf(", %d %s", c.n, c.what)
		}
	}
	if dir != "" {
		line += " · records in " + dir
	}
	return line
}

// loopStatus is `horizon status LOOP`: where the loop stands, or its end.
func loopStatus(ctx context.Context, a *app, h *core.App, id string, asJSON bool) error {
	res, _, err := h.Loops().State(ctx, id)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(a.out).Encode(res)
	}
	printLoopEnd(a.out, res)
	return nil
}
