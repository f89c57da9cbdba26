package horizon

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A budget's time is written in seconds under a name that says so, and a
// state written before (nanoseconds under "time") still reads.
func TestBudgetJSONNamesItsUnit(t *testing.T) {
	deadline := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	b := Budget{Time: 72 * time.Hour, Spend: 20, Deadline: deadline}
	data, err := json.Marshal(b)
	require.NoError(t, err)
	require.JSONEq(t, `{"time_seconds": 259200, "spend": 20, "deadline": "2026-12-05T09:00:00Z"}`, string(data))

	var back Budget
	require.NoError(t, json.Unmarshal(data, &back))
	require.Equal(t, b, back)

	var old Budget
	require.NoError(t, json.Unmarshal([]byte(`{"time": 259200000000000, "spend": 20, "deadline": "2026-12-05T09:00:00Z"}`), &old))
	require.Equal(t, b, old, "a state written with nanoseconds")

	var none Budget
	require.NoError(t, json.Unmarshal([]byte(`{}`), &none))
	require.Equal(t, Budget{}, none)
}
