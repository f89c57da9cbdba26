package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// changeGateRecord: every gate run carries the run's gate record (decided
// once on the base commit at preflight), gate.protected and the baseline's
// receipt, so the activity restores exactly the recorded gate and names
// the baseline's failing tests that vanished. Older histories run their
// gates without them; the activity then discovers the gate on the base
// commit (never in the lane).
const changeGateRecord = "gate-record-restore"

// judged completes a gate run's input with what holds the lane to the
// run's gate: its record, the protected paths and the baseline receipt
// (nil for the baseline run itself).
func judged(ctx workflow.Context, in activities.GateInput, rec *horizon.GateRecord, limits Limits, baseline *horizon.GateRun) activities.GateInput {
	if version(ctx, changeGateRecord, 1) < 1 {
		return in
	}
	in.Record, in.Protected = rec, limits.GateProtected
	if baseline != nil {
		in.BaselineReceipt = baseline.ReceiptID
	}
	return in
}
