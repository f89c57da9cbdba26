package horizon

import "strings"

// SingleFeaturePlan is the plan of a run that treats its goal as one
// feature (no planning step): one milestone, one feature, carrying the
// run's attempts, commit and blocker, so the handoff renders it like any
// planned run.
func SingleFeaturePlan(st RunState) Plan {
	title := strings.TrimSpace(st.Goal)
	if i := strings.IndexByte(title, '\n'); i >= 0 {
		title = title[:i]
	}
	f := Feature{ID: st.Feature, Title: title, Kind: KindBounded, Status: FeaturePending, Commit: st.Commit, Blocker: st.Blocker}
	if f.ID == "" {
		f.ID = "f1"
	}
	for _, a := range st.Attempts {
		if a.Action != "" { // retrieval steps are not attempts
			continue
		}
		f.Attempts = append(f.Attempts, a)
		if a.Gate != nil && a.Gate.ReceiptID != "" {
			f.ReceiptIDs = append(f.ReceiptIDs, a.Gate.ReceiptID)
		}
	}
	switch st.Status {
	case StatusCompleted:
		f.Status = FeatureAccepted
	case StatusBlocked:
		f.Status = FeatureBlocked
	}
	return Plan{
		Goal:       st.Goal,
		Ambiguity:  AmbiguityLow,
		Milestones: []Milestone{{ID: "m1", Title: title, Features: []Feature{f}}},
	}
}
