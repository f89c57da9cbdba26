// Package logging sets up horizon's one zerolog logger and adapts it into the
// Temporal SDK, so workflow, activity and SDK messages land in the same
// stream with the same keys.
//
// Humans get a console writer on a terminal; every process that runs work
// (the daemon, a worker) also writes JSON lines to $HORIZON_HOME/logs so a
// run can be reconstructed after the fact.
package logging

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	sdklog "go.temporal.io/sdk/log"
)

// Options configures New.
type Options struct {
	// Level is debug, info, warn or error.
	Level string
	// Console receives human-readable output; nil means stderr. It is
	// rendered for people only when it is a terminal, as JSON otherwise.
	Console io.Writer
	// ConsoleLevel raises the console's threshold above Level (CLI commands
	// show their own progress and only want warnings on the console).
	ConsoleLevel string
	// File, when set, receives JSON lines (appended, created 0600).
	File string
}

// TimeFormat is the time of every log line: milliseconds, so that what a
// start waited on can be read from the log (`make bench` does).
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// New builds the process logger. The returned closer flushes the file.
func New(o Options) (zerolog.Logger, io.Closer, error) {
	zerolog.TimeFieldFormat = TimeFormat
	level, err := zerolog.ParseLevel(o.Level)
	if err != nil || o.Level == "" {
		level = zerolog.InfoLevel
	}
	console := o.Console
	if console == nil {
		console = os.Stderr
	}
	consoleLevel := level
	if o.ConsoleLevel != "" {
		if l, err := zerolog.ParseLevel(o.ConsoleLevel); err == nil && l > consoleLevel {
			consoleLevel = l
		}
	}
	var cw io.Writer = console
	if f, ok := console.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		cw = zerolog.ConsoleWriter{Out: console, TimeFormat: time.Kitchen}
	}
	writers := []io.Writer{&levelWriter{w: cw, min: consoleLevel}}
	var closer io.Closer = nopCloser{}
	if o.File != "" {
		if err := os.MkdirAll(filepath.Dir(o.File), 0o700); err != nil {
			return zerolog.Nop(), nil, fmt.Errorf("logging: create log dir: %w", err)
		}
		f, err := os.OpenFile(o.File, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return zerolog.Nop(), nil, fmt.Errorf("logging: open %s: %w", o.File, err)
		}
		writers = append(writers, &levelWriter{w: f, min: level})
		closer = f
	}
	l := zerolog.New(zerolog.MultiLevelWriter(writers...)).Level(level).With().Timestamp().Logger()
	return l, closer, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// levelWriter filters events below min for one destination.
type levelWriter struct {
	w   io.Writer
	min zerolog.Level
}

func (lw *levelWriter) Write(p []byte) (int, error) { return lw.w.Write(p) }

func (lw *levelWriter) WriteLevel(l zerolog.Level, p []byte) (int, error) {
	if l < lw.min {
		return len(p), nil
	}
	return lw.w.Write(p)
}

// Temporal adapts a zerolog logger to the Temporal SDK's key/value logger.
type Temporal struct {
	l zerolog.Logger
}

var (
	_ sdklog.Logger     = Temporal{}
	_ sdklog.WithLogger = Temporal{}
)

// NewTemporal returns the SDK adapter.
func NewTemporal(l zerolog.Logger) Temporal {
	return Temporal{l: l.With().Str("component", "temporal-sdk").Logger()}
}

func (t Temporal) Debug(msg string, kv ...any) { fields(t.l.Debug(), kv).Msg(msg) }
func (t Temporal) Info(msg string, kv ...any)  { fields(t.l.Info(), kv).Msg(msg) }
func (t Temporal) Warn(msg string, kv ...any)  { fields(t.l.Warn(), kv).Msg(msg) }
func (t Temporal) Error(msg string, kv ...any) { fields(t.l.Error(), kv).Msg(msg) }

// With returns a logger that prepends the key/values to every message.
func (t Temporal) With(kv ...any) sdklog.Logger {
	ctx := t.l.With()
	for i := 0; i < len(kv); i += 2 {
		ctx = ctx.Interface(key(kv, i), value(kv, i))
	}
	return Temporal{l: ctx.Logger()}
}

func fields(e *zerolog.Event, kv []any) *zerolog.Event {
	for i := 0; i < len(kv); i += 2 {
		v := value(kv, i)
		if err, ok := v.(error); ok {
			e = e.AnErr(key(kv, i), err)
			continue
		}
		e = e.Interface(key(kv, i), v)
	}
	return e
}

func key(kv []any, i int) string {
	if s, ok := kv[i].(string); ok {
		return s
	}
	return fmt.Sprint(kv[i])
}

func value(kv []any, i int) any {
	if i+1 < len(kv) {
		return kv[i+1]
	}
	return "(missing value)"
}
