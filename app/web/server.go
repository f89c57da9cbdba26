// Package web is `horizon web`: a JSON API under /api/v1 for every read
// and verb of app/core, SVG charts drawn on the server, and a
// dashboard (embedded static files, an installable PWA) that uses them.
// It serves on 127.0.0.1 only; verbs need the token, reads too unless
// web.public_reads.
package web

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Server holds what the handlers share.
type Server struct {
	Core Core
	// Token is what `Authorization: Bearer <token>` must carry.
	Token string
	// PublicReads lets GET requests of the API go without the token.
	PublicReads bool
	// RunURL is a run's page in the Temporal Web UI ("" when none).
	RunURL func(id string) string
	Log    zerolog.Logger
	// Now is the clock of the spend and landed series; nil is time.Now.
	Now func() time.Time
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Handler routes the API, the charts and the dashboard.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	read := func(pattern string, h func(*http.Request) (any, error)) {
		mux.Handle("GET "+pattern, s.auth(false, s.api(h)))
	}
	verb := func(pattern string, h func(*http.Request) (any, error)) {
		mux.Handle(pattern, s.auth(true, s.api(h)))
	}
	read("/api/v1/runs", s.runs)
	read("/api/v1/runs/{id}", s.run)
	read("/api/v1/needs", s.needs)
	read("/api/v1/reports/latest", s.reportLatest)
	read("/api/v1/reports/{date}", s.report)
	read("/api/v1/spend", s.spend)
	read("/api/v1/supervisors", s.supervisors)
	read("/api/v1/queue", s.queue)
	read("/api/v1/roadmap", s.roadmap)
	read("/api/v1/supervisor", s.supervisor)
	read("/api/v1/loops", s.loops)
	read("/api/v1/tasks", s.tasks)
	mux.Handle("GET /api/v1/charts/{chart}", s.auth(false, http.HandlerFunc(s.chart)))

	verb("POST /api/v1/runs", s.start)
	verb("POST /api/v1/runs/{id}/{verb}", s.runVerb)
	verb("POST /api/v1/supervisors/{verb}", s.supervisorVerb)
	verb("POST /api/v1/queue", s.queueAdd)
	verb("POST /api/v1/queue/{id}/move", s.queueMove)
	verb("POST /api/v1/queue/{id}/approve", s.queueApprove)
	verb("DELETE /api/v1/queue/{id}", s.queueRemove)
	mux.Handle("/api/", s.api(func(*http.Request) (any, error) {
		return nil, errNoRoute
	}))

	static, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err) // the embedded tree has a static/ directory; the build guarantees it
	}
	files := http.FileServerFS(static)
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeError(w, http.StatusMethodNotAllowed, "the dashboard's files are read with GET")
			return
		}
		// The shell is always asked of the network first by the service
		// worker; no stale copy should sit in the browser's own cache.
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
	return loopbackOnly(mux)
}

// loopbackOnly refuses a request whose Host is not a loopback name: a
// page elsewhere that rebinds its own name to 127.0.0.1 must not read
// the API, even when reads are public.
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		switch strings.Trim(host, "[]") {
		case "127.0.0.1", "localhost", "::1":
			next.ServeHTTP(w, r)
		default:
			writeError(w, http.StatusMisdirectedRequest, "horizon web answers only on 127.0.0.1")
		}
	})
}

// errNoRoute is a path under /api/ that names nothing.
var errNoRoute = &httpError{code: http.StatusNotFound, msg: "no such endpoint; the API is documented in the README (Watching and steering)"}

// httpError is an error with its own status.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

// badRequest is bad input found by the handler itself.
func badRequest(format string, args ...any) error {
	return &httpError{code: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// auth refuses a request without the token: always for a verb, for a read
// unless reads are public.
func (s *Server) auth(isVerb bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isVerb && s.PublicReads {
			next.ServeHTTP(w, r)
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.Token)) != 1 {
			writeError(w, http.StatusUnauthorized, "this needs the token: send `Authorization: Bearer <token>`, the token is in $HORIZON_HOME/web.token")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// api writes a handler's answer as JSON, or its error as {"error": ...}
// with the status the error calls for.
func (s *Server) api(h func(*http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := h(r)
		if err != nil {
			code := status(err)
			var he *httpError
			if errors.As(err, &he) {
				code = he.code
			}
			if code >= 500 {
				s.Log.Error().Err(err).Str("Path", r.URL.Path).Msg("web request failed")
			}
			msg := err.Error()
			if code == http.StatusServiceUnavailable {
				msg = unavailableText
			}
			writeError(w, code, msg)
			return
		}
		writeJSON(w, http.StatusOK, v)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
