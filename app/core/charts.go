package core

// The series the dashboard's charts draw, computed from runs' states: what
// landed per day, how many attempts each feature took.

import (
	"time"

	"github.com/horizon/horizon/horizon"
)

// DayCount is a count on one UTC day (YYYY-MM-DD).
type DayCount struct {
	Day   string `json:"day"`
	Count int    `json:"count"`
}

// LandedPerDay counts the features (or one-feature runs) accepted on each
// of the n UTC days up to until's, oldest first, by when their accepted
// attempt ended.
func LandedPerDay(states []horizon.RunState, until time.Time, n int) []DayCount {
	out := make([]DayCount, n)
	index := map[string]int{}
	last := until.UTC()
	for i := range n {
		out[i].Day = last.AddDate(0, 0, i-(n-1)).Format(time.DateOnly)
		index[out[i].Day] = i
	}
	count := func(attempts []horizon.Attempt) {
		for _, a := range attempts {
			if a.Outcome != horizon.OutcomeAccepted || a.EndedAt.IsZero() {
				continue
			}
			if i, ok := index[a.EndedAt.UTC().Format(time.DateOnly)]; ok {
				out[i].Count++
			}
		}
	}
	for _, s := range states {
		if s.Plan == nil {
			count(s.Attempts)
			continue
		}
		for _, m := range s.Plan.Milestones {
			for _, f := range m.Features {
				count(f.Attempts)
			}
		}
	}
	return out
}

// FeatureAttempts is how many attempts a feature of a run took, and what
// they cost.
type FeatureAttempts struct {
	Feature  string                `json:"feature"`
	Title    string                `json:"title"`
	Status   horizon.FeatureStatus `json:"status"`
	Attempts int                   `json:"attempts"`
	Cost     float64               `json:"cost"`
}

// AttemptsPerFeature lists a planned run's features in plan order with
// their attempts; a one-feature run is one entry.
func AttemptsPerFeature(s *horizon.RunState) []FeatureAttempts {
	out := []FeatureAttempts{}
	if s == nil {
		return out
	}
	if s.Plan == nil {
		fa := FeatureAttempts{Feature: s.Feature, Title: s.Goal, Status: horizon.FeatureStatus(s.Status), Attempts: len(s.Attempts)}
		for _, a := range s.Attempts {
			fa.Cost += a.Usage.Cost
		}
		return append(out, fa)
	}
	for _, m := range s.Plan.Milestones {
		for _, f := range m.Features {
			fa := FeatureAttempts{Feature: f.ID, Title: f.Title, Status: f.Status, Attempts: len(f.Attempts)}
			for _, a := range f.Attempts {
				fa.Cost += a.Usage.Cost
			}
			out = append(out, fa)
		}
	}
	return out
}
