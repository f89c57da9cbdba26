package consult

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/horizon/textio"
)

// Registration says which attempt a lane's worker session works for.
type Registration struct {
	RunID   string `json:"run_id"`
	Feature string `json:"feature"`
	Attempt int    `json:"attempt"`
	Lane    string `json:"lane"`
	// Ledger is the attempt's consult ledger (LedgerPath).
	Ledger string `json:"ledger"`
	// Spend is what the spend authority allows the attempt's consults
	// (nil: a registration from before it, no check).
	Spend *SpendCheck `json:"spend,omitempty"`
}

// SpendCheck is the spend authority's word on an attempt's consults. A
// consult runs inside the worker's session (it cannot queue behind the
// session that waits on its answer), so it is weighed here instead: Off
// says why consults are off for the attempt (spend was near a ceiling when
// the worker's session was granted); DayCeiling and ThrottleAt are
// weighed again against the day's spend at each consult.
type SpendCheck struct {
	Off        string  `json:"off,omitempty"`
	DayCeiling float64 `json:"day_ceiling,omitempty"`
	ThrottleAt float64 `json:"throttle_at,omitempty"`
}

// declined says why a consult may not run now ("" when it may), given
// today's spend so far.
func (s *SpendCheck) declined(daySpent float64) string {
	switch {
	case s == nil:
		return ""
	case s.Off != "":
		return s.Off
	case s.DayCeiling > 0 && daySpent >= throttleAt(s.ThrottleAt)*s.DayCeiling:
		return fmt.Sprintf("today's spend $%.4f is at or past %g of the day ceiling $%.4f (spend.day_ceiling): consults use a metered model and are off until it is raised",
			daySpent, throttleAt(s.ThrottleAt), s.DayCeiling)
	}
	return ""
}

// throttleAt is spend.throttle_at as the ladder reads it.
func throttleAt(f float64) float64 {
	switch {
	case f <= 0:
		return 0.8
	case f > 1:
		return 1
	}
	return f
}

// registrationPath is where a lane's registration lives: under home, never
// in the lane (nothing may leak into a commit). The lane is named by its
// real path, as the session activity and OpenCode (which starts the tool's
// server there) may spell it differently through a symlink.
func registrationPath(home, lane string) string {
	lane = filepath.Clean(lane)
	if real, err := filepath.EvalSymlinks(lane); err == nil {
		lane = real
	}
	sum := sha256.Sum256([]byte(lane))
	return filepath.Join(home, "consult", hex.EncodeToString(sum[:12])+".json")
}

// LedgerPath is the consult ledger of one attempt, next to its transcripts.
func LedgerPath(runDir, feature string, attempt int) string {
	return filepath.Join(runDir, "consults", fmt.Sprintf("%s-attempt-%d.jsonl", feature, attempt))
}

// Register records r for its lane, replacing an earlier attempt's.
func Register(home string, r Registration) error {
	if home == "" || r.Lane == "" || r.Ledger == "" || r.RunID == "" {
		return fmt.Errorf("register consult lane: home, lane, ledger and run are required (got %+v)", r)
	}
	path := registrationPath(home, r.Lane)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("register consult lane: %w", err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("register consult lane: %w", err)
	}
	if err := textio.WriteAtomic(path, b, 0o600); err != nil {
		return fmt.Errorf("register consult lane: %w", err)
	}
	return nil
}

// Lookup reads the registration of lane; ErrNotRegistered when there is
// none.
func Lookup(home, lane string) (Registration, error) {
	b, err := os.ReadFile(registrationPath(home, lane))
	if errors.Is(err, fs.ErrNotExist) {
		return Registration{}, fmt.Errorf("%w: %s", ErrNotRegistered, lane)
	}
	if err != nil {
		return Registration{}, fmt.Errorf("look up consult lane: %w", err)
	}
	var r Registration
	if err := json.Unmarshal(b, &r); err != nil {
		return Registration{}, fmt.Errorf("look up consult lane %s: %w", lane, err)
	}
	return r, nil
}

// Append adds c to the ledger at path, once per c.ID, and syncs it: when
// Append returns, a crash cannot lose the consult.
func Append(path string, c horizon.Consult) error {
	if c.ID == "" {
		return errors.New("append consult: no ID")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("append consult: %w", err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("append consult: %w", err)
	}
	if _, err := textio.AppendOnce(path, 0o600, b, func(line []byte) bool {
		var old horizon.Consult
		return json.Unmarshal(line, &old) == nil && old.ID == c.ID
	}); err != nil {
		return fmt.Errorf("append consult: %w", err)
	}
	return nil
}

// Read returns the consults of the ledger at path in the order they were
// made; none when it does not exist. A torn last line (a crash mid-write,
// before the sync) is skipped.
func Read(path string) ([]horizon.Consult, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read consults: %w", err)
	}
	defer f.Close()
	var out []horizon.Consult
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var c horizon.Consult
		if json.Unmarshal(sc.Bytes(), &c) != nil || c.ID == "" || seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read consults %s: %w", path, err)
	}
	return out, nil
}
