// Command slowest runs `go test -json` (the command line it is given),
// prints what go test prints without -json (each package's ok or FAIL
// line, and the output of failed tests only), then the slowest tests and a
// closing PASS or FAIL, and exits with go test's status.
//
//	slowest go test -json -p 1 ./...
//
// It is `make test`'s way of saying where the suite's time goes without
// any tool beyond Go.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// slowestShown is how many of the slowest tests the summary lists.
const slowestShown = 10

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: slowest go test -json [flags] [packages]")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "slowest: %v\n", err)
		return 2
	}
	// An interrupt reaches go test too (same process group): keep
	// reading until it has stopped, and report its status.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "slowest: start %s: %v\n", args[0], err)
		return 2
	}
	s := newSummary(stdout, slowestShown)
	readErr := s.read(pipe)
	code := 0
	var ee *exec.ExitError
	switch err := cmd.Wait(); {
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if code < 0 { // killed by a signal
			code = 1
		}
	case err != nil:
		fmt.Fprintf(stderr, "slowest: %s: %v\n", args[0], err)
		code = 1
	}
	if readErr != nil {
		fmt.Fprintf(stderr, "slowest: reading go test's output: %v\n", readErr)
		if code == 0 {
			code = 1
		}
	}
	s.finish(code == 0)
	return code
}

// event is one line of `go test -json` (test2json's TestEvent, with the
// build events of go test -json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output, build-fail
	Test       string
	Elapsed    float64
	Output     string
}

// result is one finished top-level test.
type result struct {
	pkg, test, action string
	elapsed           float64
}

// summary turns an event stream back into go test's plain output.
type summary struct {
	w      io.Writer
	shown  int
	output map[[2]string][]string // a running test's output, held until it fails
	order  [][2]string            // the held tests, in the order they began
	failed []string               // packages that failed, in order
	tests  []result
}

func newSummary(w io.Writer, shown int) *summary {
	return &summary{w: w, shown: shown, output: map[[2]string][]string{}}
}

// read handles every line of r until it ends.
func (s *summary) read(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadBytes('\n') // no line is too long
		if len(line) > 0 {
			s.line(line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (s *summary) line(b []byte) {
	var e event
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &e) != nil || e.Action == "" {
		s.print(string(b)) // not an event: go test printed it as it is
		return
	}
	key := [2]string{e.Package, e.Test}
	switch e.Action {
	case "build-output":
		s.print(e.Output)
	case "output":
		switch {
		case e.Test != "":
			if !framing(e.Output) {
				if _, held := s.output[key]; !held {
					s.order = append(s.order, key)
				}
				s.output[key] = append(s.output[key], e.Output)
			}
		case e.Output != "PASS\n": // without -json a passing package says only "ok"
			s.print(e.Output)
		}
	case "pass", "skip", "fail":
		if e.Test == "" {
			if e.Action == "fail" {
				s.failed = append(s.failed, e.Package)
				s.flush(e.Package) // tests a panic or timeout cut short
			}
			return
		}
		held := resultFirst(s.output[key], e.Test)
		s.drop(key)
		if parent, sub := parentOf(e.Test); sub {
			// A failed subtest shows under its parent, indented, as
			// plain go test shows it.
			if e.Action == "fail" {
				pkey := [2]string{e.Package, parent}
				if _, ok := s.output[pkey]; !ok {
					s.order = append(s.order, pkey)
				}
				for _, o := range held {
					s.output[pkey] = append(s.output[pkey], "    "+o)
				}
			}
			return
		}
		if e.Action == "fail" {
			for _, o := range held {
				s.print(o)
			}
		}
		s.tests = append(s.tests, result{pkg: e.Package, test: e.Test, action: e.Action, elapsed: e.Elapsed})
	}
}

// parentOf is the name of a subtest's parent test.
func parentOf(test string) (parent string, sub bool) {
	i := strings.LastIndexByte(test, '/')
	if i < 0 {
		return "", false
	}
	return test[:i], true
}

// resultFirst moves a test's "--- FAIL: NAME" (or PASS, SKIP) line before
// its log: verbose output (which -json is) logs as it goes and ends with
// the result, plain go test starts with the result.
func resultFirst(lines []string, test string) []string {
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		if strings.HasPrefix(t, "--- ") && strings.Contains(t, ": "+test+" (") {
			out := append([]string{l}, lines[:i]...)
			return append(out, lines[i+1:]...)
		}
	}
	return lines
}

// framing is test2json's verbose bookkeeping, which plain go test does
// not print.
func framing(out string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(out, p) {
			return true
		}
	}
	return false
}

func (s *summary) print(out string) {
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	io.WriteString(s.w, out)
}

func (s *summary) printHeld(key [2]string) {
	for _, o := range s.output[key] {
		s.print(o)
	}
}

func (s *summary) drop(key [2]string) {
	delete(s.output, key)
	for i, k := range s.order {
		if k == key {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// flush prints what tests of pkg ("" for every package) still hold: they
// never finished.
func (s *summary) flush(pkg string) {
	for _, k := range append([][2]string(nil), s.order...) {
		if pkg == "" || k[0] == pkg {
			s.printHeld(k)
			s.drop(k)
		}
	}
}

// finish prints the output of tests that never finished, the slowest
// tests, the failed packages again and the closing PASS or FAIL (ok:
// go test's status).
func (s *summary) finish(ok bool) {
	s.flush("")
	tests := append([]result(nil), s.tests...)
	sort.SliceStable(tests, func(i, j int) bool { return tests[i].elapsed > tests[j].elapsed })
	if len(tests) > s.shown {
		tests = tests[:s.shown]
	}
	if len(tests) > 0 {
		fmt.Fprintf(s.w, "\n== the %d slowest tests\n", len(tests))
		for _, r := range tests {
			fmt.Fprintf(s.w, "%9.2fs  %-4s  %s %s\n", r.elapsed, r.action, r.pkg, r.test)
		}
		fmt.Fprintln(s.w)
	}
	for _, p := range s.failed {
		fmt.Fprintf(s.w, "FAIL\t%s\n", p)
	}
	if ok && len(s.failed) == 0 {
		fmt.Fprintln(s.w, "PASS")
	} else {
		fmt.Fprintln(s.w, "FAIL")
	}
}
