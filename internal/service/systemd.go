package service

import (
	"strings"
)

// renderSystemd writes a user unit. Every choice below is about a run that
// lasts days: come back after a crash, never give up for good on a
// transient failure, but do not loop on a failure restarting cannot fix.
func renderSystemd(s Spec) string {
	var b strings.Builder
	w := func(lines ...string) {
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	w("# horizon's daemon, written by `horizon service install`; run it again to",
		"# change this file, `horizon service uninstall` to remove it.",
		"[Unit]",
		"Description=horizon daemon: embedded Temporal engine, Web UI and worker",
		"# Keep restarting however often it fails: a days-long run outlives a bad minute.",
		"StartLimitIntervalSec=0",
		"",
		"[Service]",
		"Type=simple",
		"ExecStart="+execLine(s.Binary, s.Args))
	for _, v := range s.Env {
		w("Environment=" + quoteEnv(v.Name+"="+v.Value))
	}
	w("Restart=on-failure",
		"RestartSec=10s",
		"# Exit 2 is bad configuration, 3 a daemon already running for this home:",
		"# restarting changes neither.",
		"RestartPreventExitStatus=2 3",
		"# SIGTERM goes to the daemon alone: it hands in-flight work back to the",
		"# engine and stops OpenCode itself; whatever is left is killed after the timeout.",
		"KillMode=mixed",
		"TimeoutStopSec=90s",
		"",
		"[Install]",
		"WantedBy=default.target")
	return b.String()
}

// execLine quotes a command line for ExecStart=: a word with anything but
// plain path characters is double-quoted with C escapes; % (specifiers) is
// doubled in every word, $ (variable expansion) in the arguments only: the
// executable's path is never expanded, so $$ there would stay $$.
func execLine(bin string, args []string) string {
	words := make([]string, 0, 1+len(args))
	for i, a := range append([]string{bin}, args...) {
		a = strings.ReplaceAll(a, "%", "%%")
		if i > 0 {
			a = strings.ReplaceAll(a, "$", "$$")
		}
		if a == "" || strings.IndexFunc(a, func(r rune) bool { return !plain(r) }) >= 0 {
			a = quote(a)
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

func plain(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/_.,:+@=%$-", r)
}

// quoteEnv quotes one NAME=value assignment for Environment=: systemd
// unquotes it, undoes C escapes, then expands % specifiers; $ means
// nothing there.
func quoteEnv(assignment string) string {
	return quote(strings.ReplaceAll(assignment, "%", "%%"))
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
