package engine

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.temporal.io/server/common/authorization"
)

// TokenFile is the embedded engine's access token, under $HORIZON_HOME.
// Whoever can read it can use the engine; it is created with mode 0600.
const TokenFile = "engine.token"

// TokenPath is the token file of a horizon home.
func TokenPath(home string) string { return filepath.Join(home, TokenFile) }

// ErrNoToken says the engine's token file does not exist (yet): the engine
// has never been started with this home, or is starting right now.
var ErrNoToken = errors.New("no engine token")

// EnsureToken returns the token stored at path, creating it (32 random
// bytes, hex, mode 0600) when missing. A file readable by others than its
// owner is narrowed to 0600: the token is the owner's alone.
func EnsureToken(path string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("engine: create %s: %w", filepath.Dir(path), err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("engine: make token: %w", err)
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
			return "", fmt.Errorf("engine: write token %s: %w", path, werr)
		}
		return tok, nil
	case !errors.Is(err, fs.ErrExist):
		return "", fmt.Errorf("engine: create token %s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("engine: stat token %s: %w", path, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return "", fmt.Errorf("engine: token %s is readable by others (%s) and cannot be narrowed: %w", path, st.Mode().Perm(), err)
		}
	}
	return ReadToken(path)
}

// ReadToken reads the token at path. A missing file is ErrNoToken.
func ReadToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("engine: %w at %s: start the engine (`horizon server`) to create it", ErrNoToken, path)
	}
	if err != nil {
		return "", fmt.Errorf("engine: read token %s: %w", path, err)
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", fmt.Errorf("engine: token file %s is empty: delete it and restart the engine to make a new one", path)
	}
	return tok, nil
}

// tokenClaims grants the whole engine to a caller presenting the token
// ("authorization: Bearer <token>", what the SDK's API-key credentials
// send) and nothing to anyone else, whom the default authorizer then
// refuses with PermissionDenied. The server's own services do not come
// through here: they use the internal frontend, over mutual TLS.
type tokenClaims struct{ token []byte }

var _ authorization.ClaimMapper = tokenClaims{}

func (m tokenClaims) GetClaims(ai *authorization.AuthInfo) (*authorization.Claims, error) {
	got, ok := strings.CutPrefix(ai.AuthToken, "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), m.token) != 1 {
		return &authorization.Claims{}, nil
	}
	return &authorization.Claims{Subject: "horizon", System: authorization.RoleAdmin}, nil
}
