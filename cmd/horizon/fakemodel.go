package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/internal/demo"
	"github.com/horizon/horizon/internal/fakemodel"
)

type fakeModelOptions struct {
	app       *app
	script    string // "": the demo's script
	addr      string
	configOut string
}

// fake-model serves the scripted model on its own, for trying OpenCode or
// horizon by hand and for the bench script. Hidden: it is a test tool.
func newFakeModelCmd(a *app, runF func(context.Context, *fakeModelOptions) error) *cobra.Command {
	o := &fakeModelOptions{app: a}
	cmd := &cobra.Command{
		Use:    "fake-model [--script FILE] [--addr HOST:PORT] [--opencode-config FILE]",
		Short:  "Serve a scripted OpenAI-compatible model (testing aid)",
		Hidden: true,
		Args:   noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return fakeModelRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.script, "script", "", "script file (default: the demo's script)")
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:0", "listen address")
	cmd.Flags().StringVar(&o.configOut, "opencode-config", "", "also write an OpenCode config naming this model as provider \"fake\"")
	return cmd
}

func fakeModelRun(ctx context.Context, o *fakeModelOptions) error {
	a := o.app
	var s *fakemodel.Script
	var err error
	if o.script == "" {
		s, err = demo.Script()
	} else {
		s, err = fakemodel.LoadScript(o.script)
	}
	if err != nil {
		return usageError{err}
	}
	m := fakemodel.New(s)
	if err := m.Start(o.addr); err != nil {
		return err
	}
	defer m.Close()
	if o.configOut != "" {
		if err := fakemodel.WriteOpenCodeConfig(o.configOut, m.URL()); err != nil {
			return err
		}
	}
	fmt.Fprintln(a.out, m.URL())
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	seen := 0
	enc := json.NewEncoder(a.errOut)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
		reqs := m.Requests()
		for _, r := range reqs[seen:] {
			_ = enc.Encode(r)
		}
		seen = len(reqs)
	}
}
