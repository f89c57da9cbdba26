package core

// Daily reports: the daily pass writes reports/<date>.md and .json under
// the data dir (config DataDir: worker.shared_dir, else $HORIZON_HOME).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/horizon/horizon/horizon"
)

// Reports reads the daily reports under DataDir.
type Reports struct{ DataDir string }

func (r Reports) dir() string { return filepath.Join(r.DataDir, "reports") }

// Latest is the newest report's date; none is *NoReportError.
func (r Reports) Latest() (string, error) {
	entries, err := os.ReadDir(r.dir())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("list reports: %w", err)
	}
	var dates []string
	for _, e := range entries {
		if d, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			dates = append(dates, d)
		}
	}
	if len(dates) == 0 {
		return "", &NoReportError{Dir: r.dir()}
	}
	sort.Strings(dates)
	return dates[len(dates)-1], nil
}

// Markdown is the report of date as the person reads it.
func (r Reports) Markdown(date string) ([]byte, error) { return r.read(date, false) }

// JSON is the report of date as horizon.DailyReport JSON.
func (r Reports) JSON(date string) ([]byte, error) { return r.read(date, true) }

func (r Reports) read(date string, asJSON bool) ([]byte, error) {
	md, js := horizon.ReportPaths(date)
	name := md
	if asJSON {
		name = js
	}
	data, err := os.ReadFile(filepath.Join(r.DataDir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, &NoReportError{Date: date, Dir: r.dir()}
	}
	if err != nil {
		return nil, fmt.Errorf("read report %s: %w", date, err)
	}
	return data, nil
}
