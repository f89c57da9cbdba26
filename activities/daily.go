package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/horizon/horizon/horizon"
)

// Engine reads from the engine what the daily pass reports on. The daemon
// gives the activities its client's reader (app/core).
type Engine interface {
	// RunsSince returns every run open now or closed since t.
	RunsSince(ctx context.Context, since time.Time) ([]horizon.RunState, error)
	// Supervisors returns every running supervisor's state.
	Supervisors(ctx context.Context) ([]horizon.SupervisorState, error)
}

// DailyInput is one daily pass.
type DailyInput struct {
	// Until is the pass's time (the workflow's clock): it names the
	// report, and a retry writes the same report.
	Until         time.Time
	StallAttempts int
	DayCeiling    float64
}

// DailyOutput says where the report is and what it flagged.
type DailyOutput struct {
	Date     string
	Markdown string
	JSON     string
	Stalled  []horizon.Stall
	// Summary is one line for a notification.
	Summary string
}

// DailyReport writes $HORIZON_HOME/reports/<date>.md and .json: per
// repository what landed since the last pass, what waits for a person,
// spend, and stalled goals. The window starts where the newest earlier
// report ended, so nothing is reported twice or missed across a laptop's
// sleep; a retry rewrites the same files.
func (a *Activities) DailyReport(ctx context.Context, in DailyInput) (DailyOutput, error) {
	defer keepAlive(ctx)()
	if a.Engine == nil {
		return DailyOutput{}, errors.New("daily report: this worker has no engine reader")
	}
	since, err := a.lastPass(in.Until)
	if err != nil {
		return DailyOutput{}, err
	}
	from := since
	if from.IsZero() {
		from = in.Until.Add(-24 * time.Hour)
	}
	runs, err := a.Engine.RunsSince(ctx, from)
	if err != nil {
		return DailyOutput{}, fmt.Errorf("daily report: %w", err)
	}
	sups, err := a.Engine.Supervisors(ctx)
	if err != nil {
		return DailyOutput{}, fmt.Errorf("daily report: %w", err)
	}
	rep := horizon.BuildReport(horizon.ReportInput{
		Since: since, Until: in.Until, StallAttempts: in.StallAttempts, DayCeiling: in.DayCeiling,
		Repos: a.reportRepos(ctx, runs, sups),
	})
	md, js := horizon.ReportPaths(rep.Date)
	out := DailyOutput{Date: rep.Date, Markdown: filepath.Join(a.Home, md), JSON: filepath.Join(a.Home, js)}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return DailyOutput{}, fmt.Errorf("daily report: %w", err)
	}
	if err := writeArtifact(out.JSON, append(data, '\n')); err != nil {
		return DailyOutput{}, err
	}
	if err := writeArtifact(out.Markdown, []byte(rep.Markdown())); err != nil {
		return DailyOutput{}, err
	}
	landed := 0
	for _, r := range rep.Repos {
		out.Stalled = append(out.Stalled, r.Stalled...)
		landed += len(r.Landed)
	}
	out.Summary = fmt.Sprintf("daily report %s: %d features landed, %d stalled, in %d repositories: %s", rep.Date, landed, len(out.Stalled), len(rep.Repos), out.Markdown)
	return out, nil
}

// reportRepos groups runs by repository: supervised repositories first (in
// the order their supervisors were listed), with their roadmap, records
// and queue; then repositories with runs only.
func (a *Activities) reportRepos(ctx context.Context, runs []horizon.RunState, sups []horizon.SupervisorState) []horizon.RepoInput {
	var repos []horizon.RepoInput
	index := func(repo string) int {
		if i := slices.IndexFunc(repos, func(r horizon.RepoInput) bool { return r.Repo == repo }); i >= 0 {
			return i
		}
		repos = append(repos, horizon.RepoInput{Repo: repo, Runs: []horizon.RunState{}})
		return len(repos) - 1
	}
	for _, s := range sups {
		i := index(s.Repo)
		repos[i].Records, repos[i].Queue = s.Items, s.Queue
		repos[i].Approvals = s.AwaitingApproval()
		repos[i].Outage = s.Outage
		text, err := a.ReadRoadmap(ctx, RoadmapInput{Repo: s.Repo, Base: s.Base, Path: s.Roadmap})
		if err != nil || !text.Found {
			continue
		}
		if text.Problem != "" {
			repos[i].RoadmapError = text.Problem
			continue
		}
		rm, err := horizon.ParseRoadmap(s.Roadmap, text.Text)
		if err != nil {
			repos[i].RoadmapError = err.Error()
			continue
		}
		repos[i].Roadmap = &rm
	}
	for _, r := range runs {
		i := index(r.Repo)
		repos[i].Runs = append(repos[i].Runs, r)
	}
	return repos
}

// lastPass is when the newest report before until ended (zero: none).
func (a *Activities) lastPass(until time.Time) (time.Time, error) {
	dir := filepath.Join(a.Home, "reports")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("daily report: %w", err)
	}
	var last time.Time
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var r struct {
			Until time.Time `json:"until"`
		}
		if json.Unmarshal(data, &r) != nil || !r.Until.Before(until) {
			continue
		}
		if r.Until.After(last) {
			last = r.Until
		}
	}
	return last, nil
}
