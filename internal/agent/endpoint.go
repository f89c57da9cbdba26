package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/horizon/horizon/horizon/textio"
)

// EndpointFile is the name, in the daemon's OpenCode directory, of the
// file that says where its running `opencode serve` answers.
const EndpointFile = "endpoint.json"

// Endpoint is where a daemon's running OpenCode answers, and how it was
// started. The daemon writes it (0600: it holds the server's password)
// once the server is up and removes it when the server stops, so that
// the CLI of the same home asks that server which models it reaches,
// in milliseconds, instead of starting OpenCode once more for it.
type Endpoint struct {
	URL      string `json:"url"`
	Password string `json:"password"`
	PID      int    `json:"pid"`
	// Bin and Config are the binary and the extra config file
	// (agent.opencode_config) it was started with: a CLI configured
	// otherwise asks its own OpenCode.
	Bin    string `json:"bin"`
	Config string `json:"config,omitempty"`
	// Error, alone, says why the daemon could not start OpenCode: a CLI
	// waiting for the endpoint stops waiting and asks its own OpenCode.
	Error string `json:"error,omitempty"`
}

// Endpoint says where s answers (Bin and Config are the caller's).
func (s *Server) Endpoint() Endpoint {
	return Endpoint{URL: s.url, Password: s.password, PID: s.pgid}
}

// WriteEndpoint writes e to path, readable by its owner only.
func WriteEndpoint(path string, e Endpoint) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("write opencode endpoint: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write opencode endpoint: %w", err)
	}
	if err := textio.WriteAtomic(path, b, 0o600); err != nil {
		return fmt.Errorf("write opencode endpoint: %w", err)
	}
	return nil
}

// ErrNoEndpoint: no daemon's OpenCode answers for this home.
var ErrNoEndpoint = errors.New("no running opencode server for this home")

// ConnectEndpoint reads the endpoint at path and connects to it when its
// process still runs and it was started with bin and config; otherwise
// ErrNoEndpoint. It does not call the server.
func ConnectEndpoint(path, bin, config string, log zerolog.Logger) (*Server, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, ErrNoEndpoint
	}
	var e Endpoint
	if err := json.Unmarshal(b, &e); err != nil || e.URL == "" || e.PID <= 0 {
		return nil, ErrNoEndpoint
	}
	if syscall.Kill(e.PID, 0) != nil || !sameFile(e.Bin, bin) || !sameFile(e.Config, config) {
		return nil, ErrNoEndpoint
	}
	return Connect(e.URL, e.Password, log), nil
}

// ModelsFromEndpoint asks the daemon's running OpenCode (ConnectEndpoint)
// which models it reaches from dir.
func ModelsFromEndpoint(ctx context.Context, path, bin, config, dir string) ([]string, error) {
	s, err := ConnectEndpoint(path, bin, config, zerolog.Nop())
	if err != nil {
		return nil, err
	}
	defer s.client.CloseIdleConnections()
	return s.Models(ctx, dir)
}

// sameFile reports whether a and b name the same file ("" only matches "").
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	if a == b {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
