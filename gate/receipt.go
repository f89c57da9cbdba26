package gate

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ReceiptTailBytes is how much of the end of the output a receipt keeps.
const ReceiptTailBytes = 4 << 10

// Receipt is the durable record of one gate run: what was judged (run,
// feature, attempt, lane commit, command), the verdict, and the evidence
// (failing-assertion set, output tail, digest of the captured output).
// Receipts are appended to runs/<run>/receipts.jsonl.
type Receipt struct {
	ID           string    `json:"id"`
	At           time.Time `json:"at"`
	Run          string    `json:"run"`
	Feature      string    `json:"feature"`
	Attempt      int       `json:"attempt"`
	LaneCommit   string    `json:"lane_commit"`
	Command      string    `json:"command"`
	Verdict      Verdict   `json:"verdict"`
	ExitCode     int       `json:"exit_code"`
	DurationMS   int64     `json:"duration_ms"`
	Failing      []string  `json:"failing"`
	FailingKnown bool      `json:"failing_known"`
	// Passing are the tests the output reports as passed (ParsePassing);
	// PassingKnown is false when it names none, and then a test's absence
	// cannot be told from its passing by the output alone.
	Passing      []string `json:"passing,omitempty"`
	PassingKnown bool     `json:"passing_known"`
	OutputTail   string   `json:"output_tail"`
	OutputBytes  int64    `json:"output_bytes"`  // bytes the gate produced, before capping
	OutputDigest string   `json:"output_digest"` // "sha256:<hex>" of Result.Output (the captured, capped output)
	Err          string   `json:"err,omitempty"`
}

// NewReceipt builds the receipt of res, the run of gate g on lane commit
// laneCommit for the given run, feature and attempt. Its ID is fresh and
// time-ordered ("r-" + 12 hex digits of Unix milliseconds + 16 random hex
// digits); a caller that may repeat the same append after a crash (a retried
// activity) should set ID to StableReceiptID(...) so AppendReceipt can
// recognise the repeat.
func NewReceipt(run, feature string, attempt int, laneCommit string, g Gate, res Result) Receipt {
	failing, known := ParseFailures(res.Output)
	passing, passKnown := ParsePassing(res.Output)
	sum := sha256.Sum256([]byte(res.Output))
	return Receipt{
		ID:           newReceiptID(time.Now()),
		At:           time.Now().UTC(),
		Run:          run,
		Feature:      feature,
		Attempt:      attempt,
		LaneCommit:   laneCommit,
		Command:      receiptCommand(g),
		Verdict:      res.Verdict,
		ExitCode:     res.ExitCode,
		DurationMS:   res.Duration.Milliseconds(),
		Failing:      failing,
		FailingKnown: known,
		Passing:      passing,
		PassingKnown: passKnown,
		OutputTail:   tail(res.Output, ReceiptTailBytes),
		OutputBytes:  res.OutputBytes,
		OutputDigest: "sha256:" + hex.EncodeToString(sum[:]),
		Err:          res.Err,
	}
}

// StableReceiptID derives a receipt ID from parts (say run, feature and
// attempt), so the same gate run recorded twice gets the same ID.
func StableReceiptID(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "r-" + hex.EncodeToString(sum[:14])
}

// receiptCommand names the gate as the repository knows it: the script's
// relative path rather than its absolute path in one lane.
func receiptCommand(g Gate) string {
	if g.Path != "" && g.Source != "" {
		return g.Source
	}
	return g.String()
}

func newReceiptID(now time.Time) string {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:]) // crypto/rand.Read never fails on supported platforms
	return fmt.Sprintf("r-%012x%s", now.UnixMilli()&0xffffffffffff, hex.EncodeToString(rnd[:]))
}

// tail returns the last n bytes of s or fewer, starting on a rune boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	for cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut++
	}
	return s[cut:]
}

// AppendReceipt appends r as one JSON line to the file at path (created with
// its directory if missing) and fsyncs it. It is idempotent: if a receipt with
// r's ID is already in the file nothing is written. An exclusive flock makes
// the check and the append atomic against other horizon processes. A line
// torn by an earlier crash is closed with a newline first, so it cannot glue
// itself to this receipt.
func AppendReceipt(path string, r Receipt) error {
	if r.ID == "" {
		return errors.New("append receipt: empty ID")
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("append receipt %s: %w", r.ID, err)
	}
	line = append(line, '\n')

	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("append receipt %s: %w", r.ID, err)
	}
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("append receipt %s: %w", r.ID, err)
	}
	defer f.Close()
	if err := flock(f); err != nil {
		return fmt.Errorf("append receipt %s: lock %s: %w", r.ID, path, err)
	}

	found, endsClean, err := scanForID(f, r.ID)
	if err != nil {
		return fmt.Errorf("append receipt %s: read %s: %w", r.ID, path, err)
	}
	if found {
		return nil
	}
	if !endsClean {
		line = append([]byte{'\n'}, line...)
	}
	if _, err := f.Write(line); err != nil {
		return fmt.Errorf("append receipt %s: write %s: %w", r.ID, path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("append receipt %s: sync %s: %w", r.ID, path, err)
	}
	if created {
		syncDir(dir)
	}
	return nil
}

// scanForID reports whether a receipt with id is in f, and whether f is empty
// or ends with a newline.
func scanForID(f *os.File, id string) (found, endsClean bool, err error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, false, err
	}
	br := bufio.NewReader(f)
	endsClean = true
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			endsClean = line[len(line)-1] == '\n'
			if bytes.Contains(line, []byte(id)) {
				var head struct {
					ID string `json:"id"`
				}
				if json.Unmarshal(line, &head) == nil && head.ID == id {
					return true, endsClean, nil
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return false, endsClean, nil
		}
		if err != nil {
			return false, false, err
		}
	}
}

// ReadReceipts returns the receipts in the file at path, in file order. A
// missing file holds no receipts. Lines that are not valid receipts (a write
// torn by a crash) are skipped.
func ReadReceipts(path string) ([]Receipt, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return []Receipt{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read receipts: %w", err)
	}
	defer f.Close()
	out := []Receipt{}
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var r Receipt
			if json.Unmarshal(t, &r) == nil && r.ID != "" {
				out = append(out, r)
			}
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read receipts %s: %w", path, err)
		}
	}
}

func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// syncDir makes a newly created file's directory entry durable; failures are
// ignored because some filesystems refuse to fsync directories.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
