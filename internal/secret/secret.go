// Package secret keeps horizon's tokens: the engine's, the Web UI's and
// the dashboard's, each a file of 32 random bytes in hex, mode 0600, that
// only the home's owner can read.
package secret

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// UIFile is the Temporal Web UI's token, under $HORIZON_HOME.
const UIFile = "ui.token"

// ErrNoToken says the engine's token file does not exist (yet): the engine
// has never been started with this home, or is starting right now.
var ErrNoToken = errors.New("no engine token")

// Ensure returns the token stored at path, creating it (32 random
// bytes, hex, mode 0600) when missing. A file readable by others than its
// owner is narrowed to 0600: the token is the owner's alone.
func Ensure(path string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("make token: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		tok := hex.EncodeToString(raw[:])
		_, werr := f.WriteString(tok + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			_ = os.Remove(path)
			return "", fmt.Errorf("write token %s: %w", path, werr)
		}
		return tok, nil
	case !errors.Is(err, fs.ErrExist):
		return "", fmt.Errorf("create token %s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("stat token %s: %w", path, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return "", fmt.Errorf("token %s is readable by others (%s) and cannot be narrowed: %w", path, st.Mode().Perm(), err)
		}
	}
	return Read(path)
}

// Read reads the token at path. A missing file is ErrNoToken.
func Read(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w at %s: start the engine (`horizon server`) to create it", ErrNoToken, path)
	}
	if err != nil {
		return "", fmt.Errorf("read token %s: %w", path, err)
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty: delete it and restart the engine to make a new one", path)
	}
	return tok, nil
}
