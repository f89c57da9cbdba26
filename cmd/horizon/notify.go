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

	"github.com/horizon/horizon/internal/notify"
)

func (a *app) notifyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "notify test [--json]",
		Short: "Check the notification receivers (notify.webhook, notify.command)",
		Long: `horizon tells you when a run waits for approval, a feature is blocked, spend
pauses a run, a run stalls or ends, the engine or providers are out for
notify.outage_after, and when the daily report is ready: as a JSON POST to
notify.webhook and/or on the stdin of notify.command. See the README's
"Notifications".`,
		Args: subcommandArgs("test"),
		RunE: func(*cobra.Command, []string) error {
			return usagef("name what to do: horizon notify test")
		},
	}
	var asJSON bool
	test := &cobra.Command{
		Use:   "test [--json]",
		Short: "Send one test event through every receiver and say what each answered",
		Long: `Send one event of kind test to notify.webhook and notify.command, with the
configured timeout and attempts, and print what each receiver answered.

Exit: 0 every receiver took it, 2 no receiver configured or a bad setting,
3 a receiver failed.`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runNotifyTest(cmd.Context(), asJSON) },
	}
	test.Flags().BoolVar(&asJSON, "json", false, "print the event and each receiver's result as JSON")
	cmd.AddCommand(test)
	return cmd
}

func (a *app) runNotifyTest(ctx context.Context, asJSON bool) error {
	if !a.cfg.Notify.Configured() {
		return usagef("no notification receiver is configured: set notify.webhook (a URL) or notify.command in ~/.config/horizon/config.yaml, or HORIZON_NOTIFY_WEBHOOK / HORIZON_NOTIFY_COMMAND")
	}
	s, err := notify.New(a.cfg.Notify)
	if err != nil {
		return usageError{err}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	host, _ := os.Hostname()
	// Each test is a new fact: the sequence is the time, so a receiver
	// that drops duplicate IDs still shows the second test.
	ev := notify.NewEvent(notify.Test, "", "test", int(time.Now().UnixNano()),
		fmt.Sprintf("horizon on %s: test notification; receivers work", host))
	ev.Title = "horizon: test"
	if !asJSON {
		fmt.Fprintf(a.errOut, "sending test event %s to %d receiver(s)…\n", ev.ID, len(s.Receivers()))
	}
	results, sendErr := s.Send(ctx, ev)
	if asJSON {
		if err := json.NewEncoder(a.out).Encode(struct {
			Event   notify.Event    `json:"event"`
			Results []notify.Result `json:"results"`
			OK      bool            `json:"ok"`
		}{ev, results, sendErr == nil}); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			if r.OK {
				fmt.Fprintf(a.out, "ok      %s (%s, %d ms): %s\n", r.Receiver, plural(r.Attempts, "attempt"), r.DurationMS, r.Answer)
			} else {
				fmt.Fprintf(a.out, "FAILED  %s (%s, %d ms): %s\n", r.Receiver, plural(r.Attempts, "attempt"), r.DurationMS, r.Error)
			}
		}
	}
	if sendErr != nil {
		return exitErr{code: ExitEnvironment}
	}
	return nil
}
