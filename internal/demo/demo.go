// Package demo makes the sample repository and the scripted model of
// `horizon demo`: a shell project whose gate is red because add.sh
// subtracts, and a script for a planned run of Goal. The lead plans two
// features (f1 fixes the operator, f2 tests negative numbers); f1's worker
// fixes add.sh and its auditor accepts; f2's worker adds a case of two
// negative numbers, its auditor rejects it for lacking one of opposite
// signs, the next brief carries that finding, the worker adds the case and
// the auditor accepts. The same script answers a one-feature run (start
// --single) of the goal: the worker fixes add.sh, the auditor asks for a
// test of negative numbers, the worker adds it and the auditor accepts.
// The integration tests use the same fixture.
package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/horizon/horizon/internal/fakemodel"
)

//go:embed all:sample script.json
var files embed.FS

// Goal is the goal `horizon demo` gives its run: the script's lead plans
// it into the two features above.
const Goal = "Make add.sh print the sum of its two arguments, negative numbers included, with tests that show it."

// Model is the model id the demo runs with.
const Model = fakemodel.ProviderID + "/" + fakemodel.DefaultModel

// Script returns the demo's model script.
func Script() (*fakemodel.Script, error) {
	b, err := files.ReadFile("script.json")
	if err != nil {
		return nil, fmt.Errorf("demo script: %w", err)
	}
	return fakemodel.ParseScript(b)
}

// CreateRepo writes the sample repository into dir (created, must be empty
// or missing) and commits it. When modelURL is set, an opencode.json naming
// the fake model at that URL is committed too, so OpenCode sessions in the
// run's lanes find the provider.
func CreateRepo(dir, modelURL string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demo repo: %w", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		return fmt.Errorf("demo repo: %s is not empty", dir)
	}
	err := fs.WalkDir(files, "sample", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "sample"), "/")
		if rel == "" {
			return nil
		}
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		return os.WriteFile(dst, b, mode)
	})
	if err != nil {
		return fmt.Errorf("demo repo: %w", err)
	}
	if modelURL != "" {
		if err := fakemodel.WriteOpenCodeConfig(filepath.Join(dir, "opencode.json"), modelURL); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=horizon demo", "-c", "user.email=demo@horizon.invalid", "commit", "-q", "-m", "demo: add.sh and its failing test"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("demo repo: git %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}
