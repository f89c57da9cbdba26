package engine

import (
	"github.com/rs/zerolog"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// serverLogger adapts zerolog to the embedded server's tag-based logger. The
// server is chatty at info level, so it logs at warn and above unless the
// process logger is at debug.
type serverLogger struct{ l zerolog.Logger }

var _ log.Logger = serverLogger{}
var _ log.WithLogger = serverLogger{}

func newServerLogger(l zerolog.Logger) serverLogger {
	l = l.With().Str("component", "temporal-server").Logger()
	if l.GetLevel() > zerolog.DebugLevel {
		l = l.Level(zerolog.WarnLevel)
	}
	return serverLogger{l: l}
}

func (s serverLogger) Debug(msg string, tags ...tag.Tag)  { withTags(s.l.Debug(), tags).Msg(msg) }
func (s serverLogger) Info(msg string, tags ...tag.Tag)   { withTags(s.l.Info(), tags).Msg(msg) }
func (s serverLogger) Warn(msg string, tags ...tag.Tag)   { withTags(s.l.Warn(), tags).Msg(msg) }
func (s serverLogger) Error(msg string, tags ...tag.Tag)  { withTags(s.l.Error(), tags).Msg(msg) }
func (s serverLogger) DPanic(msg string, tags ...tag.Tag) { withTags(s.l.Error(), tags).Msg(msg) }
func (s serverLogger) Panic(msg string, tags ...tag.Tag) {
	withTags(s.l.Error(), tags).Msg(msg)
	panic(msg)
}
func (s serverLogger) Fatal(msg string, tags ...tag.Tag) { withTags(s.l.Fatal(), tags).Msg(msg) }

func (s serverLogger) With(tags ...tag.Tag) log.Logger {
	ctx := s.l.With()
	for _, t := range tags {
		ctx = ctx.Interface(t.Key(), t.Value())
	}
	return serverLogger{l: ctx.Logger()}
}

func withTags(e *zerolog.Event, tags []tag.Tag) *zerolog.Event {
	for _, t := range tags {
		if err, ok := t.Value().(error); ok {
			e = e.AnErr(t.Key(), err)
			continue
		}
		e = e.Interface(t.Key(), t.Value())
	}
	return e
}
