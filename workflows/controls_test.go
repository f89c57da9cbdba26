package workflows

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/horizon"
)

// The ceiling updates refuse what is not an amount of dollars before the
// run takes it: NaN and ±Inf would pass every comparison and break the
// run's JSON state.
func TestValidateCeilings(t *testing.T) {
	c := &controls{s: &runStatus{state: horizon.RunState{Usage: horizon.Usage{Cost: 1.5}}}}
	tests := []struct {
		name string
		usd  float64
		run  string // "" when the run's ceiling takes it
		day  string // "" when the daily ceiling takes it
	}{
		{"none", 0, "", ""},
		{"above what was spent", 5, "", ""},
		{"at what was spent", 1.5, "not above what the run has spent", ""},
		{"below what was spent", 1, "not above what the run has spent", ""},
		{"negative", -5, "must be 0 (none) or positive", "must be 0 (none) or positive"},
		{"NaN", math.NaN(), "ceiling NaN: not a number of dollars", "daily ceiling NaN: not a number of dollars"},
		{"+Inf", math.Inf(1), "ceiling +Inf: not a number of dollars", "daily ceiling +Inf: not a number of dollars"},
		{"-Inf", math.Inf(-1), "ceiling -Inf: not a number of dollars", "daily ceiling -Inf: not a number of dollars"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range []struct {
				validate func(float64) error
				want     string
			}{{c.validateCeiling, tt.run}, {c.validateDayCeiling, tt.day}} {
				err := v.validate(tt.usd)
				if v.want == "" {
					require.NoError(t, err)
					continue
				}
				require.ErrorContains(t, err, v.want)
			}
		})
	}
}
