package ladder

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSpendBudget(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name   string
		s      Spend
		pause  bool
		paidOK bool
		why    string
	}{
		{"well under both ceilings", Spend{RunSpent: 1, RunCeiling: 10, DaySpent: 5, DayCeiling: 50}, false, true, ""},
		{"unlimited", Spend{RunSpent: 1e6, RunCeiling: inf, DaySpent: 1e6, DayCeiling: inf}, false, true, ""},
		{"run near its ceiling (default 80%)", Spend{RunSpent: 8, RunCeiling: 10, DayCeiling: 50}, false, false,
			"run spend $8.00 is at or past 80% of the run ceiling of $10.00: local tiers only"},
		{"day near its ceiling, custom throttle", Spend{RunCeiling: 10, DaySpent: 45, DayCeiling: 50, ThrottleAt: 0.9}, false, false,
			"day spend $45.00 is at or past 90% of the day ceiling of $50.00: local tiers only"},
		{"just under the throttle", Spend{RunSpent: 8.99, RunCeiling: 10, DayCeiling: 50, ThrottleAt: 0.9}, false, true, ""},
		{"run at its ceiling", Spend{RunSpent: 10, RunCeiling: 10, DayCeiling: 50}, true, false,
			"run spend $10.00 reached the run ceiling of $10.00: paused until the ceiling is raised"},
		{"day over its ceiling", Spend{RunCeiling: 10, DaySpent: 51.5, DayCeiling: 50}, true, false,
			"day spend $51.50 reached the day ceiling of $50.00: paused until the ceiling is raised"},
		{"no ceiling set: no paid budget", Spend{}, false, false,
			"no run spend ceiling is set, so there is no paid budget: local tiers only"},
		{"throttle above 1 counts as 1", Spend{RunSpent: 9.99, RunCeiling: 10, DayCeiling: 50, ThrottleAt: 7}, false, true, ""},
		{"NaN spend pauses", Spend{RunSpent: math.NaN(), RunCeiling: 10, DayCeiling: 50}, true, false, ""},
		{"NaN ceiling pauses", Spend{RunCeiling: math.NaN(), DayCeiling: 50}, true, false, ""},
		{"infinite spend pauses", Spend{RunSpent: inf, RunCeiling: inf, DayCeiling: inf}, true, false, ""},
		{"sub-cent figures", Spend{RunSpent: 0.0042, RunCeiling: 0.005, DayCeiling: 1}, false, false,
			"run spend $0.0042 is at or past 80% of the run ceiling of $0.0050: local tiers only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.s.budget()
			require.Equal(t, tt.pause, b.pause)
			require.Equal(t, tt.paidOK, b.paidOK)
			if tt.why != "" {
				require.Equal(t, tt.why, b.why)
			}
			if tt.pause || !tt.paidOK {
				require.NotEmpty(t, b.why)
			}
		})
	}
}

func TestSpendLimited(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name string
		s    Spend
		want bool
	}{
		{"no ceilings", Spend{RunCeiling: inf, DayCeiling: inf}, false},
		{"well under", Spend{RunSpent: 1, RunCeiling: 10, DayCeiling: inf}, false},
		{"past throttle", Spend{RunSpent: 9, RunCeiling: 10, DayCeiling: inf}, true},
		{"at day ceiling", Spend{RunCeiling: inf, DaySpent: 5, DayCeiling: 5}, true},
		{"unset ceiling means no paid budget", Spend{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.Limited(); got != tt.want {
				t.Fatalf("Limited() = %v, want %v", got, tt.want)
			}
		})
	}
}
