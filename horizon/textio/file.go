package textio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// WriteAtomic replaces path with data: a temporary file beside it, synced,
// then renamed over it, so a reader or a crash sees the old content or the
// new, never a part. The directory must exist.
func WriteAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// AppendOnce appends line (a newline is added) to the ledger at path,
// creating it with perm, unless a line already there is the same entry
// (same says so; nil: never). It holds an exclusive lock on the file from
// the read to the write, so two writers cannot both append one entry, and
// syncs before it returns, so a crash after cannot lose it. A torn last
// line (a crash mid-write) is ended before line is appended, so the two
// never run together. appended is false when the entry was there.
func AppendOnce(path string, perm fs.FileMode, line []byte, same func(old []byte) bool) (appended bool, err error) {
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, perm)
	if err != nil {
		return false, fmt.Errorf("append to %s: %w", path, err)
	}
	defer f.Close()
	if err := Lock(f); err != nil {
		return false, fmt.Errorf("append to %s: lock: %w", path, err)
	}
	found, endsClean, err := scan(f, same)
	if err != nil {
		return false, fmt.Errorf("append to %s: read: %w", path, err)
	}
	if found {
		return false, nil
	}
	out := make([]byte, 0, len(line)+2)
	if !endsClean {
		out = append(out, '\n')
	}
	out = append(append(out, line...), '\n')
	if _, err := f.Write(out); err != nil {
		return false, fmt.Errorf("append to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return false, fmt.Errorf("append to %s: sync: %w", path, err)
	}
	if created {
		syncDir(filepath.Dir(path))
	}
	return true, nil
}

// scan reads f from its start: whether a line is the same entry, and
// whether f is empty or ends with a newline.
func scan(f *os.File, same func([]byte) bool) (found, endsClean bool, err error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, false, err
	}
	br := bufio.NewReader(f)
	endsClean = true
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			endsClean = line[len(line)-1] == '\n'
			if same != nil && same(bytes.TrimSuffix(line, []byte{'\n'})) {
				return true, endsClean, nil
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

// Lock takes an exclusive flock on f, waiting for it; the lock goes with
// the file's close.
func Lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// syncDir makes a new file's directory entry durable; some filesystems
// refuse to sync a directory, and that is no error of the append.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
