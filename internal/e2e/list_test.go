package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

// list --here finds the runs of a repository whose path holds quotes and a
// backslash, which the embedded engine cannot match in a query; and no
// other repository's.
func TestListHereOddPath(t *testing.T) {
	needsE2E(t)
	w := newWorld(t, &fakemodel.Script{})
	odd := filepath.Join(t.TempDir(), `ann's "app" a\b`)
	require.NoError(t, demo.CreateRepo(odd, ""))
	plain, _ := fixture(t)

	out, code := w.run(context.Background(), "start", "--detach", "--repo", odd, "--model", demo.Model, goal)
	require.Equal(t, 0, code, out)
	id := runIDRe.FindString(out)
	require.NotEmpty(t, id, out)

	for _, q := range []struct {
		repo string
		want []string
	}{
		{odd, []string{id}},
		{plain, nil},
	} {
		// The engine's list (visibility) trails a start by a moment, more
		// so under load: the run is looked for until it is listed.
		var got []string
		deadline := time.Now().Add(30 * time.Second)
		for {
			lst, code := w.stdout("list", "--json", "--here", "--repo", q.repo)
			require.Equal(t, 0, code, lst)
			var runs []struct {
				RunID string `json:"run_id"`
			}
			require.NoError(t, json.Unmarshal([]byte(lst), &runs))
			got = nil
			for _, r := range runs {
				got = append(got, r.RunID)
			}
			if len(got) >= len(q.want) || time.Now().After(deadline) {
				break
			}
			time.Sleep(300 * time.Millisecond)
		}
		require.Equal(t, q.want, got, q.repo)
	}
	out, code = w.run(context.Background(), "list", "--here", "--repo", plain)
	require.Equal(t, 0, code, out)
	require.True(t, strings.HasPrefix(out, "no runs of "+plain), out)

	// No supervisor has run a daily pass: `horizon report` makes today's
	// report now, from the engine's records, instead of sending the
	// person to a supervisor they do not have.
	rep, code := w.stdout("report", "--json")
	require.Equal(t, 0, code, rep)
	var daily struct {
		Date  string `json:"date"`
		Repos []struct {
			Repo string `json:"repo"`
			Runs []struct {
				RunID string `json:"run_id"`
			} `json:"runs"`
		} `json:"repos"`
	}
	require.NoError(t, json.Unmarshal([]byte(rep), &daily), rep)
	require.Equal(t, time.Now().UTC().Format(time.DateOnly), daily.Date)
	var reported []string
	for _, r := range daily.Repos {
		for _, run := range r.Runs {
			if r.Repo == odd {
				reported = append(reported, run.RunID)
			}
		}
	}
	require.Equal(t, []string{id}, reported, "the run, under its repository: %s", rep)
	md, code := w.stdout("report")
	require.Equal(t, 0, code, md)
	require.Contains(t, md, daily.Date, "the report made now is the newest one now")

	out, code = w.run(context.Background(), "cancel", id)
	require.Equal(t, 0, code, out)
}
