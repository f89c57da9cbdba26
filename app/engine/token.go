package engine

import (
	"crypto/subtle"
	"path/filepath"
	"strings"

	"github.com/horizon/horizon/internal/secret"

	"go.temporal.io/server/common/authorization"
)

// TokenFile is the embedded engine's access token, under $HORIZON_HOME.
// Whoever can read it can use the engine; it is created with mode 0600.
const TokenFile = "engine.token"

// TokenPath is the token file of a horizon home.
func TokenPath(home string) string { return filepath.Join(home, TokenFile) }

// ErrNoToken says the engine's token file does not exist (yet).
var ErrNoToken = secret.ErrNoToken

// EnsureToken returns the token at path, creating it when missing
// (secret.Ensure).
func EnsureToken(path string) (string, error) { return secret.Ensure(path) }

// ReadToken reads the token at path (secret.Read).
func ReadToken(path string) (string, error) { return secret.Read(path) }

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
