package textio

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	require.NoError(t, WriteAtomic(path, []byte("one"), 0o600))
	require.NoError(t, WriteAtomic(path, []byte("two"), 0o644))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "two", string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, left, 1, "no temporary file is left beside it")

	err = WriteAtomic(filepath.Join(dir, "missing", "x"), nil, 0o600)
	require.ErrorContains(t, err, "write "+filepath.Join(dir, "missing", "x"))
}

// sameKey is a ledger entry "key=value" that is the same entry as another
// with its key.
func sameKey(key string) func([]byte) bool {
	return func(old []byte) bool { return bytes.HasPrefix(old, []byte(key+"=")) }
}

func TestAppendOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger")
	ok, err := AppendOnce(path, 0o600, []byte("a=1"), sameKey("a"))
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = AppendOnce(path, 0o600, []byte("a=2"), sameKey("a"))
	require.NoError(t, err)
	require.False(t, ok, "the entry is there already")
	ok, err = AppendOnce(path, 0o600, []byte("b=1"), nil)
	require.NoError(t, err)
	require.True(t, ok)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "a=1\nb=1\n", string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// A torn last line (a crash mid-write) is ended before the next entry.
func TestAppendOnceAfterATornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger")
	require.NoError(t, os.WriteFile(path, []byte("a=1\nb=tor"), 0o600))
	_, err := AppendOnce(path, 0o600, []byte("c=1"), sameKey("c"))
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "a=1\nb=tor\nc=1\n", string(b))
}

// Writers racing on one entry append it once; on different entries, each
// once.
func TestAppendOnceConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger")
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("k%d", i%4)
			_, err := AppendOnce(path, 0o600, []byte(key+"=v"), sameKey(key))
			require.NoError(t, err)
		}()
	}
	wg.Wait()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.ElementsMatch(t, []string{"k0=v", "k1=v", "k2=v", "k3=v"}, lines)
}
