package activities

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
)

// gateTailBytes is how much gate output travels into history and the next
// brief; the full capped output is written under the run's directory.
const gateTailBytes = 4000

// RunGate runs the repository's gate in the lane. The gate script is the
// judge, so it is held to the base commit's version: if the worker edited
// it, the base version is restored before the run and the receipt says so.
func (a *Activities) RunGate(ctx context.Context, in GateInput) (horizon.GateRun, error) {
	g, err := gate.Discover(in.Lane)
	note := ""
	if g.Path != "" || errors.Is(err, gate.ErrGateNotRunnable) {
		rel := g.Source
		if rel == "" {
			rel = scriptIn(in.Lane)
		}
		if rel != "" && !gitOK(ctx, in.Lane, "diff", "--quiet", in.BaseCommit, "--", rel) {
			if _, rerr := git(ctx, in.Lane, "checkout", in.BaseCommit, "--", rel); rerr != nil {
				return horizon.GateRun{}, fmt.Errorf("restore gate script %s: %w", rel, rerr)
			}
			note = "the worker changed " + rel + "; the base commit's version was restored and run"
			g, err = gate.Discover(in.Lane)
		}
	}
	if err != nil {
		return horizon.GateRun{}, badInput("gate in lane %s: %v", in.Lane, err)
	}

	// Heartbeat while the gate runs so a crashed daemon's gate is retried
	// promptly; the output itself goes to the artifact, not to history.
	hbCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-hbCtx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, "gate running")
			}
		}
	}()
	res := gate.Run(ctx, g, gate.Options{Dir: in.Lane, Timeout: in.Timeout, AllowEnv: a.GateAllowEnv})
	stop()
	if ctx.Err() != nil {
		return horizon.GateRun{}, ctx.Err()
	}
	out := fmt.Sprintf("$ %s\n%s\n[verdict %s, exit %d, %s]\n", g.String(), res.Output, res.Verdict, res.ExitCode, res.Duration.Round(time.Millisecond))
	if err := writeArtifact(filepath.Join(a.runDir(in.RunID), "gate", fmt.Sprintf("attempt-%d.log", in.Attempt)), []byte(out)); err != nil {
		return horizon.GateRun{}, err
	}
	tail := res.Output
	if res.Err != "" {
		tail += "\n" + res.Err
	}
	return horizon.GateRun{
		Verdict:    string(res.Verdict),
		ExitCode:   res.ExitCode,
		DurationMS: res.Duration.Milliseconds(),
		Command:    g.Source,
		Tail:       lastBytes(tail, gateTailBytes),
		Note:       note,
	}, nil
}

func scriptIn(dir string) string {
	for _, p := range gate.ScriptPaths {
		if gitOK(context.Background(), dir, "ls-files", "--error-unmatch", p) {
			return p
		}
	}
	return ""
}

func lastBytes(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	for cut < len(s) && (s[cut]&0xC0) == 0x80 {
		cut++
	}
	return s[cut:]
}
