package applier

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/horizon/horizon/internal/agent"
)

// The advisor's watchdog reads an applier session from its session log
// and leaves notes in it. Neither CLI takes a message in the middle of a
// turn, so a note reaches the worker with its next turn: a waking note
// (a blocker) makes one. When the CLI ends its turn with a waking note
// pending, RunSession continues the session with the pending notes as the
// prompt before it returns; a note that arrives after RunSession returned
// waits for the next RunSession of the session (the workflow runs one
// when the watchdog woke the worker after its report). Notes that do not
// wake ride along with that next turn, if there is one.

// adviceLine is an advisor's note in a session log.
type adviceLine struct {
	Horizon string `json:"horizon"` // "advice"
	ID      string `json:"id"`      // the delivery's message ID (idempotency)
	Note    string `json:"note"`
	Text    string `json:"text"`
	Wake    bool   `json:"wake"`
}

// register remembers which log holds session sid.
func (r *Runner) register(sid, path string) {
	if sid == "" {
		return
	}
	r.mu.Lock()
	r.logs[sid] = path
	r.mu.Unlock()
}

// Knows reports whether sid is an applier session this runner ran or
// found, so the daemon sends the watchdog's calls for it here.
func (r *Runner) Knows(sid string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.logs[sid]
	return ok
}

func (r *Runner) logOf(sid string) (string, Kind, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.logs[sid]
	if !ok {
		return "", "", fmt.Errorf("applier session %s: unknown here", sid)
	}
	for _, k := range Kinds {
		if strings.Contains(p, string(k)+"-") {
			return p, k, nil
		}
	}
	return p, Claude, nil
}

// FindSession is the applier session titled title, "" while none has
// started.
func (r *Runner) FindSession(_ context.Context, _ string, title string) (string, error) {
	for _, k := range Kinds {
		path := r.logPath(k, title)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		t, err := readLog(path, r.driverFor(k))
		if err != nil {
			return "", err
		}
		if t.session != "" {
			r.register(t.session, path)
			return t.session, nil
		}
	}
	return "", nil
}

// Transcript is the session as the watchdog reads it: each invocation's
// prompt, each step of the agent (text, or the tools it called), and the
// advisor's notes, in order. IDs sort in log order.
func (r *Runner) Transcript(_ context.Context, _ string, sid string) ([]agent.Message, error) {
	path, k, err := r.logOf(sid)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("applier transcript: %w", err)
	}
	defer f.Close()
	d := r.driverFor(k)
	var msgs []agent.Message
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		id := fmt.Sprintf("m%09d", n)
		var m marker
		if json.Unmarshal(line, &m) == nil && m.Horizon != "" {
			switch m.Horizon {
			case "invocation":
				msgs = append(msgs, agent.Message{ID: id, Role: "user", Text: m.Prompt})
			case "advice":
				var a adviceLine
				_ = json.Unmarshal(line, &a)
				msgs = append(msgs, agent.Message{ID: id, Role: "user", Text: a.Text, Advice: a.Note, Wake: a.Wake})
			}
			continue
		}
		ev := d.event(line)
		switch {
		case ev.Final:
			if len(msgs) > 0 && msgs[len(msgs)-1].Role == "assistant" && msgs[len(msgs)-1].Finish == "tool-calls" {
				msgs = append(msgs, agent.Message{ID: id, Role: "assistant", Completed: true, Finish: "stop"})
			}
		case ev.Tool != "":
			msgs = append(msgs, agent.Message{ID: id, Role: "assistant", Tools: []string{ev.Tool}, Completed: true, Finish: "tool-calls"})
		case ev.Text != "":
			msgs = append(msgs, agent.Message{ID: id, Role: "assistant", Text: ev.Text, Completed: true, Finish: "stop"})
		}
	}
	return msgs, sc.Err()
}

// Follow ticks when the session's log grows, until ctx ends.
func (r *Runner) Follow(ctx context.Context, _ string, sid string) <-chan struct{} {
	path, _, err := r.logOf(sid)
	if err != nil {
		return nil
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		var size int64 = -1
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if st, err := os.Stat(path); err == nil && st.Size() != size {
				size = st.Size()
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
	}()
	return ch
}

// Idle reports whether no RunSession holds the session: its turns, and
// the one a waking note makes, are over.
func (r *Runner) Idle(_ context.Context, _ string, sid string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.running[sid], nil
}

// Deliver leaves a note in the session's log, once per message ID.
func (r *Runner) Deliver(_ context.Context, _ string, sid string, d agent.Delivery) error {
	path, k, err := r.logOf(sid)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t, err := readLog(path, r.driverFor(k))
	if err != nil {
		return err
	}
	if t.delivered[d.MessageID] {
		return nil
	}
	b, _ := json.Marshal(adviceLine{Horizon: "advice", ID: d.MessageID, Note: d.NoteID, Text: d.Text, Wake: d.Wake})
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("deliver advice: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("deliver advice: %w", err)
	}
	return f.Close()
}

// setRunning marks sid held by a RunSession, or (false) lets it go unless
// a waking note came in meanwhile: then the caller runs one more turn
// (wake true) and the session stays held.
func (r *Runner) setRunning(sid, path string, d driver, on bool) (wake *transcript, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sid == "" {
		return nil, nil
	}
	if on {
		r.running[sid] = true
		return nil, nil
	}
	t, err := readLog(path, d)
	if err != nil {
		return nil, err
	}
	if t.finished() && t.wakes() {
		return t, nil
	}
	delete(r.running, sid)
	return nil, nil
}

// release lets sid go (an error ended its RunSession).
func (r *Runner) release(sid string) {
	r.mu.Lock()
	delete(r.running, sid)
	r.mu.Unlock()
}

// notesPrompt is the prompt of the turn pending notes make.
func (t *transcript) notesPrompt() string {
	var b strings.Builder
	for _, n := range t.pending {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(n.Text)
	}
	return b.String()
}

// wakes reports a waking note not yet given to the agent.
func (t *transcript) wakes() bool {
	for _, n := range t.pending {
		if n.Wake {
			return true
		}
	}
	return false
}
