package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/horizon/textio"
)

// SavePlan writes the run's plan to runs/<run>/plan.json and appends its new
// decisions to runs/<run>/decisions.jsonl. Decisions are keyed by Seq: one
// already in the file is not appended again, so a retried activity (or a
// workflow that passes every decision each time) writes each once.
func (a *Activities) SavePlan(ctx context.Context, in PlanArtifacts) (PlanArtifactsOutput, error) {
	defer keepAlive(ctx)()
	if in.RunID == "" {
		return PlanArtifactsOutput{}, badInput("save plan: no run ID")
	}
	for i, d := range in.Decisions {
		if d.Seq < 1 {
			return PlanArtifactsOutput{}, badInput("save plan: decision %d (%q) has seq %d; seqs start at 1", i+1, d.What, d.Seq)
		}
		if err := d.Validate(); err != nil {
			return PlanArtifactsOutput{}, badInput("save plan: decision %d (seq %d): %v", i+1, d.Seq, err)
		}
	}
	dir := a.runDir(in.RunID)
	out := PlanArtifactsOutput{PlanPath: filepath.Join(dir, "plan.json"), DecisionsPath: filepath.Join(dir, "decisions.jsonl")}
	plan, err := json.MarshalIndent(in.Plan, "", "  ")
	if err != nil {
		return out, fmt.Errorf("save plan %s: %w", in.RunID, err)
	}
	if err := writeArtifact(out.PlanPath, append(plan, '\n')); err != nil {
		return out, fmt.Errorf("save plan: %w", err)
	}
	n, err := appendDecisions(out.DecisionsPath, in.Decisions)
	if err != nil {
		return out, fmt.Errorf("save plan %s: %w", in.RunID, err)
	}
	out.Decisions = n
	return out, nil
}

// appendDecisions appends the decisions whose Seq is not in the file yet,
// under an exclusive lock, and returns how many the file holds after. A torn
// last line (a crash mid-write) is cut off before appending, so it never
// ends up in the middle of the file.
func appendDecisions(path string, ds []horizon.Decision) (int, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, fmt.Errorf("decisions %s: %w", path, err)
	}
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("decisions: %w", err)
	}
	defer f.Close()
	if err := textio.Lock(f); err != nil {
		return 0, fmt.Errorf("decisions: lock %s: %w", path, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return 0, fmt.Errorf("decisions: read %s: %w", path, err)
	}
	have, keep, err := parseDecisions(path, data)
	if err != nil {
		return 0, err
	}
	if keep < len(data) {
		if err := f.Truncate(int64(keep)); err != nil {
			return 0, fmt.Errorf("decisions: cut torn line of %s: %w", path, err)
		}
	}
	seen := make(map[int]bool, len(have)+len(ds))
	for _, d := range have {
		seen[d.Seq] = true
	}
	var buf bytes.Buffer
	if keep > 0 && data[keep-1] != '\n' {
		buf.WriteByte('\n') // a whole last line whose newline was lost
	}
	n := len(have)
	for _, d := range ds {
		if seen[d.Seq] {
			continue
		}
		seen[d.Seq] = true
		line, err := json.Marshal(d)
		if err != nil {
			return 0, fmt.Errorf("decisions: decision %d: %w", d.Seq, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
		n++
	}
	if buf.Len() == 0 && keep == len(data) {
		return n, nil // nothing new
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return 0, fmt.Errorf("decisions: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("decisions: sync %s: %w", path, err)
	}
	if created {
		syncDir(filepath.Dir(path))
	}
	return n, nil
}

// ReadDecisions returns the decisions in a decisions.jsonl, in file order. A
// missing file holds none. An unfinished last line (a write torn by a crash)
// is skipped; any other line that is not a valid decision is an error naming
// the file and line, since a decisions log that silently loses entries
// cannot be reviewed.
func ReadDecisions(path string) ([]horizon.Decision, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read decisions: %w", err)
	}
	ds, _, err := parseDecisions(path, data)
	return ds, err
}

// parseDecisions parses a decisions.jsonl and returns its decisions and the
// length of the part that holds them: all of data, or all but a torn last
// line (one without a newline that does not parse).
func parseDecisions(path string, data []byte) ([]horizon.Decision, int, error) {
	var out []horizon.Decision
	for n, off := 1, 0; off < len(data); n++ {
		end := bytes.IndexByte(data[off:], '\n')
		last := end < 0
		if last {
			end = len(data)
		} else {
			end += off
		}
		line := bytes.TrimSpace(data[off:end])
		if len(line) > 0 {
			d, err := parseDecision(line)
			if err != nil && last {
				return out, off, nil // torn by a crash mid-write
			}
			if err != nil {
				return nil, 0, fmt.Errorf("read decisions %s: line %d: %w", path, n, err)
			}
			out = append(out, d)
		}
		off = end + 1
	}
	return out, len(data), nil
}

func parseDecision(line []byte) (horizon.Decision, error) {
	var d horizon.Decision
	if err := json.Unmarshal(line, &d); err != nil {
		return d, err
	}
	if d.Seq < 1 {
		return d, fmt.Errorf("decision has seq %d; seqs start at 1", d.Seq)
	}
	return d, d.Validate()
}

// syncDir makes a new file's directory entry durable; some filesystems
// refuse to fsync a directory, which is ignored.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
