package agent

// Sessions. RunSession drives one OpenCode session to the end of a turn and
// relies on these endpoints and fields (opencode 1.18.33):
//
//   - POST /session {title} → Session{id}; GET /session/{id} → Session with
//     running totals cost and tokens{input,output,reasoning,cache{read,write}}
//     (404 once the session is gone).
//   - POST /session/{id}/prompt_async {parts:[{type:"text",text}], agent,
//     model:{providerID,modelID}} → 204 at once; the agent field picks the
//     agent for the turn. Errors found before the model is called (unknown
//     agent, unknown model) are not answered: they appear only as a
//     session.error event, with no assistant message.
//   - GET /session/status → {sessionID: {type: busy|retry|idle}}; a session
//     missing from the map is idle. Right after prompt_async the session can
//     still read idle, before the user message is even stored, so idle alone
//     never means done.
//   - GET /session/{id}/message[?limit=N] → [{info, parts}] in order (limit
//     keeps the last N). Each model step is its own assistant message, with
//     time.completed once it ended, finish ("stop", "tool-calls", "length",
//     ...), cost and tokens, and error when it failed (APIError,
//     ProviderAuthError, MessageAbortedError, ...). A turn is over when the
//     session is idle and the last message is a completed assistant message
//     after the turn's user message. A step that asked for tools and was
//     then stopped (a rejected question ends the turn that way) is only taken
//     as the end after the session stayed idle a moment.
//   - GET /event?directory= (SSE, "data: {type, properties}" lines;
//     properties.sessionID names the session): used to wake up early and to
//     see session.error, permission.asked, question.asked and the running
//     tool (message.part.updated, part.type "tool", state.status "running").
//     Polling covers anything the stream misses.
//   - GET /permission and GET /question (per directory) → pending requests
//     {id, sessionID, ...}; POST /permission/{id}/reply {reply:"reject",
//     message} (the model sees the message and goes on) and POST
//     /question/{id}/reject (the turn ends).
//   - POST /session/{id}/abort → true; the running step ends with
//     MessageAbortedError and the session goes idle.
//   - After opencode is SIGKILLed mid-step, the session (same OPENCODE_DB)
//     reads idle with a never-completed assistant message, and a new prompt
//     on the same session runs normally.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/horizon/horizon/horizon"
)

// ContinuationPrompt is sent to a resumed session whose last turn did not
// finish.
const ContinuationPrompt = "You were interrupted. Continue the task from the current state of the files and finish with the required block."

// rejectMessage is the answer to any permission request: nobody can grant
// it, and the model is told how to go on.
const rejectMessage = "horizon runs unattended and nobody can grant this. Continue without it, or end with a blocked report that names what you need."

// SessionRequest is one agent session to run.
type SessionRequest struct {
	Directory       string // the lane (absolute); every request for the session carries it as ?directory=
	Agent           string // AgentWorker, AgentAuditor, ...
	Model           string // "provider/model"
	Prompt          string
	Title           string
	ResumeSessionID string // continue this session if it exists (after a crash) instead of creating one
	// Turn, with ResumeSessionID, asks for a new turn in that session (a
	// loop's next activation): Turn is a marker unique to the turn and
	// contained in Prompt. A session none of whose user messages holds it
	// gets Prompt as its next turn; one that holds it was prompted already
	// (by an attempt that crashed), so that turn is waited for, returned
	// or continued exactly as a resumed session's, never prompted again.
	Turn string
	// Permission are the session's own rules, weighed after its agent's
	// (the last match wins): what this session may do beyond, or short
	// of, what every session of its agent may (a trusted repository's own
	// delegates). They are set when the session is created.
	Permission []PermissionRule `json:",omitempty"`
}

// Usage is what a session cost, as OpenCode records it per assistant message.
type Usage struct {
	Input, Output, Reasoning, CacheRead, CacheWrite int64
	Cost                                            float64
}

// Plus is u and o together.
func (u Usage) Plus(o Usage) Usage {
	return Usage{Input: u.Input + o.Input, Output: u.Output + o.Output, Reasoning: u.Reasoning + o.Reasoning,
		CacheRead: u.CacheRead + o.CacheRead, CacheWrite: u.CacheWrite + o.CacheWrite, Cost: u.Cost + o.Cost}
}

func (u *Usage) add(t ocTokens, cost float64) {
	u.Input += int64(t.Input)
	u.Output += int64(t.Output)
	u.Reasoning += int64(t.Reasoning)
	u.CacheRead += int64(t.Cache.Read)
	u.CacheWrite += int64(t.Cache.Write)
	u.Cost += cost
}

// SessionResult is a finished session turn.
type SessionResult struct {
	SessionID string
	// Text is the final assistant message's text (the last step's; if that
	// step has none, the latest text of the turn). Parse it with ParseReport,
	// ParseAudit or ParsePlan.
	Text string
	// Usage covers the assistant messages this call created. A resumed
	// session reports the whole session: the attempts that made the earlier
	// messages crashed before they could report anything.
	Usage    Usage
	Resumed  bool // ResumeSessionID was found and continued (or its finished result returned)
	Messages int  // messages in the session
	// Asked are the questions and permission requests horizon rejected
	// and the tool calls the agent's permissions denied, in order.
	Asked  []horizon.Ask
	Finish string // finish reason of the last step ("stop", "length", "tool-calls", ...)
	// Children are the sessions the turn delegated to (task calls); their
	// usage is included in Usage.
	Children []ChildSession
	// Context is the context the last assistant message used: its input,
	// output and reasoning tokens (cache reads are part of input already,
	// so they are not added again). Over the model's context limit it is
	// the session's occupancy.
	Context int64
}

// Progress is reported while a session runs: at once when the session ID is
// known (so the caller can heartbeat it and resume after a crash), when a
// tool starts, and every few seconds.
type Progress struct {
	SessionID string
	Phase     string // created | resumed | prompted | running | tool | retry | done
	Tool      string
	Usage     Usage // the session's totals so far
	// Retry is set while OpenCode itself retries a failed model call (the
	// session's status reads "retry"): the provider is unreachable or
	// answering errors, and the session waits, it does not work.
	Retry *Retry
}

// Retry is OpenCode's own retry of a model call, as its session status
// reports it.
type Retry struct {
	Attempt int       // OpenCode's retry count for the call
	Message string    // the provider's error, as OpenCode words it
	Next    time.Time // when OpenCode tries again (zero: unknown)
}

// ---- OpenCode wire types (only the fields used) ----

type ocTokens struct {
	Input     float64 `json:"input"`
	Output    float64 `json:"output"`
	Reasoning float64 `json:"reasoning"`
	Cache     struct {
		Read  float64 `json:"read"`
		Write float64 `json:"write"`
	} `json:"cache"`
}

type ocSession struct {
	ID        string   `json:"id"`
	Directory string   `json:"directory"`
	Title     string   `json:"title"`
	Cost      float64  `json:"cost"`
	Tokens    ocTokens `json:"tokens"`
}

type ocMessage struct {
	Info  ocInfo   `json:"info"`
	Parts []ocPart `json:"parts"`
}

type ocInfo struct {
	ID       string `json:"id"`
	Role     string `json:"role"`
	ParentID string `json:"parentID"`
	Agent    string `json:"agent"`
	// ProviderID and ModelID name the model of an assistant message.
	ProviderID string `json:"providerID"`
	ModelID    string `json:"modelID"`
	Finish     string `json:"finish"`
	// Summary is true on the assistant message of a compaction
	// (summarize); user messages carry an object there.
	Summary any `json:"summary"`
	Time    struct {
		Created   float64 `json:"created"`
		Completed float64 `json:"completed"`
	} `json:"time"`
	Error  *ocError `json:"error"`
	Cost   float64  `json:"cost"`
	Tokens ocTokens `json:"tokens"`
}

type ocError struct {
	Name string `json:"name"`
	Data struct {
		Message     string `json:"message"`
		StatusCode  int    `json:"statusCode"`
		IsRetryable bool   `json:"isRetryable"`
	} `json:"data"`
}

type ocPart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Tool      string `json:"tool"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`
	// Metadata carries an advisor's tag (advice.go).
	Metadata map[string]any `json:"metadata"`
	State    *struct {
		Status string         `json:"status"`
		Error  string         `json:"error"`
		Input  map[string]any `json:"input"`
		// Output and Metadata carry a file tool's language server
		// diagnostics (diagnostics.go).
		Output   string          `json:"output"`
		Metadata json.RawMessage `json:"metadata"`
	} `json:"state"`
}

type ocStatus struct {
	Type    string `json:"type"` // idle | busy | retry
	Attempt int    `json:"attempt"`
	Message string `json:"message"`
	Next    int64  `json:"next"` // unix milliseconds of the next try
}

// retry is the status's retry, nil unless the session is retrying.
func (st ocStatus) retry() *Retry {
	if st.Type != "retry" {
		return nil
	}
	r := &Retry{Attempt: st.Attempt, Message: st.Message}
	if st.Next > 0 {
		r.Next = time.UnixMilli(st.Next)
	}
	return r
}

func (e *ocError) asError(sessionID string) *SessionError {
	msg := e.Data.Message
	if msg == "" {
		msg = e.Name
	}
	// OpenCode appends a stack trace to some messages; the first line says it.
	if i := strings.Index(msg, "\n    at "); i > 0 {
		msg = msg[:i]
	}
	return &SessionError{SessionID: sessionID, Name: e.Name, Message: msg, StatusCode: e.Data.StatusCode, Retryable: e.Data.IsRetryable}
}

// ---- endpoints ----

func (s *Server) createSession(ctx context.Context, dir, title string, perm []PermissionRule) (ocSession, error) {
	var out ocSession
	body := map[string]any{"title": title}
	if len(perm) > 0 {
		body["permission"] = perm
	}
	err := s.call(ctx, http.MethodPost, "/session", dirQuery(dir), body, &out)
	if err == nil && out.ID == "" {
		err = errors.New("opencode POST /session: answer has no id")
	}
	return out, err
}

func (s *Server) getSession(ctx context.Context, dir, id string) (ocSession, error) {
	var out ocSession
	err := s.call(ctx, http.MethodGet, "/session/"+url.PathEscape(id), dirQuery(dir), nil, &out)
	return out, err
}

// DeleteSession removes a session, its messages and its children from
// OpenCode's store (a session that is gone: tests make one with it).
func (s *Server) DeleteSession(ctx context.Context, dir, id string) error {
	return s.call(ctx, http.MethodDelete, "/session/"+url.PathEscape(id), dirQuery(dir), nil, nil)
}

func (s *Server) messages(ctx context.Context, dir, id string, limit int) ([]ocMessage, error) {
	q := dirQuery(dir)
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out []ocMessage
	err := s.call(ctx, http.MethodGet, "/session/"+url.PathEscape(id)+"/message", q, nil, &out)
	return out, err
}

func (s *Server) status(ctx context.Context, dir, id string) (ocStatus, error) {
	var all map[string]ocStatus
	if err := s.call(ctx, http.MethodGet, "/session/status", dirQuery(dir), nil, &all); err != nil {
		return ocStatus{}, err
	}
	st, ok := all[id]
	if !ok || st.Type == "" {
		st.Type = "idle"
	}
	return st, nil
}

func (s *Server) promptAsync(ctx context.Context, dir, id, agentName, model, text string) error {
	providerID, modelID, err := splitModel(model)
	if err != nil {
		return err
	}
	body := map[string]any{
		"agent": agentName,
		"model": map[string]string{"providerID": providerID, "modelID": modelID},
		"parts": []map[string]string{{"type": "text", "text": text}},
	}
	return s.call(ctx, http.MethodPost, "/session/"+url.PathEscape(id)+"/prompt_async", dirQuery(dir), body, nil)
}

// Abort stops the session's running step, if any.
func (s *Server) Abort(ctx context.Context, dir, sessionID string) error {
	var ok bool
	return s.call(ctx, http.MethodPost, "/session/"+url.PathEscape(sessionID)+"/abort", dirQuery(dir), nil, &ok)
}

// ---- RunSession ----

func (r SessionRequest) check() error {
	switch {
	case r.Directory == "" || !filepath.IsAbs(r.Directory):
		return fmt.Errorf("session: directory %q is not an absolute path", r.Directory)
	case r.Agent == "":
		return errors.New("session: no agent given")
	case r.Prompt == "" && r.ResumeSessionID == "":
		return errors.New("session: empty prompt")
	case r.Turn != "" && (r.ResumeSessionID == "" || !strings.Contains(r.Prompt, r.Turn)):
		return errors.New("session: a new turn needs the session to resume and a prompt holding its marker")
	}
	_, _, err := splitModel(r.Model)
	return err
}

// RunSession runs one turn of an agent session in req.Directory and returns
// when the agent's final message is complete. See the file comment for the
// OpenCode behaviour it relies on.
//
// With ResumeSessionID (the ID an earlier, crashed attempt heartbeated) the
// session is continued instead of created: a turn that already finished is
// returned as it is, without prompting (and paying) again; a session still
// busy is waited for; an interrupted one gets ContinuationPrompt.
//
// While it waits, every permission or question the session asks is rejected
// (recorded in SessionResult.Asked), so an unattended run never hangs. When
// ctx ends, the session is aborted and ctx.Err() returned. A failed step is a
// *SessionError; a server that died is ErrServerExited. On error the result
// still carries the SessionID when one exists.
func (s *Server) RunSession(ctx context.Context, req SessionRequest, onProgress func(Progress)) (SessionResult, error) {
	if onProgress == nil {
		onProgress = func(Progress) {}
	}
	if err := req.check(); err != nil {
		return SessionResult{}, err
	}
	log := s.log.With().Str("Agent", req.Agent).Str("Model", req.Model).Str("Directory", req.Directory).Logger()
	t, err := s.openTurn(ctx, req, log, onProgress)
	if err != nil || t.done != nil {
		if t.done != nil {
			return *t.done, nil
		}
		return SessionResult{SessionID: t.sid, Resumed: t.resumed}, err
	}
	log = log.With().Str("Session", t.sid).Logger()
	msgs, r, err := s.awaitTurn(ctx, req, t, log, onProgress)
	if err != nil {
		return SessionResult{SessionID: t.sid, Resumed: t.resumed, Asked: r.asked}, err
	}
	res := s.finishTurn(ctx, req.Directory, t, msgs, log)
	res.Asked = append(r.asked, deniedCalls(msgs, t.baseline)...)
	onProgress(Progress{SessionID: t.sid, Phase: "done", Usage: res.Usage})
	log.Info().Int("Messages", res.Messages).Str("Finish", res.Finish).Float64("Cost", res.Usage.Cost).
		Int64("Input", res.Usage.Input).Int64("Output", res.Usage.Output).Msg("session turn finished")
	return res, nil
}

// turn is what RunSession waits for: the session, whether it continues
// one, the prompt to send (if any) and where in the session's messages
// the awaited turn and the usage it counts begin. done is set when a
// resumed session had already finished the turn.
type turn struct {
	sid        string
	resumed    bool
	prompt     string
	needPrompt bool
	baseline   int // index of the first message of the awaited turn
	usageFrom  int // -1: from the baseline (0 for a resumed session)
	done       *SessionResult
}

// openTurn finds the session to continue (req.ResumeSessionID, if it
// still exists) and what it still needs, or creates a new one.
func (s *Server) openTurn(ctx context.Context, req SessionRequest, log zerolog.Logger, onProgress func(Progress)) (turn, error) {
	t := turn{prompt: req.Prompt, needPrompt: true, usageFrom: -1}
	dir := req.Directory
	if req.ResumeSessionID != "" {
		_, err := s.getSession(ctx, dir, req.ResumeSessionID)
		switch {
		case err == nil:
			t.sid, t.resumed = req.ResumeSessionID, true
			return s.resumeTurn(ctx, req, t, log.With().Str("Session", t.sid).Logger(), onProgress)
		case IsNotFound(err):
			log.Warn().Str("Session", req.ResumeSessionID).Msg("session to resume is gone; starting a new one")
		default:
			return t, fmt.Errorf("resume session %s: %w", req.ResumeSessionID, err)
		}
	}
	if err := s.ValidateModel(ctx, dir, req.Model); err != nil {
		return t, err
	}
	title := req.Title
	if title == "" {
		title = "horizon " + req.Agent
	}
	sess, err := s.createSession(ctx, dir, title, req.Permission)
	if err != nil {
		return t, fmt.Errorf("create session: %w", err)
	}
	t.sid = sess.ID
	log.Info().Str("Session", t.sid).Msg("session created")
	onProgress(Progress{SessionID: t.sid, Phase: "created"})
	return t, nil
}

// resumeTurn reads a session being continued and decides what the turn
// needs: its next turn (req.Turn not in it yet), waiting for a turn still
// running, the prompt that never landed, nothing (the turn finished:
// t.done), or a nudge to continue an interrupted turn.
func (s *Server) resumeTurn(ctx context.Context, req SessionRequest, t turn, log zerolog.Logger, onProgress func(Progress)) (turn, error) {
	dir, sid := req.Directory, t.sid
	onProgress(Progress{SessionID: sid, Phase: "resumed"})
	msgs, err := s.messages(ctx, dir, sid, 0)
	if err != nil {
		return t, fmt.Errorf("resume session %s: %w", sid, err)
	}
	msgs = withoutNotes(msgs)
	st, err := s.status(ctx, dir, sid)
	if err != nil {
		return t, fmt.Errorf("resume session %s: %w", sid, err)
	}
	lastUser := lastUserIndex(msgs)
	at := -1
	if req.Turn != "" {
		at = userIndexWith(msgs, req.Turn)
		t.usageFrom = max(at, 0)
	}
	switch {
	case req.Turn != "" && at < 0:
		t.resumed, t.baseline, t.usageFrom = false, len(msgs), len(msgs)
		log.Info().Str("Turn", req.Turn).Msg("session's next turn")
	case st.Type != "idle":
		t.needPrompt, t.baseline = false, max(lastUser, 0)
		log.Info().Str("Status", st.Type).Msg("resumed session is still running; waiting for it")
	case lastUser < 0:
		t.baseline = len(msgs) // the prompt never landed: send it now
		log.Info().Msg("resumed session has no prompt yet; sending it")
	case turnOutcome(msgs, lastUser) == turnFinished && finalText(msgs, lastUser) != "":
		res := buildResult(sid, msgs, lastUser, max(t.usageFrom, 0))
		res.Resumed = true
		log.Info().Msg("resumed session had already finished; returning its result")
		onProgress(Progress{SessionID: sid, Phase: "done", Usage: res.Usage})
		t.done = &res
	default:
		t.prompt, t.baseline = ContinuationPrompt, len(msgs)
		log.Info().Int("Messages", len(msgs)).Msg("resumed session was interrupted; asking it to continue")
	}
	return t, nil
}

// awaitTurn follows the session's events, sends the turn's prompt if it
// needs one and waits until the turn is over. A caller that gives up
// aborts the session.
func (s *Server) awaitTurn(ctx context.Context, req SessionRequest, t turn, log zerolog.Logger, onProgress func(Progress)) ([]ocMessage, *sessionRun, error) {
	dir, sid := req.Directory, t.sid
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	w := s.watch(wctx, dir, sid)
	select { // subscribe before prompting, so no session.error is missed
	case <-w.ready:
	case <-time.After(3 * time.Second):
		log.Warn().Msg("opencode event stream not connected; polling only")
	case <-ctx.Done():
	}

	r := &sessionRun{s: s, dir: dir, sid: sid, w: w, onProgress: onProgress, baseline: t.baseline, answered: map[string]bool{}, lastRetry: -1}
	if t.needPrompt && ctx.Err() == nil {
		if err := s.promptAsync(ctx, dir, sid, req.Agent, req.Model, t.prompt); err != nil {
			if ctx.Err() == nil {
				return nil, r, fmt.Errorf("prompt session %s: %w", sid, err)
			}
		} else {
			onProgress(Progress{SessionID: sid, Phase: "prompted"})
		}
	}
	msgs, err := r.await(ctx)
	if err == nil {
		return msgs, r, nil
	}
	if ctx.Err() == nil {
		return nil, r, err
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if aerr := s.Abort(actx, dir, sid); aerr != nil {
		log.Warn().Err(aerr).Msg("abort after cancellation failed")
	} else {
		log.Info().Msg("session aborted: the caller gave up")
	}
	return nil, r, ctx.Err()
}

// finishTurn builds the turn's result: its final text and usage, with
// the child sessions it delegated to counted in.
func (s *Server) finishTurn(ctx context.Context, dir string, t turn, msgs []ocMessage, log zerolog.Logger) SessionResult {
	usageFrom := t.usageFrom
	if usageFrom < 0 {
		usageFrom = t.baseline
		if t.resumed {
			usageFrom = 0
		}
	}
	res := buildResult(t.sid, msgs, t.baseline, usageFrom)
	res.Resumed = t.resumed
	if kids, err := s.children(ctx, dir, t.sid, turnStart(msgs, usageFrom)); err != nil {
		log.Warn().Err(err).Msg("child sessions not counted")
	} else {
		res.Children = kids
		for _, k := range kids {
			res.Usage.plus(k.Usage)
		}
	}
	return res
}

// sessionRun is the state of one RunSession's wait.
type sessionRun struct {
	s          *Server
	dir, sid   string
	w          *watcher
	onProgress func(Progress)
	baseline   int

	asked    []horizon.Ask
	answered map[string]bool

	lastProgress time.Time
	lastTool     string
	lastRetry    int // the retry attempt last reported; -1: not retrying
	usage        Usage
	lastAskCheck time.Time
}

// await polls (and wakes on events) until the turn that starts at baseline
// is over, and returns the session's messages.
func (r *sessionRun) await(ctx context.Context) ([]ocMessage, error) {
	s := r.s
	tick := time.NewTicker(s.pollInterval)
	defer tick.Stop()
	var (
		idleSince    time.Time // idle, and the turn not over
		confirmID    string    // last step asked for tools, session idle: since when
		confirmSince time.Time
		lastCheck    time.Time
		failures     int
	)
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.exited: // nil for Connect: never ready
			return nil, fmt.Errorf("%w (pid %d) while session %s ran: %v", ErrServerExited, s.pgid, r.sid, s.waitErr)
		case <-r.w.wake:
		case <-tick.C:
		}
		if gap := time.Since(lastCheck); gap < s.wakeGap {
			select { // streaming text wakes us per token; don't poll per token
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(s.wakeGap - gap):
			}
		}
		lastCheck = time.Now()

		st, err := s.status(ctx, r.dir, r.sid)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrServerExited) {
				return nil, err
			}
			if failures++; failures >= 10 {
				return nil, fmt.Errorf("session %s: %w", r.sid, err)
			}
			s.log.Warn().Err(err).Str("Session", r.sid).Msg("session status poll failed")
			continue
		}
		failures = 0
		if st.Type != "idle" {
			idleSince, confirmID = time.Time{}, ""
			if r.w.takeAsked() || !r.w.isHealthy() || time.Since(r.lastAskCheck) > 5*time.Second {
				r.answerPending(ctx)
			}
			phase := "running"
			if st.Type == "retry" {
				phase = "retry"
			}
			r.progress(ctx, phase, st.retry())
			continue
		}

		msgs, err := s.messages(ctx, r.dir, r.sid, 0)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrServerExited) {
				return nil, err
			}
			if failures++; failures >= 10 {
				return nil, fmt.Errorf("session %s: %w", r.sid, err)
			}
			continue
		}
		msgs = withoutNotes(msgs)
		switch outcome := turnOutcome(msgs, r.baseline); outcome {
		case turnFinished:
			return msgs, nil
		case turnFailed:
			return msgs, msgs[len(msgs)-1].Info.Error.asError(r.sid)
		case turnStopped:
			last := msgs[len(msgs)-1].Info.ID
			if confirmID != last {
				confirmID, confirmSince = last, time.Now()
			} else if time.Since(confirmSince) >= s.confirmIdle {
				return msgs, nil
			}
		default: // no reply yet
			if e := r.w.sessionError(); e != nil {
				return msgs, e.asError(r.sid)
			}
			if idleSince.IsZero() {
				idleSince = time.Now()
			} else if time.Since(idleSince) > s.idleGrace {
				return msgs, fmt.Errorf("session %s: idle for %s without a reply to the prompt (see the opencode log)", r.sid, s.idleGrace)
			}
		}
	}
}

// progress reports to onProgress when the running tool changed, when
// OpenCode starts, repeats or stops retrying a model call (an outage must
// show at once, not at the next periodic report), or every progressEvery.
func (r *sessionRun) progress(ctx context.Context, phase string, retry *Retry) {
	tool := r.w.currentTool()
	periodic := time.Since(r.lastProgress) >= r.s.progressEvery
	retryN := -1
	if retry != nil {
		retryN = retry.Attempt
	}
	retryChanged := retryN != r.lastRetry
	r.lastRetry = retryN
	if !periodic && !retryChanged && tool == r.lastTool {
		return
	}
	if periodic {
		if sess, err := r.s.getSession(ctx, r.dir, r.sid); err == nil {
			r.usage = Usage{}
			r.usage.add(sess.Tokens, sess.Cost)
		}
		if !r.w.isHealthy() { // no events: read the running tool from the last message
			if msgs, err := r.s.messages(ctx, r.dir, r.sid, 1); err == nil && len(msgs) > 0 {
				tool = runningTool(msgs[0])
			}
		}
		r.lastProgress = time.Now()
	}
	if tool != "" && tool != r.lastTool {
		phase = "tool"
	}
	r.lastTool = tool
	r.onProgress(Progress{SessionID: r.sid, Phase: phase, Tool: tool, Usage: r.usage, Retry: retry})
}

func runningTool(m ocMessage) string {
	for i := len(m.Parts) - 1; i >= 0; i-- {
		p := m.Parts[i]
		if p.Type == "tool" && p.State != nil && (p.State.Status == "running" || p.State.Status == "pending") {
			return p.Tool
		}
	}
	return ""
}

// answerPending rejects the session's pending permission requests and
// questions: nobody is there to answer, and an unanswered one hangs the run.
func (r *sessionRun) answerPending(ctx context.Context) {
	r.lastAskCheck = time.Now()
	var perms []struct {
		ID         string   `json:"id"`
		SessionID  string   `json:"sessionID"`
		Permission string   `json:"permission"`
		Patterns   []string `json:"patterns"`
	}
	if err := r.s.call(ctx, http.MethodGet, "/permission", dirQuery(r.dir), nil, &perms); err != nil {
		r.s.log.Debug().Err(err).Msg("list permissions")
	}
	for _, p := range perms {
		if p.SessionID != r.sid || r.answered[p.ID] {
			continue
		}
		r.answered[p.ID] = true
		ask := horizon.Ask{Kind: horizon.AskPermission, Text: strings.TrimSpace(p.Permission + ": " + strings.Join(p.Patterns, ", "))}
		what := ask.String()
		err := r.s.call(ctx, http.MethodPost, "/permission/"+url.PathEscape(p.ID)+"/reply", dirQuery(r.dir),
			map[string]string{"reply": "reject", "message": rejectMessage}, nil)
		r.s.log.Warn().Err(err).Str("Session", r.sid).Str("Asked", what).Msg("rejected a permission request: runs are unattended")
		r.asked = append(r.asked, ask)
	}
	var qs []struct {
		ID        string `json:"id"`
		SessionID string `json:"sessionID"`
		Questions []struct {
			Question string `json:"question"`
			Header   string `json:"header"`
		} `json:"questions"`
	}
	if err := r.s.call(ctx, http.MethodGet, "/question", dirQuery(r.dir), nil, &qs); err != nil {
		r.s.log.Debug().Err(err).Msg("list questions")
	}
	for _, q := range qs {
		if q.SessionID != r.sid || r.answered[q.ID] {
			continue
		}
		r.answered[q.ID] = true
		var texts []string
		for _, qq := range q.Questions {
			texts = append(texts, qq.Question)
		}
		ask := horizon.Ask{Kind: horizon.AskQuestion, Text: strings.Join(texts, " / ")}
		what := ask.String()
		err := r.s.call(ctx, http.MethodPost, "/question/"+url.PathEscape(q.ID)+"/reject", dirQuery(r.dir), nil, nil)
		r.s.log.Warn().Err(err).Str("Session", r.sid).Str("Asked", what).Msg("rejected a question: runs are unattended")
		r.asked = append(r.asked, ask)
	}
}

// deniedRule is how OpenCode words a tool call its permission rules deny.
const deniedRule = "rule which prevents you from using this specific tool call"

// deniedCalls are the tool calls of the turn at baseline that the agent's
// permissions denied (a deny rule answers at once, without a request
// horizon could see), and its calls to the question tool when the agent
// is not offered it: the model wanted to ask, and that is worth knowing.
func deniedCalls(msgs []ocMessage, baseline int) []horizon.Ask {
	var out []horizon.Ask
	for _, m := range msgs[min(max(baseline, 0), len(msgs)):] {
		if m.Info.Role != "assistant" {
			continue
		}
		for _, p := range m.Parts {
			if p.Type != "tool" || p.State == nil {
				continue
			}
			switch {
			case p.State.Status == "error" && strings.Contains(p.State.Error, deniedRule):
				out = append(out, horizon.Ask{Kind: horizon.AskPermission, Text: strings.TrimSpace(p.Tool + ": " + callSubject(p.State.Input))})
			case p.Tool == "invalid" && p.State.Input["tool"] == "question":
				out = append(out, horizon.Ask{Kind: horizon.AskQuestion, Text: "(the question tool is not offered; the question was not kept)"})
			}
		}
	}
	return out
}

// callSubject is what a tool call was about, from its input: the file,
// command, pattern, URL or subagent it named.
func callSubject(in map[string]any) string {
	for _, k := range []string{"filePath", "path", "command", "pattern", "url", "subagent_type"} {
		if v, ok := in[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// ---- turn evaluation (pure) ----

type turnState int

const (
	turnPending  turnState = iota // no reply yet (or still being written)
	turnFinished                  // last step completed and did not ask for tools
	turnFailed                    // last step completed with an error
	turnStopped                   // last step asked for tools, yet the session is idle
)

// turnOutcome classifies an idle session's messages for the turn whose
// first message is msgs[baseline] (the user message of the turn).
func turnOutcome(msgs []ocMessage, baseline int) turnState {
	if baseline < 0 || baseline >= len(msgs) {
		return turnPending
	}
	hasUser := false
	for _, m := range msgs[baseline:] {
		if m.Info.Role == "user" {
			hasUser = true
			break
		}
	}
	last := msgs[len(msgs)-1].Info
	switch {
	case !hasUser || last.Role != "assistant":
		return turnPending
	case last.Error != nil:
		return turnFailed
	case last.Time.Completed == 0:
		return turnPending
	case last.Finish == "tool-calls" || last.Finish == "":
		return turnStopped
	default:
		return turnFinished
	}
}

// userIndexWith is the index of the first user message whose text holds
// marker, or -1.
func userIndexWith(msgs []ocMessage, marker string) int {
	for i, m := range msgs {
		if m.Info.Role != "user" {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == "text" && strings.Contains(p.Text, marker) {
				return i
			}
		}
	}
	return -1
}

func lastUserIndex(msgs []ocMessage) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Info.Role == "user" {
			return i
		}
	}
	return -1
}

// finalText is the text of the turn's last assistant message, or, when that
// step wrote none, of the latest one in the turn that did.
func finalText(msgs []ocMessage, baseline int) string {
	for i := len(msgs) - 1; i >= max(baseline, 0); i-- {
		m := msgs[i]
		if m.Info.Role == "user" {
			break
		}
		if m.Info.Role != "assistant" {
			continue
		}
		var b strings.Builder
		for _, p := range m.Parts {
			if p.Type == "text" && !p.Ignored && !p.Synthetic {
				b.WriteString(p.Text)
			}
		}
		if t := b.String(); strings.TrimSpace(t) != "" {
			return t
		}
	}
	return ""
}

// buildResult sums usage over msgs[usageFrom:] and takes the final text of
// the turn at baseline.
func buildResult(sid string, msgs []ocMessage, baseline, usageFrom int) SessionResult {
	res := SessionResult{SessionID: sid, Messages: len(msgs), Text: finalText(msgs, baseline)}
	for i := max(usageFrom, 0); i < len(msgs); i++ {
		if m := msgs[i].Info; m.Role == "assistant" {
			res.Usage.add(m.Tokens, m.Cost)
		}
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i].Info; m.Role == "assistant" {
			res.Finish = m.Finish
			res.Context = int64(m.Tokens.Input + m.Tokens.Output + m.Tokens.Reasoning)
			break
		}
	}
	return res
}

// ---- event stream ----

// watcher follows GET /event for one session. It only wakes the poll loop
// and remembers the few things polling cannot see; it never decides.
type watcher struct {
	sid   string
	wake  chan struct{}
	ready chan struct{} // closed once the stream first connected or failed

	mu      sync.Mutex
	healthy bool
	tool    string
	asked   bool
	sessErr *ocError
}

func (s *Server) watch(ctx context.Context, dir, sid string) *watcher {
	w := &watcher{sid: sid, wake: make(chan struct{}, 1), ready: make(chan struct{})}
	go func() {
		var once sync.Once
		ready := func() { once.Do(func() { close(w.ready) }) }
		defer ready()
		backoff := 200 * time.Millisecond
		for ctx.Err() == nil {
			err := w.stream(ctx, s, dir, ready)
			w.setHealthy(false)
			ready()
			if ctx.Err() != nil || s.gone() {
				return
			}
			s.log.Debug().Err(err).Str("Session", sid).Msg("opencode event stream ended; reconnecting")
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
		}
	}()
	return w
}

func (w *watcher) stream(ctx context.Context, s *Server, dir string, ready func()) error {
	req, err := s.newRequest(ctx, http.MethodGet, "/event", dirQuery(dir), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := s.stream.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /event: HTTP %d", resp.StatusCode)
	}
	w.setHealthy(true)
	ready()
	rd := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := rd.ReadBytes('\n')
		if len(line) > 0 {
			w.handle(line)
		}
		if err != nil {
			return err
		}
	}
}

var dataPrefix = []byte("data:")

func (w *watcher) handle(line []byte) {
	if !bytes.HasPrefix(line, dataPrefix) || !bytes.Contains(line, []byte(w.sid)) {
		return
	}
	var ev struct {
		Type       string `json:"type"`
		Properties struct {
			SessionID string   `json:"sessionID"`
			Error     *ocError `json:"error"`
			Part      *ocPart  `json:"part"`
		} `json:"properties"`
	}
	if json.Unmarshal(bytes.TrimSpace(line[len(dataPrefix):]), &ev) != nil || ev.Properties.SessionID != w.sid {
		return
	}
	w.mu.Lock()
	switch ev.Type {
	case "session.error":
		if w.sessErr == nil && ev.Properties.Error != nil {
			w.sessErr = ev.Properties.Error
		}
	case "message.part.updated":
		if p := ev.Properties.Part; p != nil && p.Type == "tool" && p.State != nil {
			switch p.State.Status {
			case "pending", "running":
				w.tool = p.Tool
			default:
				if w.tool == p.Tool {
					w.tool = ""
				}
			}
		}
	case "permission.asked", "question.asked", "permission.v2.asked", "question.v2.asked":
		w.asked = true
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watcher) setHealthy(v bool) { w.mu.Lock(); w.healthy = v; w.mu.Unlock() }
func (w *watcher) isHealthy() bool   { w.mu.Lock(); defer w.mu.Unlock(); return w.healthy }
func (w *watcher) currentTool() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tool
}
func (w *watcher) sessionError() *ocError {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sessErr
}
func (w *watcher) takeAsked() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	a := w.asked
	w.asked = false
	return a
}
