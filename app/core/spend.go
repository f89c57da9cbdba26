package core

// Spend per day: every metered cost is appended to
// <data dir>/spend/<UTC day>.jsonl by the activity that incurred it
// (activities/spend.go), once per key.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/horizon/horizon/horizon"
)

// Spend reads the spend ledger under DataDir.
type Spend struct {
	DataDir string
	// DayCeiling is spend.day_ceiling (0: none), shown with each day.
	DayCeiling float64
}

// ledgerRecord is the part of activities' spend record a reader needs.
type ledgerRecord struct {
	Key  string  `json:"key"`
	Cost float64 `json:"cost"`
}

// Days is what was spent on each of the n UTC days up to and including
// until's, oldest first; a day without a ledger spent nothing.
func (s Spend) Days(until time.Time, n int) ([]horizon.DaySpend, error) {
	out := make([]horizon.DaySpend, 0, n)
	last := until.UTC()
	for i := n - 1; i >= 0; i-- {
		day := last.AddDate(0, 0, -i).Format(time.DateOnly)
		spent, err := s.day(day)
		if err != nil {
			return nil, err
		}
		d := horizon.DaySpend{Day: day, Spent: spent, Ceiling: s.DayCeiling}
		d.AtCeiling = s.DayCeiling > 0 && spent >= s.DayCeiling
		out = append(out, d)
	}
	return out, nil
}

func (s Spend) day(day string) (float64, error) {
	f, err := os.Open(filepath.Join(s.DataDir, "spend", day+".jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read spend of %s: %w", day, err)
	}
	defer f.Close()
	total := 0.0
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r ledgerRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil || seen[r.Key] {
			continue
		}
		if r.Key != "" {
			seen[r.Key] = true
		}
		total += r.Cost
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read spend of %s: %w", day, err)
	}
	return total, nil
}
