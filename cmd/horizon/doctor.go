package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/horizon/horizon/app/core"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/daemon"
	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/internal/repo"
	"github.com/horizon/horizon/internal/tools"
	"github.com/horizon/horizon/ladder"
)

type check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// input marks a failure of the input (the repository, its gate, the
	// model asked for), which `horizon start` refuses as bad usage.
	input bool
}

// doctorExit is the code start would exit with for the failing checks:
// bad input (2) before the environment (3), as start checks them.
func doctorExit(checks []check) int {
	code := ExitOK
	for _, c := range checks {
		switch {
		case c.OK:
		case c.input:
			return ExitUsage
		default:
			code = ExitEnvironment
		}
	}
	return code
}

type doctorOptions struct {
	app  *app
	json bool
}

func newDoctorCmd(a *app, runF func(context.Context, *doctorOptions) error) *cobra.Command {
	o := &doctorOptions{app: a}
	cmd := &cobra.Command{
		Use:   "doctor [--repo DIR] [--json]",
		Short: "Check git, opencode, ast-grep, the repo's gate, the engine and each role's model",
		Long: `Check everything a run needs, one line each: ok, or what to do.

  git, opencode, ast-grep   the tools are there
  repo                      a git repository with a commit
  gate                      HEAD has a gate the lanes can run (a script with
                            its execute bit, not a directory)
  submodules                lanes can set up each submodule HEAD records,
                            from the repository's own copy
  home, engine              $HORIZON_HOME is writable; the engine answers
  models                    models.file reads, models.default is offered by
                            OpenCode, and each role a run needs has a model,
                            resolved as the run's preflight does

Exit 0 when all checks pass; otherwise the code ` + "`horizon start`" + ` would exit
with: 2 when the repository, its gate or the models are at fault (bad
input), 3 for the rest (a missing tool, the engine, the home).`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return doctorRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the checks as JSON")
	return cmd
}

func doctorRun(ctx context.Context, o *doctorOptions) error {
	a := o.app
	checks := a.doctor(ctx)
	if o.json {
		if err := json.NewEncoder(a.out).Encode(checks); err != nil {
			return err
		}
	} else {
		for _, c := range checks {
			mark := "ok  "
			if !c.OK {
				mark = "FIX "
			}
			fmt.Fprintf(a.out, "%s %-10s %s\n", mark, c.Name, c.Detail)
			if c.Fix != "" {
				fmt.Fprintf(a.out, "     %-10s → %s\n", "", c.Fix)
			}
		}
	}
	if code := doctorExit(checks); code != ExitOK {
		return exitErr{code: code}
	}
	return nil
}

// astGrepCheck finds ast-grep as the daemon's codemod step does: the
// configured agent.ast_grep_bin, else the usual places (tools.Find).
func astGrepCheck(configured string, versionOf func(bin string, args ...string) string) check {
	p, err := tools.Find(tools.AstGrep, configured, "agent.ast_grep_bin (HORIZON_AGENT_AST_GREP_BIN)")
	if err != nil {
		return check{Name: "ast-grep", Detail: "not found (needed by codemod steps)", Fix: err.Error()}
	}
	return check{Name: "ast-grep", OK: true, Detail: p + " " + versionOf(p, "--version")}
}

func (a *app) doctor(ctx context.Context) []check {
	var out []check
	versionOf := func(bin string, args ...string) string {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		b, err := exec.CommandContext(cctx, bin, args...).Output()
		if err != nil {
			return "version unknown: " + err.Error()
		}
		return strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	}

	if p, err := exec.LookPath("git"); err != nil {
		out = append(out, check{Name: "git", Detail: "not found", Fix: "install git (apt-get install git)"})
	} else {
		out = append(out, check{Name: "git", OK: true, Detail: versionOf(p, "--version")})
	}
	ocBin, err := tools.Find(tools.OpenCode, a.cfg.Agent.OpenCodeBin, "agent.opencode_bin")
	if err != nil {
		out = append(out, check{Name: "opencode", Detail: "not found", Fix: err.Error()})
	} else {
		out = append(out, check{Name: "opencode", OK: true, Detail: ocBin + " " + versionOf(ocBin, "--version")})
	}
	out = append(out, astGrepCheck(a.cfg.Agent.AstGrepBin, versionOf))
	out = append(out, applierChecks(core.Appliers(ctx, a.cfg))...)

	info, rerr := repo.Inspect(a.repoDir)
	switch {
	case rerr != nil:
		out = append(out, check{Name: "repo", Detail: rerr.Error(), Fix: "run from a git repository or pass --repo DIR", input: true})
	default:
		d := fmt.Sprintf("%s at %s", info.Root, short(info.Head))
		if info.Ref != "" {
			d += " (" + info.Ref + ")"
		}
		if len(info.Dirty) > 0 {
			d += fmt.Sprintf(", %d uncommitted changes (a run starts from HEAD and will not see them)", len(info.Dirty))
		}
		out = append(out, check{Name: "repo", OK: true, Detail: d})
		if g, err := core.GateInCommit(ctx, info.Root, info.Head, a.cfg.Gate.Commands()); err != nil {
			out = append(out, gateCheck(err))
		} else {
			out = append(out, check{Name: "gate", OK: true, Detail: g})
		}
		out = append(out, submodulesCheck(ctx, info))
	}

	if err := checkHome(a.cfg.Home); err != nil {
		out = append(out, check{Name: "home", Detail: err.Error(), Fix: "set HORIZON_HOME to a directory you can write"})
	} else if mode, open := daemon.HomeOpen(a.cfg.Home); open {
		// The home holds goals, transcripts and tokens; the daemon narrows
		// it when it starts, so this is a home it could not narrow or that
		// was opened since.
		out = append(out, check{Name: "home", Detail: fmt.Sprintf("%s is open to other users (mode %04o)", a.cfg.Home, mode), Fix: "run: chmod 700 " + a.cfg.Home})
	} else {
		out = append(out, check{Name: "home", OK: true, Detail: a.cfg.Home})
	}
	paths := daemon.Paths{Home: a.cfg.Home}
	if a.cfg.Embedded() {
		if pid, running := daemon.Running(paths); running {
			if err := a.ping(ctx, 5*time.Second); err != nil {
				out = append(out, check{Name: "engine", Detail: fmt.Sprintf("daemon pid %d runs but the engine does not answer at %s", pid, a.cfg.FrontendAddress()), Fix: "see " + paths.LogFile()})
			} else {
				d := fmt.Sprintf("embedded, daemon pid %d, %s", pid, a.cfg.FrontendAddress())
				if u := a.cfg.UIURL(); u != "" {
					d += ", Web UI " + u
				}
				out = append(out, check{Name: "engine", OK: true, Detail: d})
			}
		} else {
			out = append(out, check{Name: "engine", OK: true, Detail: fmt.Sprintf("embedded, not running (starts with `horizon start` or `horizon resume`; home %s)", a.cfg.Home)})
		}
	} else {
		if err := a.ping(ctx, 10*time.Second); err != nil {
			out = append(out, check{Name: "engine", Detail: err.Error(), Fix: "check temporal.address, TLS files and API key"})
		} else {
			out = append(out, check{Name: "engine", OK: true, Detail: "remote " + a.cfg.Temporal.Address})
		}
	}

	dir := a.repoDir
	if rerr == nil {
		dir = info.Root
	}
	out = append(out, a.modelsCheck(ctx, dir, ocBin != ""))
	return out
}

// gateCheck is the failed gate check for GateInCommit's error, which
// names the repository's file and what to do.
func gateCheck(err error) check {
	var nr *gate.NotRunnableError
	if errors.As(err, &nr) {
		return check{Name: "gate", Detail: fmt.Sprintf("%s is not runnable: %s", nr.Path, nr.Reason), Fix: nr.Fix, input: true}
	}
	if errors.Is(err, gate.ErrNoGate) {
		return check{Name: "gate", Detail: "none in HEAD", Fix: "add an executable .horizon/verify.sh that exits 0 when the work is done, and commit it; or set gate.test_command", input: true}
	}
	return check{Name: "gate", Detail: err.Error(), Fix: "see `horizon gate`", input: true}
}

// modelsCheck resolves each role's model the way `horizon start` and the
// run's preflight do (roleModels): it fails when the leaderboard cannot be
// read, --model (models.default) is not offered by OpenCode, or a role a
// run needs has no model.
func (a *app) modelsCheck(ctx context.Context, dir string, haveOpenCode bool) check {
	if _, err := core.LoadLeaderboard(a.cfg); err != nil {
		return check{Name: "models", Detail: err.Error(), Fix: "point models.file at a readable leaderboard (models.json format), or unset it for the bundled one", input: true}
	}
	if !haveOpenCode {
		return check{Name: "models", Detail: "not checked: needs opencode", Fix: "install opencode (see the opencode check)"}
	}
	rm, connected, err := core.ResolveRoleModels(ctx, a.cfg, dir)
	if err != nil {
		c := check{Name: "models", Detail: strings.ReplaceAll(err.Error(), "\n", "; "), input: exitCode(err) == ExitUsage}
		var nm *ladder.NoModelError
		switch {
		case !c.input:
			c.Fix = "configure a provider in OpenCode (`opencode auth login`, or a provider in opencode.json)"
		case errors.As(err, &nm) && len(connected) == 0:
			c.Detail = "OpenCode reports no models, so no role has one"
			c.Fix = "connect a provider: `opencode auth login`, or add one to opencode.json; `horizon models` shows the choice per role"
		case errors.As(err, &nm):
			c.Detail, _, _ = strings.Cut(err.Error(), "\n") // the rest says what Fix says
			c.Fix = "connect a provider that serves a leaderboard route for the role, or pass --model PROVIDER/MODEL; `horizon models` shows the choice per role"
		default:
			c.Fix = "set --model (models.default) to one OpenCode offers, or leave it out to use the leaderboard"
		}
		return c
	}
	var roles []string
	for _, r := range core.Roles {
		roles = append(roles, string(r)+" "+rm.Models[r])
	}
	return check{Name: "models", OK: true, Detail: fmt.Sprintf("%s (%d available)", strings.Join(roles, ", "), len(connected))}
}

// applierChecks report Claude Code and Codex CLI. Both are optional: one
// that is missing or not logged in only leaves its routes (claude-code/…,
// codex/…) unconnected, so the check passes and says so.
func applierChecks(st []core.ApplierStatus) []check {
	out := make([]check, 0, len(st))
	for _, s := range st {
		c := check{Name: string(s.Kind), OK: true}
		switch {
		case s.Bin == "":
			c.Detail = "optional, " + s.Why
		case !s.Connected:
			c.Detail = fmt.Sprintf("%s %s, not connected: %s; its routes stay unused", s.Bin, s.Version, s.Why)
		default:
			c.Detail = fmt.Sprintf("%s %s, connected: %s", s.Bin, s.Version, s.Why)
		}
		out = append(out, c)
	}
	return out
}
