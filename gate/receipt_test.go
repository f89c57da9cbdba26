package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestNewReceipt(t *testing.T) {
	out, err := os.ReadFile("testdata/gotest/two_plain.txt")
	require.NoError(t, err)
	res := Result{Verdict: Fail, ExitCode: 1, Duration: 1500 * time.Millisecond, Output: string(out), OutputBytes: int64(len(out))}

	script := Gate{Path: "/lanes/r1/f1/.horizon/verify.sh", Command: []string{"/lanes/r1/f1/.horizon/verify.sh"}, Source: ".horizon/verify.sh"}
	r := NewReceipt("run-1", "f1", 2, "abc123", script, res)
	require.Regexp(t, regexp.MustCompile(`^r-[0-9a-f]{28}$`), r.ID)
	require.Equal(t, "run-1", r.Run)
	require.Equal(t, "f1", r.Feature)
	require.Equal(t, 2, r.Attempt)
	require.Equal(t, "abc123", r.LaneCommit)
	require.Equal(t, ".horizon/verify.sh", r.Command, "a script is named by its path in the repository")
	require.Equal(t, Fail, r.Verdict)
	require.Equal(t, 1, r.ExitCode)
	require.Equal(t, int64(1500), r.DurationMS)
	require.True(t, r.FailingKnown)
	require.Contains(t, r.Failing, "example.com/shop/price.TestDiscount")
	require.Len(t, r.Failing, 5)
	require.Equal(t, string(out), r.OutputTail, "short output is kept whole")
	sum := sha256.Sum256(out)
	require.Equal(t, "sha256:"+hex.EncodeToString(sum[:]), r.OutputDigest)
	require.False(t, r.At.IsZero())

	detected := Gate{Command: []string{"go", "test", "./..."}, Source: "detected: go test ./..."}
	r2 := NewReceipt("run-1", "f1", 2, "abc123", detected, res)
	require.Equal(t, "go test ./...", r2.Command)
	require.NotEqual(t, r.ID, r2.ID)
}

func TestNewReceiptTail(t *testing.T) {
	long := strings.Repeat("€", 3000) + "END" // 9003 bytes; the cut lands inside a rune
	r := NewReceipt("r", "f", 1, "c", Gate{Command: []string{"x"}}, Result{Verdict: Pass, Output: long})
	require.LessOrEqual(t, len(r.OutputTail), ReceiptTailBytes)
	require.Greater(t, len(r.OutputTail), ReceiptTailBytes-4)
	require.True(t, utf8.ValidString(r.OutputTail))
	require.True(t, strings.HasSuffix(r.OutputTail, "€END"))
	require.False(t, r.FailingKnown)
	require.Empty(t, r.Failing)
}

func TestStableReceiptID(t *testing.T) {
	a := StableReceiptID("run", "f1", "3")
	require.Equal(t, a, StableReceiptID("run", "f1", "3"))
	require.NotEqual(t, a, StableReceiptID("run", "f13", ""), "parts are separated")
	require.Regexp(t, regexp.MustCompile(`^r-[0-9a-f]{28}$`), a)
}

func receiptFor(id string, attempt int) Receipt {
	return Receipt{ID: id, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Run: "run-1", Feature: "f1", Attempt: attempt,
		LaneCommit: "abc", Command: "go test ./...", Verdict: Fail, ExitCode: 1, DurationMS: 12,
		Failing: []string{"m.TestA"}, FailingKnown: true, OutputTail: "--- FAIL: TestA\n", OutputDigest: "sha256:00"}
}

func TestAppendReceipt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs", "run-1", "receipts.jsonl")

	got, err := ReadReceipts(path)
	require.NoError(t, err)
	require.Empty(t, got, "a missing file holds no receipts")

	a, b := receiptFor("r-a", 1), receiptFor("r-b", 2)
	require.NoError(t, AppendReceipt(path, a))
	require.NoError(t, AppendReceipt(path, b))
	require.NoError(t, AppendReceipt(path, a), "appending the same ID again is a no-op")
	b2 := b
	b2.Verdict = Pass
	require.NoError(t, AppendReceipt(path, b2), "the first receipt of an ID wins")

	got, err = ReadReceipts(path)
	require.NoError(t, err)
	require.Equal(t, []Receipt{a, b}, got)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(string(data), "\n"), "one line per receipt")

	require.ErrorContains(t, AppendReceipt(path, Receipt{}), "empty ID")
}

func TestAppendReceiptAfterTornWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	a := receiptFor("r-a", 1)
	require.NoError(t, AppendReceipt(path, a))
	// A crash in the middle of a write leaves half a line.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"id":"r-torn","run":"ru`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	b := receiptFor("r-b", 2)
	require.NoError(t, AppendReceipt(path, b))
	got, err := ReadReceipts(path)
	require.NoError(t, err)
	require.Equal(t, []Receipt{a, b}, got)
}

func TestAppendReceiptConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		wg.Add(2)
		go func() { defer wg.Done(); errs <- AppendReceipt(path, receiptFor("r-same", 1)) }()
		go func() { defer wg.Done(); errs <- AppendReceipt(path, receiptFor(fmt.Sprintf("r-%02d", i), i)) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, err := ReadReceipts(path)
	require.NoError(t, err)
	require.Len(t, got, 21)
	ids := map[string]int{}
	for _, r := range got {
		ids[r.ID]++
	}
	require.Equal(t, 1, ids["r-same"])
	require.Len(t, ids, 21)
}
