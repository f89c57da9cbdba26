package applier

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/horizon/horizon/horizon"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/child"
	"github.com/horizon/horizon/ladder"
)

// Options configure a Runner.
type Options struct {
	// Bins are configured CLI paths by kind ("": found like every tool).
	Bins map[Kind]string
	// StateDir is horizon's own directory for the appliers: session logs,
	// the settings and key files it hands the CLIs.
	StateDir string
	// EnvAllow lists variables the agent's shell may see although they
	// look secret (agent.env_allow).
	EnvAllow []string
	// Price prices a route's tokens when the CLI reports no cost.
	Price func(route string) ladder.Price
	Log   zerolog.Logger
}

// Runner runs applier sessions. It satisfies the RunSession half of the
// daemon's session runtime.
type Runner struct {
	o Options

	mu      sync.Mutex
	logs    map[string]string // session ID → its log
	running map[string]bool   // sessions a RunSession holds
}

// New is a Runner with o.
func New(o Options) *Runner {
	if o.Price == nil {
		o.Price = func(string) ladder.Price { return ladder.Price{} }
	}
	return &Runner{o: o, logs: map[string]string{}, running: map[string]bool{}}
}

// driver is what differs between the CLIs: how to invoke one and how to
// read what it prints.
type driver interface {
	// command is the invocation of one turn: fresh (sid may be preset) or
	// resuming sid. The prompt goes on stdin.
	command(inv invocation) (args []string, env []string, err error)
	// event reads one line the CLI printed.
	event(line []byte) event
	// brief is the prompt a fresh session is given.
	brief(inv invocation, prompt string) string
	// readOnly says the role's agent must not write (auditor, lead, ...).
	readOnly(agentName string) bool
}

// invocation is one run of a CLI for a session turn.
type invocation struct {
	Model    string
	Dir      string
	Agent    string
	Session  string // the session ID to resume, or (Claude) to create
	Resume   bool
	ReadOnly bool
}

// event is one line of a CLI's JSON output, read.
type event struct {
	Session string // the session/thread ID, when the line names it
	Phase   string // running | tool | done ("": nothing to report)
	Tool    string
	Text    string // assistant text, when the line carries some
	// Final says the turn ended (Claude Code's result, Codex's
	// turn.completed or turn.failed); Err is set when it ended in error.
	Final bool
	Err   *agent.SessionError
	Retry *agent.Retry
	Usage agent.Usage
	// Priced says Usage holds tokens but no cost: the route's price
	// costs them (Codex).
	Priced bool
	Asked  []horizon.Ask
}

// marker is the line horizon writes to a session log before each
// invocation, so a reader knows where each run of the CLI begins.
type marker struct {
	Horizon string    `json:"horizon"` // "invocation"
	At      time.Time `json:"at"`
	Session string    `json:"session,omitempty"`
	Resume  bool      `json:"resume"`
	// Prompt is the head of what the invocation was asked (the watchdog's
	// transcript shows it).
	Prompt string `json:"prompt,omitempty"`
}

// logPath is the session log of a session title (each activity's session
// has a unique title: run, feature, attempt, role).
func (r *Runner) logPath(k Kind, title string) string {
	sum := sha256.Sum256([]byte(title))
	return filepath.Join(r.o.StateDir, "sessions", string(k)+"-"+hex.EncodeToString(sum[:12])+".jsonl")
}

func (r *Runner) driverFor(k Kind) driver {
	if k == Claude {
		return claude{stateDir: r.o.StateDir, envAllow: r.o.EnvAllow}
	}
	return codex{envAllow: r.o.EnvAllow}
}

// RunSession runs one turn of an applier session (req.Model names the
// applier) and returns once the CLI ended it. With req.ResumeSessionID,
// or a session log from an earlier attempt, a finished turn is returned
// from the log and an unfinished one continued in the same session.
func (r *Runner) RunSession(ctx context.Context, req agent.SessionRequest, onProgress func(agent.Progress)) (agent.SessionResult, error) {
	if onProgress == nil {
		onProgress = func(agent.Progress) {}
	}
	kind, model := Of(req.Model)
	if kind == OpenCode {
		return agent.SessionResult{}, fmt.Errorf("applier session: route %q names no applier", req.Model)
	}
	if req.Directory == "" || !filepath.IsAbs(req.Directory) {
		return agent.SessionResult{}, fmt.Errorf("applier session: directory %q is not an absolute path", req.Directory)
	}
	if req.Turn != "" {
		return agent.SessionResult{}, fmt.Errorf("applier session: %s runs one turn per session; loops run on OpenCode routes", kind)
	}
	bin, err := Find(kind, r.o.Bins[kind])
	if err != nil {
		return agent.SessionResult{}, err
	}
	if kind == Codex {
		bin = nativeCodex(bin)
	}
	d := r.driverFor(kind)
	logPath := r.logPath(kind, cmpTitle(req))
	past, err := readLog(logPath, d)
	if err != nil {
		return agent.SessionResult{}, err
	}
	log := r.o.Log.With().Str("Applier", string(kind)).Str("Model", model).Str("Directory", req.Directory).Logger()
	sid := firstNonEmpty(past.session, req.ResumeSessionID)
	r.register(sid, logPath)
	if past.finished() && !past.wakes() {
		// The turn ended before the attempt that ran it could say so.
		res := past.result(r.o.Price(req.Model))
		res.Resumed = true
		onProgress(agent.Progress{SessionID: res.SessionID, Phase: "done", Usage: res.Usage})
		log.Info().Str("Session", res.SessionID).Msg("applier turn had finished; returned from its log")
		return res, nil
	}
	inv := invocation{Model: model, Dir: req.Directory, Agent: req.Agent, ReadOnly: d.readOnly(req.Agent)}
	prompt := req.Prompt
	switch {
	case sid != "" && past.started:
		inv.Session, inv.Resume = sid, true
		prompt = agent.ContinuationPrompt
		if past.finished() {
			prompt = "" // woken after its report: the notes are the turn
		}
		if notes := past.notesPrompt(); notes != "" {
			prompt = strings.TrimSpace(notes + "\n\n" + prompt)
		}
	case kind == Claude:
		// Claude Code takes the ID it is given: the heartbeat has it
		// before the CLI runs.
		inv.Session = newUUID()
	}
	if !inv.Resume {
		prompt = d.brief(inv, prompt)
	}
	if inv.Session != "" {
		onProgress(agent.Progress{SessionID: inv.Session, Phase: phaseOf(inv.Resume)})
	}
	resumed := inv.Resume
	held := inv.Session
	r.setRunning(held, logPath, d, true)
	defer func() {
		if held != "" {
			r.release(held)
		}
	}()
	for turn := 1; ; turn++ {
		cur, runErr := r.invoke(ctx, d, bin, inv, prompt, logPath, log, func(p agent.Progress) {
			if held == "" && p.SessionID != "" {
				held = p.SessionID // Codex names its thread in its first event
				r.setRunning(held, logPath, d, true)
			}
			onProgress(p)
		})
		if ctx.Err() != nil {
			return agent.SessionResult{SessionID: firstNonEmpty(cur.session, inv.Session)}, ctx.Err()
		}
		session := firstNonEmpty(cur.session, inv.Session, sid)
		if cur.final && cur.failed != nil {
			cur.failed.SessionID = session
			return agent.SessionResult{SessionID: session, Resumed: resumed, Asked: cur.asked}, cur.failed
		}
		if !cur.finished() {
			if runErr == nil {
				runErr = errors.New("the CLI ended without finishing the turn")
			}
			return agent.SessionResult{SessionID: session, Resumed: resumed}, &agent.SessionError{Name: "ApplierExited", Message: fmt.Sprintf("%s: %v%s", kind, runErr, cur.stderrNote())}
		}
		woken, err := r.setRunning(held, logPath, d, false)
		if err != nil {
			return agent.SessionResult{SessionID: session}, err
		}
		if woken != nil && turn < maxNoteTurns {
			// The advisor's blocker came in while the CLI worked: the
			// worker's next turn answers it.
			log.Info().Str("Session", session).Msg("applier session continues with the advisor's notes")
			inv.Session, inv.Resume, prompt = session, true, woken.notesPrompt()
			continue
		}
		r.release(held)
		held = ""
		all, err := readLog(logPath, d)
		if err != nil {
			return agent.SessionResult{SessionID: session}, err
		}
		res := all.result(r.o.Price(req.Model))
		res.Resumed = resumed
		onProgress(agent.Progress{SessionID: res.SessionID, Phase: "done", Usage: res.Usage})
		log.Info().Str("Session", res.SessionID).Float64("Cost", res.Usage.Cost).Int64("Input", res.Usage.Input).Int64("Output", res.Usage.Output).Msg("applier turn finished")
		return res, nil
	}
}

// maxNoteTurns bounds the turns one RunSession runs for waking notes.
const maxNoteTurns = 4

func phaseOf(resume bool) string {
	if resume {
		return "resumed"
	}
	return "created"
}

func cmpTitle(req agent.SessionRequest) string {
	if req.Title != "" {
		return req.Title
	}
	return req.Directory + "\n" + req.Prompt
}

// invoke runs the CLI once, appending every line it prints to the log
// before reading it.
func (r *Runner) invoke(ctx context.Context, d driver, bin string, inv invocation, prompt, logPath string, log zerolog.Logger, onProgress func(agent.Progress)) (*transcript, error) {
	cur := &transcript{}
	args, env, err := d.command(inv)
	if err != nil {
		return cur, err
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return cur, fmt.Errorf("applier session log: %w", err)
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return cur, fmt.Errorf("applier session log: %w", err)
	}
	defer f.Close()
	m, _ := json.Marshal(marker{Horizon: "invocation", At: time.Now().UTC(), Session: inv.Session, Resume: inv.Resume, Prompt: head(prompt, 2000)})
	if _, err := f.Write(append(m, '\n')); err != nil {
		return cur, fmt.Errorf("applier session log: %w", err)
	}
	cur.started = true
	cur.session = inv.Session

	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = inv.Dir
	cmd.Env = append(env, "PWD="+inv.Dir)
	cmd.Stdin = strings.NewReader(prompt)
	var stderr tail
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return cur, err
	}
	cmd.WaitDelay = 5 * time.Second
	p, err := child.Start(cmd)
	if err != nil {
		return cur, fmt.Errorf("start %s: %w", filepath.Base(bin), err)
	}
	defer p.Done()
	log.Info().Str("Session", inv.Session).Bool("Resume", inv.Resume).Bool("ReadOnly", inv.ReadOnly).Int("PGID", p.PGID()).Msg("applier started")
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if _, err := f.Write(append(bytes.Clone(line), '\n')); err != nil {
			log.Warn().Err(err).Msg("cannot append to the applier session log")
		}
		if line[0] != '{' {
			continue // a CLI's plain warning on stdout
		}
		ev := d.event(line)
		if cur.add(ev) {
			onProgress(agent.Progress{SessionID: cur.session, Phase: ev.Phase, Tool: ev.Tool, Retry: ev.Retry})
		}
	}
	werr := cmd.Wait()
	cur.stderr = stderr.String()
	if werr != nil && !cur.final {
		return cur, werr
	}
	return cur, nil
}

// transcript is what one or more invocations of a session printed, read.
type transcript struct {
	started bool // an invocation began (a marker was written)
	session string
	text    string
	final   bool
	failed  *agent.SessionError
	usage   agent.Usage // summed over the invocations that ended
	priced  bool        // usage tokens still need pricing
	asked   []horizon.Ask
	stderr  string
	// pending are the advisor's notes since the last invocation began;
	// delivered holds every note's message ID in the log.
	pending   []adviceLine
	delivered map[string]bool
}

// add takes in one event; it reports whether the event is worth telling.
func (t *transcript) add(ev event) bool {
	if ev.Session != "" {
		t.session = ev.Session
	}
	if ev.Text != "" {
		t.text = ev.Text
	}
	t.asked = append(t.asked, ev.Asked...)
	if ev.Final {
		t.final = true
		t.failed = ev.Err
		t.usage = t.usage.Plus(ev.Usage)
		t.priced = t.priced || ev.Priced
	}
	return ev.Phase != "" || ev.Retry != nil || ev.Session != ""
}

// finished says the session's last turn ended well: one that ended in an
// error (the provider failed, refused) is continued by the next attempt,
// not returned again.
func (t *transcript) finished() bool { return t.final && t.failed == nil }

// then is t followed by a later invocation's transcript.
func (t *transcript) then(next *transcript) *transcript {
	out := *next
	out.started = true
	out.session = firstNonEmpty(next.session, t.session)
	out.usage = t.usage.Plus(next.usage)
	out.priced = t.priced || next.priced
	out.asked = append(append([]horizon.Ask(nil), t.asked...), next.asked...)
	out.delivered = t.delivered
	return &out
}

// result is the session's result; price prices tokens a CLI did not cost.
func (t *transcript) result(price ladder.Price) agent.SessionResult {
	u := t.usage
	if t.priced {
		u.Cost = price.Cost(u.Input, u.CacheRead, u.Output+u.Reasoning)
	}
	return agent.SessionResult{SessionID: t.session, Text: t.text, Usage: u, Asked: t.asked, Finish: "stop", Context: u.Input + u.Output}
}

func (t *transcript) stderrNote() string {
	s := strings.TrimSpace(t.stderr)
	if s == "" {
		return ""
	}
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
	}
	return "; stderr: " + s
}

// readLog reads a session log left by earlier attempts: the session's ID,
// and whether its last invocation finished the turn (usage summed over
// every invocation that ended).
func readLog(path string, d driver) (*transcript, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &transcript{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("applier session log: %w", err)
	}
	defer f.Close()
	all := &transcript{}
	cur := &transcript{}
	delivered := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var m marker
		if json.Unmarshal(line, &m) == nil && m.Horizon != "" {
			switch m.Horizon {
			case "invocation":
				if cur.started {
					all = all.then(cur)
				}
				cur = &transcript{started: true, session: m.Session}
			case "advice":
				var a adviceLine
				if json.Unmarshal(line, &a) == nil {
					cur.pending = append(cur.pending, a)
					delivered[a.ID] = true
				}
			}
			continue
		}
		cur.add(d.event(line))
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("applier session log %s: %w", path, err)
	}
	if !cur.started {
		all.delivered = delivered
		return all, nil
	}
	// The usage of an invocation that never ended is unknown: the CLI
	// reports it at the end. Its ID and text carry on.
	out := all.then(cur)
	out.delivered = delivered
	return out, nil
}

// head is s cut at n bytes.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// tail keeps the last 8 KiB written to it.
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 8<<10 {
		t.b = t.b[len(t.b)-8<<10:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
