package activities

import (
	"fmt"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/consult"
)

// consultLedger is the consult ledger of a worker's attempt.
func (a *Activities) consultLedger(in SessionInput) string {
	return consult.LedgerPath(a.runDir(in.RunID), in.Feature, in.Attempt)
}

// registerConsults tells the consult tool (`horizon mcp`, started by
// OpenCode in the lane) which attempt the lane's worker works for, and
// what the spend authority allows its consults, before its session
// starts. A retry registers the same again.
func (a *Activities) registerConsults(in SessionInput) error {
	reg := consult.Registration{
		RunID: in.RunID, Feature: in.Feature, Attempt: in.Attempt, Lane: in.Lane, Ledger: a.consultLedger(in),
	}
	if c := in.Consults; c != nil {
		reg.Spend = &consult.SpendCheck{Off: c.Off, DayCeiling: c.DayCeiling, ThrottleAt: c.ThrottleAt}
	}
	if err := consult.Register(a.Home, reg); err != nil {
		return fmt.Errorf("worker session %s/%s attempt %d: %w", in.RunID, in.Feature, in.Attempt, err)
	}
	return nil
}

// addConsults puts the attempt's consults on the session's output and
// their cost into its usage, so the run's spend and the day's ledger count
// them with the session. The ledger is read whole: a retried activity
// returns the same list, and the workflow takes one result.
func (a *Activities) addConsults(in SessionInput, out *SessionOutput) error {
	cs, err := consult.Read(a.consultLedger(in))
	if err != nil {
		return err
	}
	out.Consults = cs
	out.Usage = out.Usage.Add(horizon.ConsultUsage(cs))
	return nil
}
