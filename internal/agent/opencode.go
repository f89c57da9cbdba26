package agent

// The OpenCode backend: horizon runs one `opencode serve` per daemon and
// drives sessions through its HTTP API (spec: shared/reference/
// opencode-1.18.33-openapi.json). What this file relies on, all checked
// against opencode 1.18.33:
//
//   - `opencode serve --hostname 127.0.0.1 --port N` with
//     OPENCODE_SERVER_PASSWORD set answers every request with 401 unless it
//     carries HTTP basic auth, user "opencode" (OPENCODE_SERVER_USERNAME,
//     which horizon pins) and that password.
//   - GET /path answers as soon as the server is up (GET /global/health did
//     not return here); 127.0.0.1, never localhost, which may resolve to ::1.
//   - Every instance-scoped endpoint takes the query parameter directory:
//     sessions created with ?directory=<lane> run their tools with the lane as
//     working directory, and permission/question lists are per directory.
//   - OPENCODE_CONFIG_DIR adds <dir>/agent/*.md (and <dir>/opencode.json);
//     OPENCODE_CONFIG adds a config file; OPENCODE_DB moves the session store;
//     OPENCODE_DISABLE_AUTOUPDATE=1 and OPENCODE_DISABLE_MODELS_FETCH=1 keep
//     the server off the network.
//   - GET /config/providers lists the connected providers with their models
//     (keys of models are the model IDs a prompt names).

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/horizon/horizon/internal/child"
)

// ServerOptions configure StartServer.
type ServerOptions struct {
	Bin         string   // opencode binary path
	ConfigDir   string   // OPENCODE_CONFIG_DIR; horizon's agent files are written here
	DBPath      string   // OPENCODE_DB: horizon's own session store, survives restarts
	ExtraConfig string   // optional path → OPENCODE_CONFIG (providers, models)
	Dir         string   // the server's working directory ("" → an empty temporary one, removed on Close)
	EnvAllow    []string // globs of variables agents' commands may see despite gate.Secret (agent.env_allow)
	Env         []string // base environment (nil: os.Environ())
	LogPath     string   // opencode's stdout and stderr are appended here ("" → kept in memory for errors)
	PIDFile     string   // "pid pgid" lines are appended here so a restarted daemon can reap orphans
	Logger      zerolog.Logger

	// Agents is what the agent files written to ConfigDir carry beyond
	// horizon's defaults (the advisor's settings).
	Agents Subagents

	StartTimeout time.Duration // how long to wait for the server to answer (default 3m)
	StopTimeout  time.Duration // SIGTERM → SIGKILL grace in Close (default 5s)
}

// Server is a running `opencode serve` that horizon started (StartServer),
// or a client of one started elsewhere (Connect).
type Server struct {
	url      string
	password string
	client   *http.Client // ordinary calls; each call has its own deadline
	stream   *http.Client // the /event stream: no timeout
	log      zerolog.Logger

	// Tuning, exposed to tests in this package.
	pollInterval  time.Duration // status poll when no event arrives
	progressEvery time.Duration // heartbeat cadence of onProgress
	idleGrace     time.Duration // idle without a reply for this long → error
	confirmIdle   time.Duration // an idle session whose last step asked for tools must stay so this long
	wakeGap       time.Duration // least time between two polls (streamed text wakes us per token)

	// The process, when started here.
	cmd       *exec.Cmd
	pgid      int
	pidFile   string
	pidLine   string
	logPath   string
	logFile   *os.File
	memLog    *tailBuffer
	exited    chan struct{} // closed when the process has exited (nil: not ours)
	waitErr   error
	stopWait  time.Duration
	closeOnce sync.Once
	closeErr  error
	tmpDir    string // the working directory made for it, removed on Close
}

const (
	serverUser   = "opencode"
	defaultStart = 3 * time.Minute // a busy 2-core machine starting several servers at once needs more than a minute
	defaultStop  = 5 * time.Second
	callTimeout  = 30 * time.Second
	logTailBytes = 4096
)

// Connect returns a client of an opencode server that is already running at
// baseURL (e.g. "http://127.0.0.1:4096") with the given server password
// ("" when it has none). Close on it does nothing.
func Connect(baseURL, password string, log zerolog.Logger) *Server {
	// A transport of its own, so Close can drop its idle connections
	// without touching anyone else's.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	return &Server{
		url:           strings.TrimRight(baseURL, "/"),
		password:      password,
		client:        &http.Client{Transport: tr},
		stream:        &http.Client{Transport: tr},
		log:           log,
		pollInterval:  500 * time.Millisecond,
		progressEvery: 3 * time.Second,
		idleGrace:     30 * time.Second,
		confirmIdle:   time.Second,
		wakeGap:       100 * time.Millisecond,
	}
}

// URL is the server's base URL.
func (s *Server) URL() string { return s.url }

// PID is the opencode process ID (also its process group ID), or 0 for a
// server this package did not start.
func (s *Server) PID() int { return s.pgid }

// Exited is closed when a started server's process has exited; nil for
// Connect.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// StartServer starts `opencode serve` on a free loopback port, in its own
// process group that dies with this process (Pdeathsig), and waits until it
// answers. With ConfigDir set, horizon's agent files are written there first.
func StartServer(ctx context.Context, o ServerOptions) (*Server, error) {
	if o.Bin == "" {
		return nil, errors.New("start opencode: no binary given")
	}
	bin, err := exec.LookPath(o.Bin)
	if err != nil {
		return nil, fmt.Errorf("start opencode: %w", err)
	}
	if o.ConfigDir != "" {
		if err := WriteAgentFilesWith(o.ConfigDir, o.Agents); err != nil {
			return nil, fmt.Errorf("start opencode: %w", err)
		}
		if err := SeedConfigDeps(o.ConfigDir); err != nil {
			return nil, fmt.Errorf("start opencode: %w", err)
		}
		// OpenCode keeps the provider keys; the commands it runs do not
		// (shellenv.go).
		if err := writeShellEnvPlugin(o.ConfigDir, o.EnvAllow); err != nil {
			return nil, fmt.Errorf("start opencode: %w", err)
		}
	}
	if o.DBPath != "" {
		if err := os.MkdirAll(filepath.Dir(o.DBPath), 0o755); err != nil {
			return nil, fmt.Errorf("start opencode: %w", err)
		}
	}
	// OpenCode bootstraps a project for its working directory as soon as
	// a request names no directory: it walks the tree, snapshots it with
	// git and watches it. Inherited from the daemon, that directory is
	// wherever the user stood (a home, a large checkout): a core stayed busy
	// for as long as the server lived. Sessions always name their lane, so
	// the server itself stands in an empty directory.
	tmpDir := ""
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "horizon-opencode-")
		if err != nil {
			return nil, fmt.Errorf("start opencode: %w", err)
		}
		o.Dir, tmpDir = d, d
	} else if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("start opencode: %w", err)
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = defaultStart
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = defaultStop
	}
	// The port is picked here and handed over, so a race with another
	// process for it is possible: the server then exits at once with
	// EADDRINUSE, and another port is tried.
	var lastErr error
	for try := 0; try < 3; try++ {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("start opencode: %w", err)
		}
		s, err := launch(ctx, bin, o, port)
		if err == nil {
			s.tmpDir = tmpDir
			return s, nil
		}
		lastErr = err
		var ee *earlyExitError
		if !errors.As(err, &ee) || !strings.Contains(ee.tail, "EADDRINUSE") {
			break
		}
	}
	if tmpDir != "" {
		_ = os.RemoveAll(tmpDir)
	}
	return nil, lastErr
}

// earlyExitError: the server exited before it answered.
type earlyExitError struct {
	err  error
	tail string
}

func (e *earlyExitError) Error() string {
	return fmt.Sprintf("opencode serve exited before it answered (%v); last output:\n%s", e.err, e.tail)
}

func launch(ctx context.Context, bin string, o ServerOptions, port int) (*Server, error) {
	password, err := randomHex(24)
	if err != nil {
		return nil, fmt.Errorf("start opencode: %w", err)
	}
	s := Connect(fmt.Sprintf("http://127.0.0.1:%d", port), password, o.Logger.With().Str("Component", "opencode").Logger())
	s.exited = make(chan struct{})
	s.pidFile = o.PIDFile
	s.logPath = o.LogPath
	s.stopWait = o.StopTimeout

	cmd := exec.Command(bin, "serve", "--hostname", "127.0.0.1", "--port", strconv.Itoa(port))
	// The server's own URL, for what it starts (horizon's MCP server calls
	// back into its API; the password is OPENCODE_SERVER_PASSWORD). Last,
	// so it wins over an inherited value.
	cmd.Env = append(serverEnv(o, password), EnvServerURL+"="+s.url)
	cmd.Dir = o.Dir
	if o.LogPath != "" {
		if err := os.MkdirAll(filepath.Dir(o.LogPath), 0o755); err != nil {
			return nil, fmt.Errorf("start opencode: %w", err)
		}
		f, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("start opencode: %w", err)
		}
		s.logFile = f
		cmd.Stdout, cmd.Stderr = f, f // an *os.File is inherited: no copy goroutine, output survives us
	} else {
		s.memLog = &tailBuffer{max: 64 << 10}
		cmd.Stdout, cmd.Stderr = s.memLog, s.memLog
	}
	s.cmd = cmd

	// internal/child starts it in its own group that dies with this
	// process, leader and the tools it runs alike.
	started := make(chan error, 1)
	go func() {
		p, err := child.Start(cmd)
		if err != nil {
			started <- err
			return
		}
		started <- nil
		s.waitErr = cmd.Wait()
		p.Done()
		close(s.exited)
	}()
	if err := <-started; err != nil {
		s.closeLog()
		return nil, fmt.Errorf("start opencode: %w", err)
	}
	s.pgid = cmd.Process.Pid
	s.log = s.log.With().Int("PID", s.pgid).Logger()
	if err := s.recordPID(); err != nil {
		s.log.Warn().Err(err).Str("PIDFile", o.PIDFile).Msg("cannot record opencode pid; a crash could leave it orphaned")
	}

	startCtx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	began := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := s.probe(startCtx); err == nil {
			s.log.Info().Str("URL", s.url).Dur("Took", time.Since(began)).Msg("opencode server ready")
			return s, nil
		}
		select {
		case <-s.exited:
			err := &earlyExitError{err: s.waitErr, tail: s.logTail()}
			s.Close()
			return nil, fmt.Errorf("start opencode: %w", err)
		case <-startCtx.Done():
			tail := s.logTail()
			s.Close()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("start opencode: %w", ctx.Err())
			}
			return nil, fmt.Errorf("start opencode: no answer on %s within %s; last output:\n%s", s.url, o.StartTimeout, tail)
		case <-tick.C:
		}
	}
}

// probe asks GET /path once.
func (s *Server) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var p struct {
		Directory string `json:"directory"`
	}
	return s.call(ctx, http.MethodGet, "/path", nil, nil, &p)
}

// serverEnv is the base environment with horizon's OpenCode settings
// applied. It keeps the vendor API keys (OpenCode authenticates with them);
// the plugin of shellenv.go keeps them from the commands OpenCode runs. Variables horizon owns are removed from the base when unset
// here, so a user's own OPENCODE_CONFIG cannot leak into horizon's server.
func serverEnv(o ServerOptions, password string) []string {
	base := o.Env
	if base == nil {
		base = os.Environ()
	}
	set := map[string]string{
		"OPENCODE_SERVER_PASSWORD":      password,
		"OPENCODE_SERVER_USERNAME":      serverUser,
		"OPENCODE_DISABLE_AUTOUPDATE":   "1",
		"OPENCODE_DISABLE_MODELS_FETCH": "1",
		"OPENCODE_CONFIG_DIR":           o.ConfigDir,
		"OPENCODE_DB":                   o.DBPath,
		"OPENCODE_CONFIG":               o.ExtraConfig,
	}
	env := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, owned := set[k]; owned {
			continue
		}
		env = append(env, kv)
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if set[k] != "" {
			env = append(env, k+"="+set[k])
		}
	}
	return env
}

// SeedConfigDeps keeps OpenCode from running `npm install` in the config
// dir. On start, OpenCode 1.18.33 installs @opencode-ai/plugin into every
// config directory (for user plugins and tools written in TypeScript) in the
// background, unless node_modules exists and package-lock.json already lists
// every dependency of package.json. horizon's config dir holds only agent
// files, which need no package, so it gets a package.json and a lock that
// say so, and the server stays offline. A real install already there is left
// alone.
//
// A config dir holding a plugin (horizon's shell.env plugin) makes OpenCode
// also check that @opencode-ai/plugin is installed before it loads the
// plugin, and try to install it otherwise: offline that stalls the first
// start for half a minute or more, past the start timeout. horizon's plugin
// imports nothing, so a package manifest standing for the installed
// package is enough.
func SeedConfigDeps(dir string) error {
	const version = "1.18.33"
	stub := filepath.Join(dir, "node_modules", "@opencode-ai", "plugin")
	if _, err := os.Stat(stub); err != nil {
		if err := os.MkdirAll(stub, 0o755); err != nil {
			return err
		}
		manifest := fmt.Sprintf(`{"name": "@opencode-ai/plugin", "version": %q, "description": "stands for the package; horizon's plugin imports nothing"}`+"\n", version)
		if err := writeIfChanged(filepath.Join(stub, "package.json"), []byte(manifest)); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err == nil {
		return nil
	}
	pkg := fmt.Sprintf(`{"dependencies": {"@opencode-ai/plugin": %q}}`+"\n", version)
	lock := fmt.Sprintf(`{"lockfileVersion": 3, "packages": {"": {"dependencies": {"@opencode-ai/plugin": %q}}}}`+"\n", version)
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
		return err
	}
	if err := writeIfChanged(filepath.Join(dir, "package-lock.json"), []byte(lock)); err != nil {
		return err
	}
	return writeIfChanged(filepath.Join(dir, "package.json"), []byte(pkg))
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Close stops a server this package started: SIGTERM to its process group,
// then SIGKILL to the group (stragglers included) after StopTimeout. It is
// safe to call more than once; for Connect it does nothing.
func (s *Server) Close() error {
	if s.exited == nil {
		return nil
	}
	s.closeOnce.Do(func() {
		defer s.closeLog()
		defer s.forgetPID()
		if s.tmpDir != "" {
			defer os.RemoveAll(s.tmpDir)
		}
		// Idle keep-alive connections would hold up opencode's graceful stop.
		s.client.CloseIdleConnections()
		s.stream.CloseIdleConnections()
		if !s.gone() {
			began := time.Now()
			_ = syscall.Kill(-s.pgid, syscall.SIGTERM)
			select {
			case <-s.exited:
				s.log.Info().Dur("Took", time.Since(began)).Msg("opencode server stopped")
			case <-time.After(s.stopWait):
				// Seen: a background npm install in a config dir holds it up.
				s.log.Warn().Dur("After", s.stopWait).Msg("opencode ignored SIGTERM; killing its process group")
			}
		}
		// Whatever the leader did, its group may hold tool processes.
		_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
		select {
		case <-s.exited:
		case <-time.After(s.stopWait):
			s.closeErr = fmt.Errorf("opencode (pid %d) did not exit after SIGKILL", s.pgid)
		}
	})
	return s.closeErr
}

func (s *Server) closeLog() {
	if s.logFile != nil {
		s.logFile.Close()
	}
}

// logTail is the end of the server's output, for error messages.
func (s *Server) logTail() string {
	if s.memLog != nil {
		return s.memLog.tail(logTailBytes)
	}
	if s.logPath == "" {
		return ""
	}
	f, err := os.Open(s.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > logTailBytes {
		_, _ = f.Seek(st.Size()-logTailBytes, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) tail(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// ---- HTTP ----

// call does one JSON request against the server. q may be nil; body and out
// may be nil. A non-2xx answer is an *APIError; a server that has exited
// gives ErrServerExited.
func (s *Server) call(ctx context.Context, method, path string, q url.Values, body, out any) error {
	if s.gone() {
		return fmt.Errorf("%w (pid %d): %v", ErrServerExited, s.pgid, s.waitErr)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, callTimeout)
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("opencode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := s.newRequest(ctx, method, path, q, rd)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if s.gone() {
			return fmt.Errorf("%w (pid %d): %v", ErrServerExited, s.pgid, s.waitErr)
		}
		return fmt.Errorf("opencode %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return &APIError{Method: method, Path: path, StatusCode: resp.StatusCode, Body: string(b)}
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("opencode %s %s: decode answer: %w", method, path, err)
	}
	return nil
}

func (s *Server) newRequest(ctx context.Context, method, path string, q url.Values, body io.Reader) (*http.Request, error) {
	u := s.url + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("opencode %s %s: %w", method, path, err)
	}
	if s.password != "" {
		req.SetBasicAuth(serverUser, s.password)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

func (s *Server) gone() bool {
	if s.exited == nil {
		return false
	}
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// dirQuery is the query every instance-scoped call carries.
func dirQuery(dir string) url.Values {
	q := url.Values{}
	if dir != "" {
		q.Set("directory", dir)
	}
	return q
}

// ---- models and agents ----

// Models lists the "provider/model" IDs OpenCode offers in dir: the models
// of its connected providers (GET /config/providers), sorted.
func (s *Server) Models(ctx context.Context, dir string) ([]string, error) {
	var resp struct {
		Providers []struct {
			ID     string                     `json:"id"`
			Models map[string]json.RawMessage `json:"models"`
		} `json:"providers"`
	}
	if err := s.call(ctx, http.MethodGet, "/config/providers", dirQuery(dir), nil, &resp); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range resp.Providers {
		for m := range p.Models {
			out = append(out, p.ID+"/"+m)
		}
	}
	sort.Strings(out)
	return out, nil
}

// ContextLimit is the context window of model ("provider/model") in
// OpenCode's provider catalogue (GET /config/providers, the model's
// limit.context), or 0 when the catalogue states none.
func (s *Server) ContextLimit(ctx context.Context, dir, model string) (int, error) {
	providerID, modelID, err := splitModel(model)
	if err != nil {
		return 0, err
	}
	var resp struct {
		Providers []struct {
			ID     string `json:"id"`
			Models map[string]struct {
				Limit struct {
					Context int `json:"context"`
				} `json:"limit"`
			} `json:"models"`
		} `json:"providers"`
	}
	if err := s.call(ctx, http.MethodGet, "/config/providers", dirQuery(dir), nil, &resp); err != nil {
		return 0, fmt.Errorf("context limit of %s: %w", model, err)
	}
	for _, p := range resp.Providers {
		if m, ok := p.Models[modelID]; ok && p.ID == providerID {
			return m.Limit.Context, nil
		}
	}
	return 0, &UnknownModelError{Model: model}
}

// ValidateModel checks that model ("provider/model") is one OpenCode offers
// in dir; if not, the error is an *UnknownModelError listing those it does.
func (s *Server) ValidateModel(ctx context.Context, dir, model string) error {
	if _, _, err := splitModel(model); err != nil {
		return err
	}
	models, err := s.Models(ctx, dir)
	if err != nil {
		return err
	}
	for _, m := range models {
		if m == model {
			return nil
		}
	}
	return &UnknownModelError{Model: model, Available: models}
}

func splitModel(model string) (providerID, modelID string, err error) {
	p, m, ok := strings.Cut(model, "/")
	if !ok || p == "" || m == "" {
		return "", "", &UnknownModelError{Model: model}
	}
	return p, m, nil
}

// AgentInfo is what OpenCode reports about one agent (GET /agent).
type AgentInfo struct {
	Name        string           `json:"name"`
	Description string           `json:"description"`
	Mode        string           `json:"mode"` // primary | subagent | all
	Native      bool             `json:"native"`
	Permission  []PermissionRule `json:"permission"`
}

// PermissionRule is one rule of an agent's ruleset; the last matching rule
// wins.
type PermissionRule struct {
	Permission string `json:"permission"`
	Pattern    string `json:"pattern"`
	Action     string `json:"action"` // allow | deny | ask
}

// Action is what the ruleset decides for a permission and a pattern, by
// OpenCode's rule: the last rule whose permission and pattern both match
// (with * and ? wildcards) wins; no match means "ask".
func (a AgentInfo) Action(permission, pattern string) string {
	action := "ask"
	for _, r := range a.Permission {
		if wildcard(r.Permission, permission) && wildcard(r.Pattern, pattern) {
			action = r.Action
		}
	}
	return action
}

// wildcard matches s against a pattern where * is any run of characters
// (slashes included) and ? is one character.
func wildcard(pattern, s string) bool {
	if pattern == "" {
		return s == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if wildcard(pattern[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && wildcard(pattern[1:], s[1:])
	default:
		return s != "" && s[0] == pattern[0] && wildcard(pattern[1:], s[1:])
	}
}

// Agents lists the agents OpenCode knows in dir.
func (s *Server) Agents(ctx context.Context, dir string) ([]AgentInfo, error) {
	var out []AgentInfo
	if err := s.call(ctx, http.MethodGet, "/agent", dirQuery(dir), nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// FindOpenCode locates the opencode binary: $HORIZON_OPENCODE_BIN, then
// opencode on PATH, then <dir>/node_modules/.bin/opencode for each dir.
func FindOpenCode(dirs ...string) (string, error) {
	if p := os.Getenv("HORIZON_OPENCODE_BIN"); p != "" {
		return exec.LookPath(p)
	}
	if p, err := exec.LookPath("opencode"); err == nil {
		return p, nil
	}
	for _, d := range dirs {
		p := filepath.Join(d, "node_modules", ".bin", "opencode")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", errors.New("opencode not found: set HORIZON_OPENCODE_BIN, put opencode on PATH, or `npm install` in the module root")
}
