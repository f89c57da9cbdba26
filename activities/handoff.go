package activities

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/horizon/horizon/gate"
	"github.com/horizon/horizon/horizon"
)

// HandoffOutput says where the handoff was written.
type HandoffOutput struct {
	Path string
}

// WriteHandoff renders the run's final Markdown handoff to
// runs/<run>/handoff.md. Verdicts come from the run's receipts.jsonl, not
// from the state the workflow passes: a feature is reported as verified
// only if its passing receipt is on disk. Decisions come from the run's
// decisions.jsonl; a planned run reports its plan and its final
// integration gate, a single-feature run its goal as one feature.
func (a *Activities) WriteHandoff(ctx context.Context, st horizon.RunState) (HandoffOutput, error) {
	defer keepAlive(ctx)()
	dir := a.runDir(st.RunID)
	recs, err := gate.ReadReceipts(filepath.Join(dir, "receipts.jsonl"))
	if err != nil {
		return HandoffOutput{}, fmt.Errorf("handoff: %w", err)
	}
	verdicts := make(map[string]string, len(recs))
	for _, r := range recs {
		verdicts[r.ID] = string(r.Verdict)
	}
	decisions, err := ReadDecisions(filepath.Join(dir, "decisions.jsonl"))
	if err != nil {
		return HandoffOutput{}, fmt.Errorf("handoff: %w", err)
	}
	plan := horizon.SingleFeaturePlan(st)
	if st.Plan != nil {
		plan = *st.Plan
	}
	md := horizon.Handoff(horizon.HandoffInput{
		RunID: st.RunID, Status: st.Status, Reason: st.Reason, Branch: st.Branch,
		Plan:            plan,
		Decisions:       decisions,
		ReceiptVerdicts: verdicts,
		Baseline:        st.Baseline,
		Integration:     st.Integration,
		Usage:           st.Usage,
	})
	out := HandoffOutput{Path: filepath.Join(dir, "handoff.md")}
	return out, writeArtifact(out.Path, []byte(md))
}
