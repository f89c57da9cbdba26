package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/horizon/horizon/app/daemon"
	"github.com/horizon/horizon/internal/service"
)

type serviceOptions struct {
	dryRun   bool
	bin      string
	platform string
	json     bool
}

func (a *app) serviceCmd() *cobra.Command {
	var o serviceOptions
	cmd := &cobra.Command{
		Use:   "service install|uninstall|status",
		Short: "Start the horizon daemon at boot: a systemd user unit (Linux) or a launchd agent (macOS)",
		Long: `Leave horizon running across reboots. ` + "`horizon service install`" + ` writes a unit that runs
` + "`horizon server`" + ` (this binary, by absolute path) and restarts it after a failure:

  Linux   ~/.config/systemd/user/<service.name>.service ($XDG_CONFIG_HOME if set),
          then systemctl --user daemon-reload and enable --now when a user
          systemd answers (otherwise it prints those commands)
  macOS   ~/Library/LaunchAgents/local.<service.name>.plist, then launchctl bootstrap

The unit carries the HORIZON_* variables set now, HORIZON_HOME as resolved,
and the variables service.env names (default PATH, so the daemon finds git,
opencode and the gate's tools). It is written readable by you only: it may
hold API keys. Install again after changing them.

A systemd user service starts at boot only when lingering is enabled for your
user; install and status say whether it is, and the command that enables it
(loginctl enable-linger USER).

Exit: 0 done, 2 bad usage or input, 3 environment (unsupported system, a
service manager command failed).`,
		Example: `  horizon service install --dry-run     print the unit without writing it
  horizon service install
  horizon service status --json
  horizon service uninstall`,
		Args: subcommandArgs("install, uninstall or status"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("name what to do: horizon service install, uninstall or status")
		},
	}
	cmd.PersistentFlags().StringVar(&o.platform, "platform", "", "systemd or launchd (default: this system's)")
	install := &cobra.Command{
		Use:   "install [--dry-run] [--bin PATH]",
		Short: "Write the unit, enable and start it; say whether it will start at boot",
		Args:  noArgs(),
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.runServiceInstall(cmd.Context(), o) },
	}
	install.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the file it would write and the commands it would run, change nothing")
	install.Flags().StringVar(&o.bin, "bin", "", "the horizon executable the unit runs (default: this one)")
	uninstall := &cobra.Command{
		Use:   "uninstall",
		Short: "Stop and disable the unit, then remove its file",
		Args:  noArgs(),
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.runServiceUninstall(cmd.Context(), o) },
	}
	status := &cobra.Command{
		Use:   "status [--json]",
		Short: "Is the unit installed, enabled, active; is lingering on",
		Args:  noArgs(),
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.runServiceStatus(cmd.Context(), o) },
	}
	status.Flags().BoolVar(&o.json, "json", false, "print the status as JSON (installed, enabled, active, linger, ...)")
	cmd.AddCommand(install, uninstall, status)
	return cmd
}

func (a *app) serviceManager(o serviceOptions) (*service.Manager, error) {
	var p service.Platform
	var err error
	if o.platform != "" {
		p, err = service.ParsePlatform(o.platform)
	} else {
		p, err = service.PlatformFor(runtime.GOOS)
	}
	if err != nil {
		return nil, serviceErr(err)
	}
	m := &service.Manager{Platform: p, Name: a.cfg.Service.Name, User: os.Getenv("USER"), UID: os.Getuid()}
	if u, err := user.Current(); err == nil {
		m.User = u.Username
	}
	if m.User == "" {
		return nil, exitErr{code: ExitEnvironment, msg: "service: cannot tell who you are (no $USER, no passwd entry)"}
	}
	return m, nil
}

func (a *app) runServiceInstall(ctx context.Context, o serviceOptions) error {
	m, err := a.serviceManager(o)
	if err != nil {
		return err
	}
	bin, err := horizonBinary(o.bin)
	if err != nil {
		return err
	}
	env, missing := service.Environment(os.Environ(), a.cfg.Service.Env, a.cfg.Home)
	spec := service.Spec{Name: a.cfg.Service.Name, Binary: bin, Args: []string{"server"}, Env: env, LogDir: a.paths().Logs()}
	for _, name := range missing {
		fmt.Fprintf(a.errOut, "note: service.env names %s, which is not set here: left out of the unit\n", name)
	}
	if strings.Contains(bin, "go-build") {
		fmt.Fprintf(a.errOut, "warning: %s looks like a temporary binary from `go run`; build horizon and pass --bin\n", bin)
	}
	if o.dryRun {
		return a.printServicePlan(m, spec)
	}
	r, err := m.Install(ctx, spec)
	if err != nil {
		return serviceErr(err)
	}
	if r.Changed {
		fmt.Fprintf(a.out, "wrote %s\n", r.Path)
	} else {
		fmt.Fprintf(a.out, "%s is up to date\n", r.Path)
	}
	a.printReport(r)
	if pid, running := daemon.Running(a.paths()); running {
		fmt.Fprintf(a.out, "note: a horizon server (pid %d) already runs for %s outside the service; the service starts once it stops (`horizon stop`, then %s)\n",
			pid, a.cfg.Home, startCommand(m))
	}
	switch r.Linger {
	case service.LingerYes:
		fmt.Fprintln(a.out, "lingering is enabled: the service starts at boot, before you log in")
	case service.LingerNo, service.LingerUnknown:
		if m.Platform == service.Systemd {
			fmt.Fprintf(a.out, "lingering is %s: without it the service starts when you log in and stops when you log out; to start it at boot run:\n  %s\n",
				map[service.Linger]string{service.LingerNo: "off", service.LingerUnknown: "unknown"}[r.Linger], r.LingerCommand)
		}
	}
	if m.Platform == service.Launchd {
		fmt.Fprintln(a.out, "a LaunchAgent starts when you log in; it keeps running while you are logged in")
	}
	return nil
}

func (a *app) printServicePlan(m *service.Manager, spec service.Spec) error {
	text, err := service.Render(m.Platform, spec)
	if err != nil {
		return serviceErr(err)
	}
	path, err := m.Path()
	if err != nil {
		return serviceErr(err)
	}
	fmt.Fprintf(a.out, "would write %s (mode 0600):\n\n%s\nthen run:\n", path, text)
	switch m.Platform {
	case service.Systemd:
		fmt.Fprintf(a.out, "  systemctl --user daemon-reload\n  systemctl --user enable --now %s\n", service.UnitFile(m.Name))
	case service.Launchd:
		fmt.Fprintf(a.out, "  launchctl bootstrap gui/%d %s\n", m.UID, path)
	}
	return nil
}

func (a *app) printReport(r service.InstallReport) {
	for _, c := range r.Ran {
		fmt.Fprintf(a.out, "ran  %s\n", c)
	}
	if len(r.Todo) > 0 {
		fmt.Fprintln(a.out, "to finish, run:")
		for _, c := range r.Todo {
			fmt.Fprintf(a.out, "  %s\n", c)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(a.out, "note: %s\n", n)
	}
}

func startCommand(m *service.Manager) string {
	if m.Platform == service.Launchd {
		return fmt.Sprintf("launchctl kickstart gui/%d/%s", m.UID, service.Label(m.Name))
	}
	return "systemctl --user restart " + service.UnitFile(m.Name)
}

func (a *app) runServiceUninstall(ctx context.Context, o serviceOptions) error {
	m, err := a.serviceManager(o)
	if err != nil {
		return err
	}
	r, err := m.Uninstall(ctx)
	if err != nil {
		return serviceErr(err)
	}
	if r.Changed {
		fmt.Fprintf(a.out, "removed %s\n", r.Path)
	} else {
		fmt.Fprintf(a.out, "not installed (%s does not exist)\n", r.Path)
	}
	a.printReport(r)
	return nil
}

func (a *app) runServiceStatus(ctx context.Context, o serviceOptions) error {
	m, err := a.serviceManager(o)
	if err != nil {
		return err
	}
	st, err := m.Status(ctx)
	if err != nil {
		return serviceErr(err)
	}
	if o.json {
		enc := json.NewEncoder(a.out)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	writeServiceStatus(a.out, st)
	return nil
}

func writeServiceStatus(w io.Writer, st service.Status) {
	if !st.Installed {
		fmt.Fprintf(w, "unit     %s (not installed; `horizon service install` writes it)\n", st.Path)
	} else {
		fmt.Fprintf(w, "unit     %s\n", st.Path)
		missing := ""
		if !st.BinaryExists {
			missing = " (missing: install again with --bin)"
		}
		fmt.Fprintf(w, "binary   %s%s\n", st.Binary, missing)
	}
	if !st.Reachable {
		fmt.Fprintf(w, "manager  not reachable (no %s answered): enabled and active unknown\n", map[service.Platform]string{service.Systemd: "systemctl --user", service.Launchd: "launchctl"}[st.Platform])
	}
	fmt.Fprintf(w, "enabled  %s\nactive   %s\n", st.Enabled, st.Active)
	if st.Platform == service.Systemd {
		line := string(st.Linger)
		if st.Linger != service.LingerYes {
			line += " (the service starts at login, not at boot; `" + st.LingerCommand + "` changes that)"
		}
		fmt.Fprintf(w, "linger   %s\n", line)
	}
}

// subcommandArgs refuses an unknown subcommand as bad usage.
func subcommandArgs(known string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("%s has no subcommand %q: use %s", cmd.CommandPath(), args[0], known)
		}
		return nil
	}
}

// horizonBinary is the executable the unit runs: --bin, or this process's
// own, as an absolute path.
func horizonBinary(flag string) (string, error) {
	if flag == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", exitErr{code: ExitEnvironment, msg: fmt.Sprintf("service: find the horizon executable: %v; pass --bin", err)}
		}
		return exe, nil
	}
	abs, err := filepath.Abs(flag)
	if err != nil {
		return "", usagef("--bin %s: %v", flag, err)
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return "", usagef("--bin %s: %v", flag, err)
	case st.IsDir() || st.Mode().Perm()&0o111 == 0:
		return "", usagef("--bin %s: not an executable file", flag)
	}
	return abs, nil
}

// serviceErr maps the service package's errors to exit codes: bad input 2,
// the system around horizon 3.
func serviceErr(err error) error {
	var se *service.SpecError
	var ce *service.CommandError
	switch {
	case errors.As(err, &se):
		return usageError{err}
	case errors.As(err, &ce), errors.Is(err, service.ErrUnsupported), errors.Is(err, service.ErrEnvironment):
		return exitErr{code: ExitEnvironment, msg: err.Error()}
	}
	return err
}
