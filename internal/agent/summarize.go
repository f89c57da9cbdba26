package agent

// Compaction. A long-lived session (a loop's) is compacted with OpenCode's
// own summarize, which relies on (opencode 1.18.33):
//
//   - POST /session/{id}/summarize {providerID, modelID, auto:false} → true
//     once the compaction ended: the session then has a user message with a
//     "compaction" part and an assistant message with summary:true holding
//     the model's summary; the next prompt sees the summary instead of the
//     messages before it. auto:false adds no "continue" turn of its own.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Summarize compacts session sid with model ("provider/model") and
// returns once the summary is written. A session whose latest turn is
// already a finished summary (a retry after a crash) is left as it is, so
// retrying never pays for a second compaction.
func (s *Server) Summarize(ctx context.Context, dir, sid, model string) error {
	providerID, modelID, err := splitModel(model)
	if err != nil {
		return err
	}
	if done, err := s.summarized(ctx, dir, sid); err != nil || done {
		return err
	}
	body := map[string]any{"providerID": providerID, "modelID": modelID, "auto": false}
	var ok bool
	if err := s.call(ctx, http.MethodPost, "/session/"+url.PathEscape(sid)+"/summarize", dirQuery(dir), body, &ok); err != nil {
		return fmt.Errorf("summarize session %s: %w", sid, err)
	}
	// The call answers when the compaction ended; should a version answer
	// earlier, the summary is waited for.
	tick := time.NewTicker(s.pollInterval)
	defer tick.Stop()
	for {
		st, err := s.status(ctx, dir, sid)
		if err != nil {
			return fmt.Errorf("summarize session %s: %w", sid, err)
		}
		if st.Type == "idle" {
			done, err := s.summarized(ctx, dir, sid)
			if err != nil || done {
				return err
			}
			msgs, err := s.messages(ctx, dir, sid, 1)
			if err == nil && len(msgs) == 1 && msgs[0].Info.Error != nil {
				return fmt.Errorf("summarize session %s: %w", sid, msgs[0].Info.Error.asError(sid))
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// summarized reports whether the session's last message is a finished
// summary.
func (s *Server) summarized(ctx context.Context, dir, sid string) (bool, error) {
	msgs, err := s.messages(ctx, dir, sid, 1)
	if err != nil {
		return false, fmt.Errorf("summarize session %s: %w", sid, err)
	}
	if len(msgs) == 0 {
		return false, nil
	}
	m := msgs[0].Info
	return m.Role == "assistant" && m.Summary == true && m.Time.Completed > 0 && m.Error == nil, nil
}
