package workflows

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/horizon"
)

// A one-feature run recorded as a RunWorkflow (Planned unset) still runs
// as one through the dispatcher: the same attempt, gate and commit.
func TestRunWorkflowRunsAOneFeatureRun(t *testing.T) {
	e := newEnv(t)
	e.sessions([]activities.SessionOutput{satisfied}, []activities.SessionOutput{accept})
	e.gates("pass")
	e.OnActivity(a.CommitFeature, mock.Anything, mock.Anything).Return(activities.CommitOutput{Commit: "def456", Branch: "horizon/run-1"}, nil).Once()
	in := input()
	e.ExecuteWorkflow(RunWorkflow, RunInput{
		RunID: in.RunID, Goal: in.Goal, Repo: in.Repo, BaseRef: in.BaseRef, BaseCommit: in.BaseCommit, Model: in.Model, MaxAttempts: in.MaxAttempts,
	})
	s, err := result(t, e)
	require.NoError(t, err)
	require.Equal(t, horizon.StatusCompleted, s.Status)
	require.Equal(t, "def456", s.Commit)
	require.Equal(t, 3, s.MaxAttempts)
	require.Len(t, s.Attempts, 1)
	require.Equal(t, horizon.OutcomeAccepted, s.Attempts[0].Outcome)
}

// RunInput holds each kind's fields under the same names (the same
// JSON): Start hands every one of them but Planned to the kind that reads
// it, the shared ones (RunBase) to both, and a planned run's input turns
// back into the RunInput it came from (a RunWorkflow's continue-as-new),
// but for the one-feature fields it does not read.
func TestRunInputStartsItsKind(t *testing.T) {
	var in RunInput
	fill(reflect.ValueOf(&in).Elem(), 0)
	require.NotZero(t, in.Limits, "the filler reaches nested structs")

	all := jsonFields(t, in)
	delete(all, "Planned")
	base := jsonFields(t, in.base())
	single, planned := jsonFields(t, in.single()), jsonFields(t, in.planned())
	union := maps.Clone(single)
	maps.Copy(union, planned)
	require.Equal(t, all, union, "every field of RunInput goes to a kind, unchanged")
	for k := range single {
		if _, ok := planned[k]; ok {
			require.Contains(t, base, k, "%s is read by both kinds: it belongs in RunBase", k)
		}
	}
	require.ElementsMatch(t, []string{"MaxAttempts", "Kind"}, slices.Collect(maps.Keys(without(single, base))))

	in.Planned = false
	typ, arg := in.Start()
	require.Equal(t, SingleRunWorkflowName, typ)
	require.Equal(t, in.single(), arg)

	in.Planned = true
	typ, arg = in.Start()
	require.Equal(t, PlannedRunWorkflowName, typ)
	require.Equal(t, in.planned(), arg)

	back := in.planned().runInput()
	want := in
	want.MaxAttempts, want.Kind = 0, ""
	require.Equal(t, want, back)
}

// fill sets every exported field v reaches to a value that is not its
// zero (strings, numbers, bools, structs and pointers to them), depth
// levels deep at most.
func fill(v reflect.Value, depth int) {
	if depth > 3 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + v.Type().Name())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(7 + depth))
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		if v.Type().Elem().Kind() == reflect.Struct {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// jsonFields is v's JSON object, field by field.
func jsonFields(t *testing.T, v any) map[string]json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// without is m without the keys of drop.
func without(m, drop map[string]json.RawMessage) map[string]json.RawMessage {
	out := maps.Clone(m)
	for k := range drop {
		delete(out, k)
	}
	return out
}
