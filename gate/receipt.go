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
	"time"

	"github.com/horizon/horizon/horizon/textio"
	"github.com/horizon/horizon/horizon/vocab"
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
	// Parts are the sections of a gate made of several parts (the gate
	// script, gate.test_command, gate.lint_command), each with its own
	// verdict and evidence; nil for a gate of one script or command. Then
	// Verdict is the gate's as a whole (pass only when every part passed),
	// and Failing, Passing, OutputTail and OutputDigest are the test
	// parts' (Overall): a lint step's findings are no failing tests.
	Parts []ReceiptPart `json:"parts,omitempty"`
}

// ReceiptPart is one part's section of a receipt.
type ReceiptPart struct {
	Name         vocab.GatePart `json:"name"` // script | test | lint
	Command      string         `json:"command"`
	Verdict      Verdict        `json:"verdict"`
	ExitCode     int            `json:"exit_code"`
	DurationMS   int64          `json:"duration_ms"`
	Failing      []string       `json:"failing"`
	FailingKnown bool           `json:"failing_known"`
	OutputTail   string         `json:"output_tail"`
	OutputBytes  int64          `json:"output_bytes"`
	OutputDigest string         `json:"output_digest"` // "sha256:<hex>" of the part's captured output
	Err          string         `json:"err,omitempty"`
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
		OutputTail:   outputTail(res.Output),
		OutputBytes:  res.OutputBytes,
		OutputDigest: "sha256:" + hex.EncodeToString(sum[:]),
		Err:          res.Err,
	}
}

// NewPartsReceipt builds the receipt of a gate run in parts (RunParts):
// the whole gate's verdict (Overall), named by its first part's command,
// with the test parts' failing and passing sets and output, and one
// section per part.
func NewPartsReceipt(run, feature string, attempt int, laneCommit string, parts []PartResult) Receipt {
	r := NewReceipt(run, feature, attempt, laneCommit, Gate{}, Overall(parts))
	if len(parts) > 0 {
		r.Command = parts[0].Command()
	}
	r.Parts = make([]ReceiptPart, 0, len(parts))
	for _, p := range parts {
		failing, known := ParseFailures(p.Output)
		sum := sha256.Sum256([]byte(p.Output))
		r.Parts = append(r.Parts, ReceiptPart{
			Name:         p.Name,
			Command:      p.Command(),
			Verdict:      p.Verdict,
			ExitCode:     p.ExitCode,
			DurationMS:   p.Duration.Milliseconds(),
			Failing:      failing,
			FailingKnown: known,
			OutputTail:   outputTail(p.Output),
			OutputBytes:  p.OutputBytes,
			OutputDigest: "sha256:" + hex.EncodeToString(sum[:]),
			Err:          p.Err,
		})
	}
	return r
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

// outputTail is the end of a gate's output a receipt keeps.
func outputTail(out string) string {
	kept, _ := textio.Tail(out, ReceiptTailBytes)
	return kept
}

func newReceiptID(now time.Time) string {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:]) // crypto/rand.Read never fails on supported platforms
	return fmt.Sprintf("r-%012x%s", now.UnixMilli()&0xffffffffffff, hex.EncodeToString(rnd[:]))
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
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("append receipt %s: %w", r.ID, err)
	}
	id := []byte(r.ID)
	if _, err := textio.AppendOnce(path, 0o644, line, func(old []byte) bool {
		if !bytes.Contains(old, id) {
			return false
		}
		var head struct {
			ID string `json:"id"`
		}
		return json.Unmarshal(old, &head) == nil && head.ID == r.ID
	}); err != nil {
		return fmt.Errorf("append receipt %s: %w", r.ID, err)
	}
	return nil
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
