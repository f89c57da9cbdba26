package ladder

import (
	"fmt"
	"math"
)

// DefaultThrottleAt is the fraction of a ceiling at which Route throttles
// to local tiers when Spend.ThrottleAt is not set.
const DefaultThrottleAt = 0.8

// Spend is what the run and the day have spent and may spend, in USD. The
// day figures cover every run of the day (one budget across runs).
//
// A ceiling that is zero or negative means no paid budget on that axis:
// Route then uses local tiers only. Not setting a ceiling must never open
// the operator's wallet; to spend without limit, set the ceiling to
// math.Inf(1).
type Spend struct {
	RunSpent   float64 `json:"run_spent"`
	RunCeiling float64 `json:"run_ceiling"`
	DaySpent   float64 `json:"day_spent"`
	DayCeiling float64 `json:"day_ceiling"`
	// ThrottleAt is the fraction of a ceiling (0 < f ≤ 1) from which only
	// local tiers are used; 0 (unset) means DefaultThrottleAt, and values
	// above 1 count as 1.
	ThrottleAt float64 `json:"throttle_at,omitempty"`
}

// budget is Route's reading of a Spend.
type budget struct {
	pause  bool   // a ceiling is reached (or a figure is not a number): run nothing
	paidOK bool   // paid tiers may be used
	why    string // why pausing, or why paid tiers are off
}

// throttle returns the effective ThrottleAt.
func (s Spend) throttle() float64 {
	f := s.ThrottleAt
	switch {
	case math.IsNaN(f) || f <= 0:
		return DefaultThrottleAt
	case f > 1:
		return 1
	}
	return f
}

// budget applies the spend policy: at or over a ceiling → pause; a ceiling
// not set, or spent ≥ ThrottleAt × ceiling → local tiers only.
func (s Spend) budget() budget {
	axes := []struct {
		name           string
		spent, ceiling float64
	}{
		{"run", s.RunSpent, s.RunCeiling},
		{"day", s.DaySpent, s.DayCeiling},
	}
	// A figure that is not a number cannot be compared with anything, and
	// NaN compares false with everything: stop rather than guess.
	for _, a := range axes {
		if math.IsNaN(a.spent) || math.IsInf(a.spent, 0) || math.IsNaN(a.ceiling) {
			return budget{pause: true, why: fmt.Sprintf("%s spend figures are not numbers (spent %v, ceiling %v): paused until they are fixed", a.name, a.spent, a.ceiling)}
		}
	}
	for _, a := range axes {
		if a.ceiling > 0 && a.spent >= a.ceiling {
			return budget{pause: true, why: fmt.Sprintf("%s spend %s reached the %s ceiling of %s: paused until the ceiling is raised", a.name, money(a.spent), a.name, money(a.ceiling))}
		}
	}
	th := s.throttle()
	for _, a := range axes {
		if a.ceiling <= 0 {
			return budget{paidOK: false, why: fmt.Sprintf("no %s spend ceiling is set, so there is no paid budget: local tiers only", a.name)}
		}
		if a.spent >= th*a.ceiling {
			return budget{paidOK: false, why: fmt.Sprintf("%s spend %s is at or past %g%% of the %s ceiling of %s: local tiers only", a.name, money(a.spent), th*100, a.name, money(a.ceiling))}
		}
	}
	return budget{paidOK: true}
}

// money formats USD with cents, or with more digits for sub-cent amounts.
func money(v float64) string {
	if math.IsInf(v, 1) {
		return "unlimited"
	}
	if v != 0 && math.Abs(v) < 0.01 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

// Limited reports whether the spend figures alone restrict routing: a
// ceiling reached, or spend past the throttle point (paid tiers off). A
// pause from Route while Limited is false comes from the tiers (none
// usable), not from the budget, and waiting for a raise will not help.
func (s Spend) Limited() bool {
	b := s.budget()
	return b.pause || !b.paidOK
}
