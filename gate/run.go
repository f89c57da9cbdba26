package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Verdict is the outcome of a gate run.
type Verdict string

const (
	Pass    Verdict = "pass"    // the gate exited 0
	Fail    Verdict = "fail"    // the gate exited non-zero (or died of a signal it was not sent by Run)
	Timeout Verdict = "timeout" // the gate overran Options.Timeout and was killed
	Error   Verdict = "error"   // the gate could not be started, or ctx was cancelled
)

// Defaults for zero Options fields.
const (
	DefaultTimeout   = 10 * time.Minute
	DefaultKillGrace = 5 * time.Second
	DefaultMaxOutput = 256 << 10
)

const (
	// reapWait bounds how long Run waits, after SIGKILL, for the group to
	// disappear.
	reapWait = 5 * time.Second
	// drainWait bounds how long Run waits for the output pipe to close once
	// the group is gone; only processes that left the group can hold it.
	drainWait = 500 * time.Millisecond
	// maxLine bounds a line handed to OnOutput; longer lines are split.
	maxLine = 64 << 10
)

// Options configure Run. Zero values mean the documented defaults.
type Options struct {
	Dir       string        // working directory (the lane)
	Timeout   time.Duration // hard wall clock; 0 → DefaultTimeout
	KillGrace time.Duration // SIGTERM → SIGKILL grace; 0 → DefaultKillGrace
	MaxOutput int           // bytes kept of combined stdout+stderr, head and tail halves; 0 → DefaultMaxOutput
	Env       []string      // base environment; nil → os.Environ(); always passed through ScrubEnv
	AllowEnv  []string      // names (globs like "MY_*" allowed) exempt from scrubbing
	// OnOutput, if set, receives each line of output (without its newline,
	// made valid UTF-8, split at 64 KiB) as it is produced. It runs on the
	// goroutine that drains the gate's output, so a slow callback slows the
	// gate down rather than losing lines.
	OnOutput func(line string)
	// Start, if set, starts the gate's leader instead of cmd.Start, e.g.
	// so that it dies with a daemon and is recorded for reaping
	// (internal/child.StartFunc). The command arrives set to lead its own
	// process group, which Start must keep. Run calls done once the group
	// is gone and the leader has been waited for.
	Start func(cmd *exec.Cmd) (done func(), err error)
}

// Result is what a gate run produced.
type Result struct {
	Verdict     Verdict       `json:"verdict"`
	ExitCode    int           `json:"exit_code"` // -1 when killed by a signal or not started
	Signal      string        `json:"signal,omitempty"`
	Duration    time.Duration `json:"duration"`
	Output      string        `json:"output"`         // head + "\n…[N bytes omitted]…\n" + tail, valid UTF-8
	OutputBytes int64         `json:"output_bytes"`   // total bytes produced
	Err         string        `json:"err,omitempty"`  // for verdict error: what went wrong
	PGID        int           `json:"pgid,omitempty"` // process group of the run; gone when Run returns
}

// Run executes the gate and judges it by its exit status.
//
// The command runs in its own process group with cwd opts.Dir, stdin
// /dev/null, the scrubbed environment, and stdout and stderr combined into
// one bounded buffer. On timeout or ctx cancellation the whole group gets
// SIGTERM, then SIGKILL after KillGrace; after a normal exit of the gate any
// member it left behind (a backgrounded server, a sleeper) is SIGKILLed. Run
// returns once no live process of the group remains. Processes that left the
// group (setsid) are out of reach; Run stops reading their output after a
// short drain.
//
// Verdicts: exit 0 pass, non-zero fail, overrun timeout; could not start or
// ctx cancelled → error, with Err saying why.
func Run(ctx context.Context, g Gate, opts Options) Result {
	start := time.Now()
	res := run(ctx, g, withDefaults(opts))
	res.Duration = time.Since(start)
	return res
}

func withDefaults(o Options) Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.KillGrace <= 0 {
		o.KillGrace = DefaultKillGrace
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	return o
}

func errorResult(format string, args ...any) Result {
	return Result{Verdict: Error, ExitCode: -1, Err: fmt.Sprintf(format, args...)}
}

// run is start, wait for the gate or its stop, stop the group, verdict.
func run(ctx context.Context, g Gate, opts Options) Result {
	p, res, ok := start(ctx, g, opts)
	if !ok {
		return res
	}
	timer := time.NewTimer(opts.Timeout)
	defer timer.Stop()
	stopped := "" // why Run stopped the gate: "timeout", or the ctx error
	select {
	case <-p.exited:
		p.leaderUp = false
	case <-timer.C:
		stopped = "timeout"
	case <-ctx.Done():
		stopped = ctx.Err().Error()
	}
	waitErr, survivors := p.stopGroup(stopped != "", opts.KillGrace)
	return p.verdict(stopped, waitErr, survivors, opts.Timeout)
}

// started is a gate process running in its own group, with its output
// being drained.
type started struct {
	cmd  *exec.Cmd
	pgid int
	pr   *os.File // read end of the output pipe
	buf  *capBuffer
	// drained closes once the output pipe is drained.
	drained <-chan struct{}
	// exited closes when the leader has exited. On Linux it is not reaped
	// yet: as a zombie it keeps the group's ID reserved, so the group kills
	// cannot hit an unrelated group that reused the number.
	exited   <-chan struct{}
	reap     func() error
	leaderUp bool
	done     func() // from Options.Start; nil when started by cmd.Start
}

// start checks the gate and its lane, then starts it in its own process
// group with its output drained into a bounded buffer. When it cannot
// start, ok is false and res says why.
func start(ctx context.Context, g Gate, opts Options) (p *started, res Result, ok bool) {
	if len(g.Command) == 0 || g.Command[0] == "" {
		return nil, errorResult("gate has no command"), false
	}
	if err := ctx.Err(); err != nil {
		return nil, errorResult("not started: %v", err), false
	}
	if opts.Dir != "" {
		if st, err := os.Stat(opts.Dir); err != nil {
			return nil, errorResult("cannot start gate %q: lane directory: %v", g.String(), err), false
		} else if !st.IsDir() {
			return nil, errorResult("cannot start gate %q: lane directory %s is not a directory", g.String(), opts.Dir), false
		}
	}
	env := ScrubEnv(opts.Env, opts.AllowEnv)
	argv0, err := lookPath(g.Command[0], env, opts.Dir)
	if err != nil {
		return nil, errorResult("cannot start gate %q: %v", g.String(), err), false
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, errorResult("cannot start gate: pipe: %v", err), false
	}
	cmd := &exec.Cmd{
		Path:        argv0,
		Args:        append([]string(nil), g.Command...),
		Dir:         opts.Dir,
		Env:         env,
		Stdout:      pw, // one *os.File for both: exec passes it straight through, ordering kept
		Stderr:      pw,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	done, err := startRetryingBusy(cmd, opts.Start)
	if err != nil {
		pr.Close()
		pw.Close()
		return nil, errorResult("cannot start gate %q: %v%s", g.String(), err, startHint(err, argv0)), false
	}
	pw.Close() // the group holds the write end now; EOF once every holder is gone

	p = &started{cmd: cmd, pgid: cmd.Process.Pid, pr: pr, buf: newCapBuffer(opts.MaxOutput), leaderUp: true, done: done}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		drain(pr, p.buf, opts.OnOutput)
	}()
	p.drained = drained
	p.exited, p.reap = watchLeader(cmd)
	return p, Result{}, true
}

// stopGroup ends the gate's process group and reaps its leader. When
// terminate is set (timeout, cancellation) the group first gets SIGTERM
// and KillGrace to exit; then whatever is left goes with SIGKILL: the
// leader after an overrun, members left behind after a normal exit,
// TERM-ignoring grandchildren. It returns the leader's wait error and
// whether live members survived, and closes the output pipe.
func (p *started) stopGroup(terminate bool, grace time.Duration) (waitErr error, survivors bool) {
	if terminate {
		_ = syscall.Kill(-p.pgid, syscall.SIGTERM)
		_ = syscall.Kill(-p.pgid, syscall.SIGCONT) // a stopped member cannot act on TERM
		p.awaitTerm(grace)
	}
	_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	if p.leaderUp {
		<-p.exited
	}
	// Reap the leader first: then a group without leftovers answers ESRCH at
	// once, and only leftovers cost a scan of /proc.
	waitErr = p.reap()
	survivors = awaitGroupGone(p.pgid, reapWait)
	if p.done != nil {
		p.done()
	}

	select {
	case <-p.drained:
	case <-time.After(drainWait):
		// Only a process that left the group can still hold the pipe.
		_ = p.pr.SetReadDeadline(time.Now())
		<-p.drained
	}
	p.pr.Close()
	return waitErr, survivors
}

// awaitTerm waits, for at most grace, until the leader has exited and the
// group has no live member.
func (p *started) awaitTerm(grace time.Duration) {
	exited := p.exited
	limit := time.NewTimer(grace)
	defer limit.Stop()
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-exited:
			p.leaderUp = false
			exited = nil // closed: stop selecting it
		case <-poll.C:
			if !p.leaderUp && !groupAlive(p.pgid) {
				return
			}
		case <-limit.C:
			return
		}
	}
}

// verdict judges the finished run: why Run stopped it ("" when it exited
// by itself), the leader's wait error and whether members survived.
func (p *started) verdict(stopped string, waitErr error, survivors bool, timeout time.Duration) Result {
	res := Result{
		ExitCode:    -1,
		PGID:        p.pgid,
		Output:      p.buf.String(),
		OutputBytes: p.buf.total,
	}
	if ps := p.cmd.ProcessState; ps != nil {
		res.ExitCode = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal().String()
		}
	}
	switch {
	case stopped == "timeout":
		res.Verdict = Timeout
		res.Err = fmt.Sprintf("gate overran its %s timeout and was killed", timeout)
	case stopped != "":
		res.Verdict = Error
		res.Err = "gate stopped: " + stopped
	case res.ExitCode == 0 && waitErr == nil:
		res.Verdict = Pass
	case res.ExitCode == -1 && res.Signal == "" && waitErr != nil:
		res.Verdict = Error
		res.Err = "waiting for gate: " + waitErr.Error()
	default:
		res.Verdict = Fail
	}
	if survivors {
		note := fmt.Sprintf("process group %d still had live members %s after SIGKILL", p.pgid, reapWait)
		if res.Err == "" {
			res.Err = note
		} else {
			res.Err += "; " + note
		}
	}
	return res
}

// drain copies the gate's output into buf and, line by line, to onLine.
func drain(r io.Reader, buf *capBuffer, onLine func(string)) {
	chunk := make([]byte, 32<<10)
	var line []byte
	for {
		n, err := r.Read(chunk)
		if n > 0 {
			p := chunk[:n]
			buf.Write(p)
			if onLine != nil {
				for len(p) > 0 {
					i := bytes.IndexByte(p, '\n')
					if i < 0 {
						line = append(line, p...)
						for len(line) > maxLine {
							onLine(strings.ToValidUTF8(string(line[:maxLine]), "\uFFFD"))
							line = append(line[:0], line[maxLine:]...)
						}
						break
					}
					line = append(line, p[:i]...)
					for len(line) > maxLine {
						onLine(strings.ToValidUTF8(string(line[:maxLine]), "\uFFFD"))
						line = append(line[:0], line[maxLine:]...)
					}
					onLine(strings.ToValidUTF8(string(bytes.TrimSuffix(line, []byte{'\r'})), "\uFFFD"))
					line = line[:0]
					p = p[i+1:]
				}
			}
		}
		if err != nil {
			if onLine != nil && len(line) > 0 {
				onLine(strings.ToValidUTF8(string(line), "\uFFFD"))
			}
			return
		}
	}
}

// startRetryingBusy starts cmd (with start, when set), retrying briefly on
// ETXTBSY: a script written just before (the lead copies the gate script out
// of the lane) can still be open for writing in a child forked concurrently
// by another goroutine.
func startRetryingBusy(cmd *exec.Cmd, start func(*exec.Cmd) (func(), error)) (done func(), err error) {
	if start == nil {
		start = func(c *exec.Cmd) (func(), error) { return nil, c.Start() }
	}
	delay := 5 * time.Millisecond
	for i := 0; ; i++ {
		done, err := start(cmd)
		if err == nil || !errors.Is(err, syscall.ETXTBSY) || i == 8 {
			return done, err
		}
		time.Sleep(delay)
		delay *= 2
		// exec.Cmd cannot be started twice; rebuild it from the same fields.
		*cmd = exec.Cmd{Path: cmd.Path, Args: cmd.Args, Dir: cmd.Dir, Env: cmd.Env,
			Stdout: cmd.Stdout, Stderr: cmd.Stderr, SysProcAttr: cmd.SysProcAttr}
	}
}

func startHint(err error, path string) string {
	if errors.Is(err, fs.ErrPermission) {
		return " (is it executable? chmod +x " + path + ")"
	}
	return ""
}

// lookPath resolves file like a shell would, but against the PATH of the
// gate's (scrubbed) environment rather than horizon's own. A name with a
// slash is taken relative to dir.
func lookPath(file string, env []string, dir string) (string, error) {
	if strings.Contains(file, "/") {
		if !filepath.IsAbs(file) && dir != "" {
			file = filepath.Join(dir, file)
		}
		return file, nil
	}
	pathEnv := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v // last one wins, as in exec
		}
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" || !filepath.IsAbs(d) {
			continue // "." and relative entries would make the lane choose the binary
		}
		p := filepath.Join(d, file)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: executable file not found in the gate's PATH (%q)", file, pathEnv)
}
