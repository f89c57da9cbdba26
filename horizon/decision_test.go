package horizon

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDecision(t *testing.T) {
	d, err := NewDecision(t0.In(time.FixedZone("CET", 3600)), " f2 ", " Decompose f2 ", "six attempts across four strategies did not pass the gate", "r-016", " ")
	require.NoError(t, err)
	require.Equal(t, Decision{At: t0, Feature: "f2", What: "Decompose f2", Why: "six attempts across four strategies did not pass the gate", Evidence: []string{"r-016"}}, d)
	b, err := json.Marshal(d)
	require.NoError(t, err)
	require.JSONEq(t, `{"at":"2026-03-01T09:00:00Z","feature":"f2","what":"Decompose f2","why":"six attempts across four strategies did not pass the gate","evidence":["r-016"]}`, string(b))

	_, err = NewDecision(time.Time{}, "", "", "")
	require.ErrorContains(t, err, "no time")
	require.ErrorContains(t, err, "what was decided")
	require.ErrorContains(t, err, "why")
}
