package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// scriptGate writes an executable shell script and returns the gate that
// runs it, with a lane directory to run it in.
func scriptGate(t *testing.T, body string) (Gate, string) {
	t.Helper()
	dir := t.TempDir()
	p := writeFile(t, dir, "verify.sh", "#!/bin/sh\n"+body, 0o755)
	return FromScript(p), dir
}

// requireGone polls until no process of group pgid exists (kill(-pgid, 0)
// returns ESRCH). Killed orphans are reaped by init, which may take a moment.
func requireGone(t *testing.T, pgid int) {
	t.Helper()
	require.NotZero(t, pgid)
	require.Eventually(t, func() bool {
		return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
	}, 10*time.Second, 5*time.Millisecond, "process group %d survived the gate", pgid)
}

func TestRunVerdicts(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		verdict   Verdict
		exit      int
		signal    string
		outputHas string
	}{
		{name: "exit 0 passes", body: "echo hello\n", verdict: Pass, exit: 0, outputHas: "hello\n"},
		{name: "exit 3 fails", body: "echo bad >&2; exit 3\n", verdict: Fail, exit: 3, outputHas: "bad\n"},
		{name: "exit 1 fails", body: "false\n", verdict: Fail, exit: 1},
		{name: "death by signal fails", body: "kill -SEGV $$\n", verdict: Fail, exit: -1, signal: "segmentation fault"},
		{name: "stdin is empty", body: "cat; echo done\n", verdict: Pass, outputHas: "done"},
		{name: "stdout and stderr combined in order", body: "echo one; echo two >&2; echo three\n", verdict: Pass, outputHas: "one\ntwo\nthree\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, dir := scriptGate(t, tt.body)
			res := Run(context.Background(), g, Options{Dir: dir, Timeout: 30 * time.Second})
			require.Equal(t, tt.verdict, res.Verdict, "err=%s output=%s", res.Err, res.Output)
			require.Equal(t, tt.exit, res.ExitCode)
			require.Equal(t, tt.signal, res.Signal)
			require.Contains(t, res.Output, tt.outputHas)
			require.Equal(t, int64(len(res.Output)), res.OutputBytes)
			require.Positive(t, res.Duration)
			requireGone(t, res.PGID)
		})
	}
}

func TestRunWorkingDirectory(t *testing.T) {
	g, dir := scriptGate(t, "pwd\n")
	res := Run(context.Background(), g, Options{Dir: dir})
	require.Equal(t, Pass, res.Verdict, res.Err)
	require.Equal(t, dir+"\n", res.Output)
}

func TestRunCannotStart(t *testing.T) {
	dir := t.TempDir()
	noExec := writeFile(t, dir, "verify.sh", okScript, 0o644)
	tests := []struct {
		name   string
		gate   Gate
		opts   Options
		errHas string
	}{
		{name: "empty command", gate: Gate{}, errHas: "no command"},
		{name: "missing binary", gate: Gate{Command: []string{"horizon-no-such-binary-xyz"}}, errHas: "not found"},
		{name: "binary not on the gate's PATH", gate: Gate{Command: []string{"true"}}, opts: Options{Env: []string{"PATH=/nonexistent"}}, errHas: "not found"},
		{name: "missing script", gate: FromScript(filepath.Join(dir, "nope.sh")), errHas: "no such file"},
		{name: "script without execute bit", gate: FromScript(noExec), errHas: "chmod +x"},
		{name: "missing lane directory", gate: Gate{Command: []string{"true"}}, opts: Options{Dir: filepath.Join(dir, "gone")}, errHas: "gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(context.Background(), tt.gate, tt.opts)
			require.Equal(t, Error, res.Verdict)
			require.Equal(t, -1, res.ExitCode)
			require.Contains(t, res.Err, tt.errHas)
		})
	}
}

func TestRunDetectedCommandUsesGatePath(t *testing.T) {
	bin := t.TempDir()
	writeFile(t, bin, "mytool", "#!/bin/sh\necho from-mytool \"$@\"\n", 0o755)
	env := []string{"PATH=" + bin + ":/usr/bin:/bin"}
	res := Run(context.Background(), Gate{Command: []string{"mytool", "a", "b"}}, Options{Dir: t.TempDir(), Env: env})
	require.Equal(t, Pass, res.Verdict, res.Err)
	require.Equal(t, "from-mytool a b\n", res.Output)
}

// stubborn is a gate whose leader and grandchildren all ignore SIGTERM.
const stubborn = `trap '' TERM
sleep 300 &
echo "child $!"
(trap '' TERM; sleep 300; echo never) &
echo "child $!"
echo started
wait
`

// childPIDs reads the "child N" lines a test gate prints.
func childPIDs(t *testing.T, out string) []int {
	var pids []int
	for _, line := range strings.Split(out, "\n") {
		if s, ok := strings.CutPrefix(line, "child "); ok {
			pid, err := strconv.Atoi(s)
			require.NoError(t, err)
			pids = append(pids, pid)
		}
	}
	require.NotEmpty(t, pids, "no child pids in output %q", out)
	return pids
}

func TestRunTimeoutKillsWholeGroup(t *testing.T) {
	t.Parallel()
	g, dir := scriptGate(t, stubborn)
	res := Run(context.Background(), g, Options{Dir: dir, Timeout: 300 * time.Millisecond, KillGrace: 200 * time.Millisecond})
	require.Equal(t, Timeout, res.Verdict)
	require.Equal(t, -1, res.ExitCode)
	require.Equal(t, "killed", res.Signal)
	require.Contains(t, res.Err, "timeout")
	require.Contains(t, res.Output, "started")
	require.NotContains(t, res.Output, "never")
	require.Less(t, res.Duration, 30*time.Second)
	requireGone(t, res.PGID)
	for _, pid := range childPIDs(t, res.Output) {
		require.Eventually(t, func() bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }, 10*time.Second, 5*time.Millisecond)
	}
}

func TestRunTimeoutLeaderObeysTermChildDoesNot(t *testing.T) {
	t.Parallel()
	g, dir := scriptGate(t, `trap 'echo got-term; exit 0' TERM
(trap '' TERM; exec sleep 300) &
echo "child $!"
while :; do sleep 0.05; done
`)
	res := Run(context.Background(), g, Options{Dir: dir, Timeout: 200 * time.Millisecond, KillGrace: 300 * time.Millisecond})
	require.Equal(t, Timeout, res.Verdict, "a gate that exits 0 on SIGTERM still timed out")
	requireGone(t, res.PGID)
	for _, pid := range childPIDs(t, res.Output) {
		require.Eventually(t, func() bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }, 10*time.Second, 5*time.Millisecond)
	}
}

func TestRunTimeoutWithoutWaitingForGrace(t *testing.T) {
	t.Parallel()
	// A gate that dies on SIGTERM is not made to wait out the grace period.
	g, dir := scriptGate(t, "exec sleep 300\n")
	res := Run(context.Background(), g, Options{Dir: dir, Timeout: 100 * time.Millisecond, KillGrace: time.Hour})
	require.Equal(t, Timeout, res.Verdict)
	require.Equal(t, "terminated", res.Signal)
	require.Less(t, res.Duration, time.Minute)
	requireGone(t, res.PGID)
}

func TestRunContextCancelled(t *testing.T) {
	t.Parallel()
	g, dir := scriptGate(t, stubborn)
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	res := Run(ctx, g, Options{Dir: dir, KillGrace: 100 * time.Millisecond, OnOutput: func(line string) {
		if line == "started" {
			once.Do(cancel)
		}
	}})
	require.Equal(t, Error, res.Verdict)
	require.Contains(t, res.Err, "context canceled")
	requireGone(t, res.PGID)

	res = Run(ctx, g, Options{Dir: dir})
	require.Equal(t, Error, res.Verdict, "an already cancelled context does not start the gate")
	require.Zero(t, res.PGID)
}

func TestRunKillsLeftoversAfterNormalExit(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"holds the output pipe":  "sleep 300 &\necho \"child $!\"\nexit 0\n",
		"detached from the pipe": "sleep 300 >/dev/null 2>&1 &\necho \"child $!\"\nexit 0\n",
		"ignores TERM and HUP":   "(trap '' TERM HUP; sleep 300) >/dev/null 2>&1 &\necho \"child $!\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g, dir := scriptGate(t, body)
			res := Run(context.Background(), g, Options{Dir: dir})
			require.Equal(t, Pass, res.Verdict, res.Err)
			require.Less(t, res.Duration, time.Minute)
			requireGone(t, res.PGID)
			for _, pid := range childPIDs(t, res.Output) {
				require.Eventually(t, func() bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }, 10*time.Second, 5*time.Millisecond)
			}
		})
	}
}

func TestRunEscapeeDoesNotHang(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	t.Parallel()
	// A process that leaves the group is out of reach (documented), but it
	// must not keep Run waiting on the output pipe it inherited.
	g, dir := scriptGate(t, "setsid sleep 30 &\necho \"child $!\"\necho done\n")
	res := Run(context.Background(), g, Options{Dir: dir})
	require.Equal(t, Pass, res.Verdict, res.Err)
	require.Contains(t, res.Output, "done")
	for _, pid := range childPIDs(t, res.Output) {
		_ = syscall.Kill(pid, syscall.SIGKILL) // clean up the escapee ourselves
	}
}

func TestRunScrubsEnvironment(t *testing.T) {
	g, dir := scriptGate(t, "env\n")
	env := []string{
		"PATH=/usr/bin:/bin",
		"HOME=/home/tester",
		"OPENAI_API_KEY=sk-openai",
		"ANTHROPIC_API_KEY=sk-ant",
		"AWS_SECRET_ACCESS_KEY=aws-secret",
		"GITHUB_TOKEN=ghp-token",
		"FOO_TOKEN=foo-token",
		"HORIZON_HOME=/h",
		"OPENCODE_SERVER_PASSWORD=pw",
		"MY_SERVICE_TOKEN=allowed-token",
		"PLAIN=kept",
	}
	res := Run(context.Background(), g, Options{Dir: dir, Env: env, AllowEnv: []string{"MY_*"}})
	require.Equal(t, Pass, res.Verdict, res.Err)
	for _, secret := range []string{"sk-openai", "sk-ant", "aws-secret", "ghp-token", "foo-token", "HORIZON_HOME", "OPENCODE_SERVER_PASSWORD"} {
		require.NotContains(t, res.Output, secret)
	}
	for _, kept := range []string{"PATH=/usr/bin:/bin\n", "HOME=/home/tester\n", "MY_SERVICE_TOKEN=allowed-token\n", "PLAIN=kept\n"} {
		require.Contains(t, res.Output, kept)
	}
}

func TestRunDefaultEnvironmentIsScrubbed(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-process")
	t.Setenv("HORIZON_GATE_TEST_VISIBLE", "x")
	t.Setenv("GATE_TEST_PLAIN", "plain-from-process")
	g, dir := scriptGate(t, "env\n")
	res := Run(context.Background(), g, Options{Dir: dir})
	require.Equal(t, Pass, res.Verdict, res.Err)
	require.NotContains(t, res.Output, "sk-from-process")
	require.NotContains(t, res.Output, "HORIZON_GATE_TEST_VISIBLE")
	require.Contains(t, res.Output, "GATE_TEST_PLAIN=plain-from-process")
}

func TestRunLargeOutputIsBounded(t *testing.T) {
	t.Parallel()
	// 200k lines of 20 bytes = 4,000,000 bytes, plus the markers.
	g, dir := scriptGate(t, `echo FIRST-LINE
yes 0123456789abcdefghi | head -n 200000
echo LAST-LINE
`)
	const limit = 64 << 10
	res := Run(context.Background(), g, Options{Dir: dir, MaxOutput: limit})
	require.Equal(t, Pass, res.Verdict, res.Err)
	want := int64(len("FIRST-LINE\n") + 200000*20 + len("LAST-LINE\n"))
	require.Equal(t, want, res.OutputBytes)
	require.LessOrEqual(t, len(res.Output), limit+len(omitted(want)))
	require.True(t, strings.HasPrefix(res.Output, "FIRST-LINE\n0123456789abcdefghi\n"))
	require.True(t, strings.HasSuffix(res.Output, "0123456789abcdefghi\nLAST-LINE\n"))
	require.Contains(t, res.Output, fmt.Sprintf("…[%d bytes omitted]…", want-limit))
}

func TestRunNonUTF8Output(t *testing.T) {
	g, dir := scriptGate(t, `printf 'ok \377\376 then \303'`)
	res := Run(context.Background(), g, Options{Dir: dir})
	require.Equal(t, Pass, res.Verdict, res.Err)
	require.True(t, utf8.ValidString(res.Output))
	require.Equal(t, "ok \uFFFD then \uFFFD", res.Output)
	require.Equal(t, int64(12), res.OutputBytes)
}

func TestRunOnOutput(t *testing.T) {
	g, dir := scriptGate(t, `echo a; echo b >&2; printf 'c\r\n'; printf 'no-newline'`)
	var lines []string
	res := Run(context.Background(), g, Options{Dir: dir, OnOutput: func(l string) { lines = append(lines, l) }})
	require.Equal(t, Pass, res.Verdict, res.Err)
	require.Equal(t, []string{"a", "b", "c", "no-newline"}, lines)
}

func TestCapBuffer(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 1000) // 10,000 bytes
	tests := []struct {
		name   string
		limit  int
		writes [][]byte
		want   string
	}{
		{name: "empty", limit: 10, want: ""},
		{name: "fits", limit: 10, writes: [][]byte{[]byte("abc"), []byte("def")}, want: "abcdef"},
		{name: "exactly full", limit: 6, writes: [][]byte{[]byte("abcdef")}, want: "abcdef"},
		{name: "one over", limit: 6, writes: [][]byte{[]byte("abcdefg")}, want: "abc" + omitted(1) + "efg"},
		{name: "many small writes", limit: 6, writes: [][]byte{[]byte("ab"), []byte("cd"), []byte("ef"), []byte("gh"), []byte("ij")}, want: "abc" + omitted(4) + "hij"},
		{name: "one huge write", limit: 8, writes: [][]byte{big}, want: "0123" + omitted(10000-8) + "6789"},
		{name: "odd limit", limit: 5, writes: [][]byte{[]byte("abcdefgh")}, want: "ab" + omitted(3) + "fgh"},
		{name: "rune cut at head boundary", limit: 8, writes: [][]byte{[]byte("abc€xyzuvw12345")}, want: "abc" + omitted(10) + "2345"},
		{name: "rune cut at tail boundary", limit: 8, writes: [][]byte{[]byte("abcd123456€xy")}, want: "abcd" + omitted(9) + "xy"},
		{name: "invalid bytes fit", limit: 10, writes: [][]byte{[]byte("a\xff\xfeb")}, want: "a\uFFFDb"},
		{name: "replacements longer than cap", limit: 6, writes: [][]byte{[]byte("\xffa\xffb\xff")}, want: "\uFFFD" + omitted(3) + "\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCapBuffer(tt.limit)
			var total int
			for _, w := range tt.writes {
				n, err := b.Write(w)
				require.NoError(t, err)
				require.Equal(t, len(w), n)
				total += len(w)
			}
			require.Equal(t, int64(total), b.total)
			got := b.String()
			require.Equal(t, tt.want, got)
			require.True(t, utf8.ValidString(got))
		})
	}
}

// TestCapBufferMatchesReference checks head and tail against the plain
// prefix and suffix of the stream for every write split.
func TestCapBufferMatchesReference(t *testing.T) {
	stream := []byte("the quick brown fox jumps over the lazy dog, 0123456789")
	for limit := 2; limit <= len(stream)+2; limit += 3 {
		for chunk := 1; chunk <= 9; chunk++ {
			b := newCapBuffer(limit)
			for i := 0; i < len(stream); i += chunk {
				b.Write(stream[i:min(i+chunk, len(stream))])
			}
			got := b.String()
			if limit >= len(stream) {
				require.Equal(t, string(stream), got)
				continue
			}
			h, tl := limit/2, limit-limit/2
			want := string(stream[:h]) + omitted(int64(len(stream)-limit)) + string(stream[len(stream)-tl:])
			require.Equal(t, want, got, "limit %d chunk %d", limit, chunk)
		}
	}
}

func TestScrubEnv(t *testing.T) {
	tests := []struct {
		name  string
		env   []string
		allow []string
		want  []string
	}{
		{
			name: "vendor keys, tokens, secrets, passwords go",
			env: []string{
				"PATH=/bin", "OPENAI_API_KEY=1", "OPENAI_BASE_URL=2", "ANTHROPIC_AUTH=3", "MISTRAL_API_KEY=4",
				"AWS_ACCESS_KEY_ID=5", "AWS_REGION=6", "GEMINI_X=7", "GOOGLE_APPLICATION_CREDENTIALS=8", "AZURE_OPENAI_ENDPOINT=9",
				"GITHUB_TOKEN=10", "NPM_TOKEN=11", "DB_PASSWORD=12", "CLIENT_SECRET=13", "OPENCODE_SERVER_PASSWORD=14",
				"HORIZON_HOME=15", "HOME=/root", "LANG=C.UTF-8",
			},
			want: []string{"PATH=/bin", "HOME=/root", "LANG=C.UTF-8"},
		},
		{
			name: "secrets by shape: personal access tokens, auth, DSNs, URLs with a password",
			env: []string{
				"GH_PAT=ghp_1", "SLACK_WEBHOOK_AUTH=Bearer 2", "SENTRY_DSN=https://k@o.ingest.sentry.io/3", "APP_PASSWD=4",
				"DATABASE_URL=postgres://app:hunter2@db:5432/app", "REDIS_URL=redis://:pw@localhost:6379/0",
				"HTTPS_PROXY=http://user:p%40ss@proxy:3128", "PGPASSWORD=5", "MYSQL_PWD=6", "GOOGLE_CREDENTIALS=7",
				"DEPLOY_PRIVATE_KEY=8", "UPSTREAM= ftp://anon:x@files.example/",
				"SERVICE_URL=https://example.com/a:b@c", "GIT_REMOTE=ssh://git@github.com/o/r.git", "COMPAT=9",
				"NOTE=see https://u:p@host/ in the wiki", "PWD=/repo", "OLDPWD=/", "AUTHOR=me",
			},
			want: []string{
				"SERVICE_URL=https://example.com/a:b@c", "GIT_REMOTE=ssh://git@github.com/o/r.git", "COMPAT=9",
				"NOTE=see https://u:p@host/ in the wiki", "PWD=/repo", "OLDPWD=/", "AUTHOR=me",
			},
		},
		{
			name:  "the allow list lets a secret by value through",
			env:   []string{"DATABASE_URL=postgres://app:pw@db/app", "CACHE_URL=redis://:pw@c/0"},
			allow: []string{"DATABASE_URL"},
			want:  []string{"DATABASE_URL=postgres://app:pw@db/app"},
		},
		{
			name: "names match regardless of case",
			env:  []string{"openai_api_key=1", "Github_Token=2", "keep=3"},
			want: []string{"keep=3"},
		},
		{
			name:  "allow list by name and glob",
			env:   []string{"GITHUB_TOKEN=1", "MY_TOKEN=2", "MY_OTHER_SECRET=3", "FOO_TOKEN=4", "AWS_REGION=5"},
			allow: []string{"GITHUB_TOKEN", "MY_*", "AWS_REGION"},
			want:  []string{"GITHUB_TOKEN=1", "MY_TOKEN=2", "MY_OTHER_SECRET=3", "AWS_REGION=5"},
		},
		{
			name: "look-alikes stay",
			env:  []string{"TOKENIZERS_PARALLELISM=1", "PASSWORD_STORE_DIR=2", "SECRETS_DIR=3", "MY_API_KEYS_FILE=4", "GOPATH=5"},
			want: []string{"TOKENIZERS_PARALLELISM=1", "PASSWORD_STORE_DIR=2", "SECRETS_DIR=3", "MY_API_KEYS_FILE=4", "GOPATH=5"},
		},
		{
			name: "entries without = are kept as they are",
			env:  []string{"weird", "=x", "A=b=c"},
			want: []string{"weird", "=x", "A=b=c"},
		},
		{name: "empty", env: nil, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]string(nil), tt.env...)
			require.Equal(t, tt.want, ScrubEnv(tt.env, tt.allow))
			require.Equal(t, in, tt.env, "input not modified")
		})
	}
}

// BenchmarkRunOverhead compares Run on `true` with exec.Command("true").Run()
// directly: the difference is the gate's own cost (process group, pipe,
// scrubbing, group reaping).
func BenchmarkRunOverhead(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("true not installed")
	}
	dir := b.TempDir()
	b.Run("gate.Run", func(b *testing.B) {
		g := Gate{Command: []string{"true"}}
		for b.Loop() {
			if res := Run(context.Background(), g, Options{Dir: dir}); res.Verdict != Pass {
				b.Fatalf("verdict %s: %s", res.Verdict, res.Err)
			}
		}
	})
	b.Run("exec.Command", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(truePath)
			cmd.Dir = dir
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	_ = os.Getpid
}

func TestGlobMatchAgreesWithPathMatch(t *testing.T) {
	patterns := append([]string{"MY_*", "*", "A?B", "X[YZ]*", "*MID*", "EXACT", "*_TOKEN", "AWS_*", ""}, ScrubPatterns...)
	names := []string{"MY_TOKEN", "MY_", "AB", "AXB", "XYQ", "A_MID_B", "EXACT", "EXACTLY", "GITHUB_TOKEN", "_TOKEN", "TOKEN", "AWS_", "AWS", "", "OPENAI_API_KEY"}
	for _, p := range patterns {
		for _, n := range names {
			want, _ := path.Match(p, n)
			require.Equal(t, want, globMatch(p, n), "pattern %q name %q", p, n)
		}
	}
}

func TestRunTimeoutStoppedMember(t *testing.T) {
	t.Parallel()
	// A member stopped with SIGSTOP still goes.
	g, dir := scriptGate(t, "sleep 300 &\necho \"child $!\"\nkill -STOP $!\necho started\nwait\n")
	res := Run(context.Background(), g, Options{Dir: dir, Timeout: 200 * time.Millisecond, KillGrace: 100 * time.Millisecond})
	require.Equal(t, Timeout, res.Verdict)
	requireGone(t, res.PGID)
}

// Options.Start starts the leader in place of cmd.Start (a daemon's
// starter makes it die with the daemon); the command arrives leading its
// own group, and done runs once, after the group is gone and the leader
// was waited for. A starter's error is the run's error.
func TestRunWithStarter(t *testing.T) {
	g, dir := scriptGate(t, "sleep 30 >/dev/null 2>&1 &\necho started\n")
	var (
		calls   int
		setpgid bool
		pgid    int
		atDone  bool
		waited  bool
	)
	start := func(cmd *exec.Cmd) (func(), error) {
		calls++
		setpgid = cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		pgid = cmd.Process.Pid
		return func() {
			atDone = groupAlive(pgid)
			waited = cmd.ProcessState != nil
		}, nil
	}
	res := Run(context.Background(), g, Options{Dir: dir, Start: start})
	require.Equal(t, Pass, res.Verdict, res.Err)
	require.Contains(t, res.Output, "started")
	require.Equal(t, 1, calls)
	require.True(t, setpgid, "the command leads its own group")
	require.Equal(t, pgid, res.PGID)
	require.False(t, atDone, "done runs after the group is gone (no live member; killed orphans may wait for init as zombies)")
	require.True(t, waited, "done runs after the leader was waited for")

	res = Run(context.Background(), g, Options{Dir: dir, Start: func(*exec.Cmd) (func(), error) {
		return nil, errors.New("no more processes")
	}})
	require.Equal(t, Error, res.Verdict)
	require.Contains(t, res.Err, "no more processes")
}
