package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/horizon/horizon/internal/child"
)

// command runs a shell command with the event JSON on its stdin.
type command struct{ line string }

// name shows the program only: the rest of a command line (a curl with a
// token) may be a secret, and names end up in logs and workflow history.
func (c *command) name() string {
	f := strings.Fields(c.line)
	if len(f) == 0 {
		return "command"
	}
	name := "command " + oneLine(f[0], 60)
	if len(f) > 1 {
		name += " …"
	}
	return name
}

// deliver runs the command through internal/child, like every process the
// daemon starts: its own process group, killed whole when the attempt's
// context ends (notify.timeout), so a command that hangs or leaves a
// hanging child behind costs no more than the timeout; and dying with the
// daemon, reaped by a restarted one, so a daemon killed mid-delivery
// leaves no command behind. Stdin and output are files, not pipes: a
// background child that keeps them open cannot hold the attempt up after
// the command exits (child.Run then ends what is left of its group).
func (c *command) deliver(ctx context.Context, ev Event, body []byte) (string, error) {
	in, err := tempWith(append(append([]byte(nil), body...), '\n'))
	if err != nil {
		return "", fmt.Errorf("stdin file: %w", err)
	}
	defer os.Remove(in.Name())
	defer in.Close()
	out, err := os.CreateTemp("", "horizon-notify-out-*")
	if err != nil {
		return "", fmt.Errorf("output file: %w", err)
	}
	defer os.Remove(out.Name())
	defer out.Close()

	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", c.line)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, out
	cmd.Env = append(os.Environ(),
		"HORIZON_EVENT_ID="+ev.ID,
		"HORIZON_EVENT_KIND="+string(ev.Kind),
		"HORIZON_EVENT_RUN="+ev.RunID,
		"HORIZON_EVENT_TITLE="+ev.Title,
		"HORIZON_EVENT_TEXT="+ev.Text,
	)
	cmd.WaitDelay = 2 * time.Second
	runErr := child.Run(cmd) // CommandContext: cancelling kills the whole group
	answer := "exit " + fmt.Sprint(cmd.ProcessState.ExitCode())
	if tail := oneLine(tailOf(out, 1024), 300); tail != "" {
		answer += ": " + tail
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return answer, fmt.Errorf("command killed (its process group) after the timeout: %w", ctx.Err())
		}
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			return answer, fmt.Errorf("command failed: %s", answer)
		}
		return answer, fmt.Errorf("run command: %w", runErr)
	}
	return answer, nil
}

func tempWith(b []byte) (*os.File, error) {
	f, err := os.CreateTemp("", "horizon-notify-in-*")
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

func tailOf(f *os.File, n int64) string {
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-n, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	return string(buf)
}
