package main

import (
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

// fakeModelCmd serves the scripted model on its own, for trying OpenCode or
// horizon by hand and for the bench script. Hidden: it is a test tool.
func (a *app) fakeModelCmd() *cobra.Command {
	var script, addr, configOut string
	cmd := &cobra.Command{
		Use:    "fake-model [--script FILE] [--addr HOST:PORT] [--opencode-config FILE]",
		Short:  "Serve a scripted OpenAI-compatible model (testing aid)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var s *fakemodel.Script
			var err error
			if script == "" {
				s, err = demo.Script()
			} else {
				s, err = fakemodel.LoadScript(script)
			}
			if err != nil {
				return usageError{err}
			}
			m := fakemodel.New(s)
			if err := m.Start(addr); err != nil {
				return err
			}
			defer m.Close()
			if configOut != "" {
				if err := fakemodel.WriteOpenCodeConfig(configOut, m.URL()); err != nil {
					return err
				}
			}
			fmt.Fprintln(a.out, m.URL())
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
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
		},
	}
	cmd.Flags().StringVar(&script, "script", "", "script file (default: the demo's script)")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "listen address")
	cmd.Flags().StringVar(&configOut, "opencode-config", "", "also write an OpenCode config naming this model as provider \"fake\"")
	return cmd
}
