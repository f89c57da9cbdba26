package config

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// validateSupervisor checks the supervisor.* keys, reporting each through
// bad (which names where the value came from).
func (c *Config) validateSupervisor(bad func(key, format string, args ...any)) {
	s := c.Supervisor
	if _, err := cleanRoadmapPath(s.Roadmap); err != nil {
		bad("supervisor.roadmap", "%v", err)
	}
	if s.MaxActiveRuns < 1 {
		bad("supervisor.max_active_runs", "%d: must be at least 1 (runs at once per repository)", s.MaxActiveRuns)
	}
	if err := ValidateCron(s.DecomposeCron); err != nil {
		bad("supervisor.decompose_cron", "%v", err)
	}
	if err := ValidateCron(s.DailyCron); err != nil {
		bad("supervisor.daily_cron", "%v", err)
	}
	if s.DecomposeAhead < 1 {
		bad("supervisor.decompose_ahead", "%d: must be at least 1 (roadmap plans kept ready ahead of the queue)", s.DecomposeAhead)
	}
	if s.StallAttempts < 2 {
		bad("supervisor.stall_attempts", "%d: must be at least 2 (attempts since the last accepted feature before a goal counts as stalled)", s.StallAttempts)
	}
	if s.CatchupWindow < MinCatchupWindow {
		bad("supervisor.catchup_window", "%s: must be at least %s (how late a missed nightly decomposition or daily pass may still run), e.g. 24h", s.CatchupWindow, MinCatchupWindow)
	}
	if s.DecomposeTimeout < MinDecomposeTimeout {
		bad("supervisor.decompose_timeout", "%s: must be at least %s (how long the lead may take to decompose a roadmap item), e.g. 2h", s.DecomposeTimeout, MinDecomposeTimeout)
	}
	if !s.Autonomy.Valid() {
		bad("supervisor.autonomy", "%q: use full, semi or supervised, or leave it unset to use run.autonomy", s.Autonomy)
	}
}

// MinDecomposeTimeout is the shortest supervisor.decompose_timeout: the
// lead's planning session takes minutes even when all goes well.
const MinDecomposeTimeout = time.Minute

// cleanRoadmapPath checks that p names a file inside the repository, as
// a slash-separated relative path (it is read from a git commit, not the
// file system), and returns it cleaned.
func cleanRoadmapPath(p string) (string, error) {
	t := strings.TrimSpace(p)
	switch {
	case t == "":
		return "", fmt.Errorf("must name the roadmap file relative to the repository root, e.g. %s", DefaultRoadmap)
	case strings.Contains(t, `\`):
		return "", fmt.Errorf("%q: use forward slashes, e.g. %s", p, DefaultRoadmap)
	case strings.HasPrefix(t, "/"):
		return "", fmt.Errorf("%q is absolute: the roadmap is read from the base branch, so give a path relative to the repository root, e.g. %s", p, DefaultRoadmap)
	}
	c := path.Clean(t)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%q is not a file inside the repository; use a path such as %s", p, DefaultRoadmap)
	}
	return c, nil
}

// cronField is one of the five fields of a cron spec.
type cronField struct {
	name     string
	min, max int
	names    []string // names[i] stands for min+i (JAN=1, SUN=0)
}

var cronFields = []cronField{
	{name: "minute", min: 0, max: 59},
	{name: "hour", min: 0, max: 23},
	{name: "day of month", min: 1, max: 31},
	{name: "month", min: 1, max: 12, names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	// 7 is Sunday as well as 0, as in most crons.
	{name: "day of week", min: 0, max: 7, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

// ValidateCron checks a five-field cron spec (minute hour day-of-month
// month day-of-week), each field a comma list of *, N, N-M, with an
// optional /STEP; months and weekdays may be named (JAN, MON). It does
// not compute times: the Temporal Schedule does that. Macros such as
// @daily are refused so every spec reads the same way.
func ValidateCron(spec string) error {
	fs := strings.Fields(spec)
	if len(fs) != len(cronFields) {
		return fmt.Errorf("%q has %d fields; a cron spec has five: minute hour day-of-month month day-of-week, e.g. \"0 2 * * *\" (02:00 every day)", spec, len(fs))
	}
	for i, f := range fs {
		if err := cronFields[i].check(f); err != nil {
			return fmt.Errorf("%q: field %d (%s) %q: %w", spec, i+1, cronFields[i].name, f, err)
		}
	}
	return nil
}

func (cf cronField) check(field string) error {
	for _, term := range strings.Split(field, ",") {
		if term == "" {
			return fmt.Errorf("empty list entry")
		}
		rng, step, hasStep := strings.Cut(term, "/")
		if hasStep {
			n, err := strconv.Atoi(step)
			if err != nil || n < 1 {
				return fmt.Errorf("step %q is not a positive number", step)
			}
			if n > cf.max {
				return fmt.Errorf("step %d is larger than the field's range %d-%d", n, cf.min, cf.max)
			}
		}
		if rng == "*" {
			continue
		}
		lo, hi, isRange := strings.Cut(rng, "-")
		a, err := cf.value(lo)
		if err != nil {
			return err
		}
		if !isRange {
			continue
		}
		b, err := cf.value(hi)
		if err != nil {
			return err
		}
		if a > b {
			return fmt.Errorf("range %s runs backwards", rng)
		}
	}
	return nil
}

// value reads one number or name of the field.
func (cf cronField) value(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("missing value (use *, a number %d-%d or a range)", cf.min, cf.max)
	}
	for i, n := range cf.names {
		if strings.EqualFold(s, n) {
			return cf.min + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number %d-%d%s", s, cf.min, cf.max, cf.namesHint())
	}
	if v < cf.min || v > cf.max {
		return 0, fmt.Errorf("%d is out of range %d-%d", v, cf.min, cf.max)
	}
	return v, nil
}

func (cf cronField) namesHint() string {
	if len(cf.names) == 0 {
		return ""
	}
	return " or a name " + strings.ToUpper(cf.names[0]) + "…" + strings.ToUpper(cf.names[len(cf.names)-1])
}
