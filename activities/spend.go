package activities

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/horizon/horizon/horizon/textio"
)

// spendRecord is one metered cost, appended to $HORIZON_HOME/spend/<UTC
// day>.jsonl by the activity that incurred it. The key makes a retried
// activity count once.
type spendRecord struct {
	Key  string    `json:"key"`
	Run  string    `json:"run"`
	Cost float64   `json:"cost"`
	At   time.Time `json:"at"`
}

func (a *Activities) spendFile(day time.Time) string {
	return filepath.Join(a.Home, "spend", day.UTC().Format("2006-01-02")+".jsonl")
}

// recordSpend adds a cost to today's ledger, once per key.
func (a *Activities) recordSpend(run, key string, cost float64) error {
	if cost <= 0 {
		return nil
	}
	now := time.Now()
	path := a.spendFile(now)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("record spend: %w", err)
	}
	b, err := json.Marshal(spendRecord{Key: key, Run: run, Cost: cost, At: now.UTC()})
	if err != nil {
		return err
	}
	if _, err := textio.AppendOnce(path, 0o600, b, func(old []byte) bool {
		var r spendRecord
		return json.Unmarshal(old, &r) == nil && r.Key == key
	}); err != nil {
		return fmt.Errorf("record spend: %w", err)
	}
	return nil
}

// DaySpend is what all runs of this home spent today (UTC), for the
// per-day ceiling.
func (a *Activities) DaySpend(ctx context.Context) (float64, error) {
	defer keepAlive(ctx)()
	f, err := os.Open(a.spendFile(time.Now()))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("day spend: %w", err)
	}
	defer f.Close()
	total := 0.0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r spendRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			total += r.Cost
		}
	}
	return total, sc.Err()
}
