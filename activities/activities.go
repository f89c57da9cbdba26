// Package activities holds every external effect of a run: git lanes and
// commits, the gate, and agent sessions. Workflows call them through a nil
// *Activities; the daemon registers one value holding the dependencies.
//
// Activities are idempotent: a retry after a crash finds the lane it made,
// continues the OpenCode session it heartbeated and does not commit twice.
package activities

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/horizon/textio"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/notify"
	"github.com/horizon/horizon/internal/reader"
)

// Sessions runs agent sessions; *agent.Server satisfies it once started, the
// daemon wraps it so OpenCode starts on first use.
type Sessions interface {
	RunSession(ctx context.Context, req agent.SessionRequest, onProgress func(agent.Progress)) (agent.SessionResult, error)
	ValidateModel(ctx context.Context, dir, model string) error
	// Models lists the provider/model IDs OpenCode can use from dir.
	Models(ctx context.Context, dir string) ([]string, error)
}

// Activities holds what activities need. One value is registered per worker.
type Activities struct {
	// Home is $HORIZON_HOME: lanes and run artifacts live under it.
	Home     string
	Sessions Sessions
	// GateAllowEnv lists variables the gate may see despite scrubbing.
	GateAllowEnv []string
	// AstGrepBin is the configured ast-grep ("" finds it like opencode).
	AstGrepBin string
	// Reader is the T2 reader model; empty BaseURL leaves T2 unavailable.
	Reader reader.Config
	// Engine reads runs and supervisors for the daily pass (nil on
	// workers that do not run it).
	Engine Engine
	// Signals tells the workflow that scheduled a retrying activity what
	// it waits out (SignalOutage); nil tells nobody.
	Signals Signaler
	// Notifier sends events to the configured receivers (nil: none).
	Notifier notify.Notifier
	// NotifyTimeout bounds one event's delivery (the notifier's
	// MaxDuration); OutageAfter is notify.outage_after (0: no outage
	// events).
	NotifyTimeout time.Duration
	OutageAfter   time.Duration
	Logger        zerolog.Logger
	// Identity names this worker (the Temporal worker identity); a
	// session's heartbeat carries it, so a retry elsewhere knows the
	// session's store is out of reach.
	Identity string
	// HostQueue is the task queue only this worker polls (HostQueue): an
	// activity that must run where this worker's OpenCode store is (the
	// advisor's watchdog) is scheduled there. "" on a process that polls
	// none.
	HostQueue string
}

// lanesDir is where lanes live.
func (a *Activities) lanesDir() string { return filepath.Join(a.Home, "lanes") }

// runDir is a run's artifact directory.
func (a *Activities) runDir(runID string) string { return filepath.Join(a.Home, "runs", runID) }

func badInput(format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), ErrTypeBadInput, nil)
}

// writeArtifact writes a run file atomically (temp file + rename), so a
// crash never leaves half a transcript.
func writeArtifact(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write artifact %s: %w", path, err)
	}
	if err := textio.WriteAtomic(path, data, 0o600); err != nil {
		return fmt.Errorf("write artifact: %w", err)
	}
	return nil
}
