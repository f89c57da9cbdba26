package core

// Starting a supervisor: the checks before the engine is involved, then
// the workflow and its two schedules.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/repo"
	"github.com/horizon/horizon/workflows"
)

// SupervisorRequest asks for the supervisor of a repository.
type SupervisorRequest struct {
	Repo string `json:"repo"`
	// Autonomy is full, semi or supervised ("": supervisor.autonomy).
	Autonomy string `json:"autonomy,omitempty"`
	// Ceiling is what the person said of the day ceiling.
	Ceiling DayCeilingRequest `json:"-"`
}

// SupervisorPrepared is a checked supervisor, ready to start.
type SupervisorPrepared struct {
	ID       string
	Repo     string
	Base     string
	Autonomy horizon.Autonomy
	// Ceiling is the decided day ceiling (ChooseDayCeiling).
	Ceiling DayCeiling

	input workflows.SupervisorInput
}

// DayCeilingError is a day ceiling the person did not decide, or decided
// twice; Err is ErrNoDayCeiling, ErrDayCeilingAmount or the conflict.
type DayCeilingError struct{ Err error }

func (e *DayCeilingError) Error() string { return e.Err.Error() }
func (e *DayCeilingError) Unwrap() error { return e.Err }

// PrepareSupervisor checks that the repository can be supervised (on a
// branch of the person's, runnable as a run is) and decides its day
// ceiling. Bad input is an *InputError (a *DayCeilingError inside for the
// ceiling); nothing is started.
func PrepareSupervisor(ctx context.Context, cfg *config.Config, req SupervisorRequest) (*SupervisorPrepared, error) {
	ceiling, err := ChooseDayCeiling(req.Ceiling, cfg.Spend.DayCeiling)
	if err != nil {
		return nil, &InputError{Err: &DayCeilingError{Err: err}}
	}
	info, err := repo.Inspect(req.Repo)
	if err != nil {
		return nil, asInput(err)
	}
	if info.Ref == "" || strings.HasPrefix(info.Ref, "horizon/") {
		return nil, inputf("supervisor start: %s is not on a branch of yours (HEAD is %q); check out the branch the roadmap lives on, e.g. `git switch main`", info.Root, info.Ref)
	}
	if err := CheckRunnable(ctx, cfg, info); err != nil {
		return nil, err
	}
	autonomy := cfg.Supervisor.Autonomy
	if req.Autonomy != "" {
		if autonomy, err = horizon.ParseAutonomy(req.Autonomy); err != nil {
			return nil, inputf("--autonomy: %v", err)
		}
	}
	in := workflows.SupervisorInput{
		ID: horizon.SupervisorID(info.Root), Repo: info.Root, Base: strings.TrimPrefix(info.Ref, "refs/heads/"), Roadmap: cfg.Supervisor.Roadmap,
		Autonomy: autonomy, MaxActiveRuns: cfg.Supervisor.MaxActiveRuns, DecomposeAhead: cfg.Supervisor.DecomposeAhead,
		DecomposeTimeout: cfg.Supervisor.DecomposeTimeout,
	}
	return &SupervisorPrepared{ID: in.ID, Repo: in.Repo, Base: in.Base, Autonomy: autonomy, Ceiling: ceiling, input: in}, nil
}

// StartSupervisor starts (or leaves running) a prepared supervisor, with
// the run template of the configuration, its schedules and its day
// ceiling.
func (a *App) StartSupervisor(ctx context.Context, p *SupervisorPrepared) error {
	in := p.input
	in.Run = RunTemplate(a.cfg)
	in.Run.SearchAttributes = HasSearchAttributes(ctx, a.c, a.cfg.Temporal.Namespace)
	return a.Supervisors().Start(ctx, in, schedules(a.cfg), p.Ceiling)
}

// schedules is what the supervisor's two schedules run and when, as
// configured, in this machine's zone.
func schedules(cfg *config.Config) Schedules {
	return Schedules{
		DecomposeCron: cfg.Supervisor.DecomposeCron, DailyCron: cfg.Supervisor.DailyCron, TimeZone: localZone(),
		CatchupWindow: cfg.Supervisor.CatchupWindow, DecomposeAhead: cfg.Supervisor.DecomposeAhead,
		StallAttempts: cfg.Supervisor.StallAttempts, // DayCeiling: the decided one, set by Start
	}
}

// localZone is this machine's IANA time zone for the schedules' cron
// specs: $TZ, else the zone /etc/localtime points at, else UTC.
func localZone() string {
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" {
		if _, err := time.LoadLocation(tz); err == nil {
			return tz
		}
	}
	if target, err := filepath.EvalSymlinks("/etc/localtime"); err == nil {
		if i := strings.Index(target, "zoneinfo/"); i >= 0 {
			if name := target[i+len("zoneinfo/"):]; name != "" {
				if _, err := time.LoadLocation(name); err == nil {
					return name
				}
			}
		}
	}
	return "UTC"
}
