// Package console is `horizon console`: a live terminal view of every run
// across repositories (status, phase, progress, cost), the selected run's
// plan tree with its attempts, tiers, receipts and advisor notes, and what
// waits on a person (approvals, blockers, ceilings, stalled goals), with
// keys to approve, unblock, pause, resume and cancel.
//
// It is a bubbletea model (model.go) whose Update is pure: reads and verbs
// are commands against a Backend (backend.go), the one seam to horizon's
// core, so tests drive the model with key messages and a fake backend and
// compare screens with golden files. When the output is no terminal, Print
// (plain.go) writes the same information once as text.
package console

import (
	"context"
	"errors"
	"fmt"
	"io"

	tea "charm.land/bubbletea/v2"
)

// Run shows the console on the terminal until the person quits (q) or ctx
// ends. Quitting touches no run.
func Run(ctx context.Context, b Backend, o Options, in io.Reader, out io.Writer) error {
	p := tea.NewProgram(New(ctx, b, o), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	if _, err := p.Run(); err != nil && !(errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil) {
		return fmt.Errorf("console: %w", err)
	}
	return nil
}
