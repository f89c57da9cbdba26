package daemon

import (
	"context"
	"fmt"
	"github.com/horizon/horizon/internal/applier"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/horizon/horizon/activities"
	"github.com/horizon/horizon/app/core"
	"github.com/horizon/horizon/app/engine"
	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/agent"
	"github.com/horizon/horizon/internal/child"
	"github.com/horizon/horizon/internal/notify"
	"github.com/horizon/horizon/internal/reader"
	"github.com/horizon/horizon/internal/specialist"
	"github.com/horizon/horizon/internal/tools"
	"github.com/horizon/horizon/workflows"
)

// Options configures Serve.
type Options struct {
	Config *config.Config
	Logger zerolog.Logger
	// Engine runs the embedded engine (horizon server); false only works
	// against a configured remote address (horizon worker).
	Engine bool
	// EngineOnly runs the engine (and its Web UI) without a worker, for
	// workers elsewhere to join (horizon server --engine-only).
	EngineOnly bool
	// Ready is called once the worker polls, with the published info.
	Ready func(Info)
}

// Serve runs the daemon until ctx ends, then shuts down in order: stop
// taking work, let in-flight activities hand back, stop OpenCode, stop the
// engine. Everything a run needs is in the engine's database, so a later
// Serve continues where this one stopped, however it stopped.
func Serve(ctx context.Context, o Options) error {
	cfg, log := o.Config, o.Logger
	if err := checkMode(o); err != nil {
		return err
	}
	paths := Paths{Home: cfg.Home}
	restrictUmask()
	if !o.EngineOnly {
		if err := CheckShared(cfg); err != nil {
			return err
		}
	}
	lock, err := Acquire(paths)
	if err != nil {
		return err
	}
	defer lock.Release()
	if mode, open := HomeOpen(cfg.Home); open {
		log.Warn().Str("Home", cfg.Home).Str("Mode", fmt.Sprintf("%04o", mode)).Msg("the home is open to other users; run `chmod 700` on it")
	}
	identity := fmt.Sprintf("horizon@%s:%d", hostname(), os.Getpid())
	log = log.With().Str("Identity", identity).Logger()

	reapPrevious(paths, log)
	defer child.Untrack()

	// OpenCode starts first, beside the engine: it takes seconds where the
	// engine takes half of one, and a cold `horizon start` waits for it to
	// say which models it reaches.
	var sessions *lazySessions
	closeSessions := func() {}
	if !o.EngineOnly {
		sessions = &lazySessions{cfg: cfg, paths: paths, log: log, appliers: newAppliers(cfg, paths, log)}
		closeSessions = sync.OnceFunc(sessions.Close)
		defer closeSessions() // on an early return; else below, before the engine stops
		go sessions.warm(ctx)
	}

	var emb *engine.Embedded
	if o.Engine {
		emb, err = startEngine(cfg, paths, log)
		if err != nil {
			return err
		}
		defer emb.Stop()
	}
	c, err := connect(ctx, cfg, log, emb != nil)
	if err != nil {
		return err
	}
	defer c.Close()

	if o.EngineOnly {
		return serveEngineOnly(ctx, o, paths, identity, emb, log)
	}

	defer closeSessions()
	acts, err := newActivities(cfg, c, sessions, identity, log)
	if err != nil {
		return err
	}
	host, err := hostID(paths)
	if err != nil {
		return err
	}
	acts.HostQueue = activities.HostQueue(cfg.Temporal.TaskQueue, host)
	stop, err := startWorkers(c, cfg, acts, identity)
	if err != nil {
		return err
	}
	defer stop()

	info := Info{PID: os.Getpid(), Identity: identity, Frontend: cfg.FrontendAddress(), Embedded: emb != nil, StartedAt: time.Now()}
	if emb != nil {
		info.UI = emb.UIURL()
	}
	if err := WriteInfo(paths, info); err != nil {
		return err
	}
	if o.Engine {
		// Activities a dead daemon of this home (or any dead horizon
		// process of this machine) had started will never report: hand
		// them back now rather than after their heartbeat timeout.
		go handBack(ctx, c, cfg.Temporal.Namespace, identity, log)
	}
	log.Info().Str("TaskQueue", cfg.Temporal.TaskQueue).Str("HostQueue", acts.HostQueue).Bool("PaidPoller", cfg.Worker.PaidPoller).Str("SharedDir", cfg.DataDir()).Msg("worker ready")
	if o.Ready != nil {
		o.Ready(info)
	}
	<-ctx.Done()
	log.Info().Msg("shutting down")
	return nil
}

// checkMode refuses options that do not fit the configuration: the
// embedded engine with a remote address set, a worker without one.
func checkMode(o Options) error {
	cfg := o.Config
	switch {
	case o.Engine && !cfg.Embedded():
		return fmt.Errorf("temporal.address is set (%s): use `horizon worker` against a remote engine, or unset it to run the embedded one", cfg.Temporal.Address)
	case !o.Engine && cfg.Embedded():
		return ErrNoRemote
	}
	if o.EngineOnly && !o.Engine {
		return fmt.Errorf("daemon: EngineOnly without Engine")
	}
	return nil
}

// reapPrevious stops what a daemon that died hard left behind, then
// records this daemon's children (undo with child.Untrack). Call it under
// the home's lock, before anything takes work.
func reapPrevious(paths Paths, log zerolog.Logger) {
	// A daemon that died hard may have left OpenCode (and the tools it ran)
	// behind in a lane: stop them before anything else writes there.
	if n, err := agent.ReapOrphans(paths.AgentPIDs(), log); err != nil {
		log.Warn().Err(err).Msg("reap orphaned agent processes")
	} else if n > 0 {
		log.Warn().Int("Processes", n).Msg("stopped agent processes a previous daemon left behind")
	}
	// Likewise gates, git and codemods: a retried activity must not run
	// beside what its first attempt left (two gates in one lane). Children
	// die with the daemon (internal/child); this reaps what escaped.
	if n, err := child.Reap(paths.Children(), log); err != nil {
		log.Warn().Err(err).Msg("reap children of a previous daemon")
	} else if n > 0 {
		log.Warn().Int("Groups", n).Msg("stopped gate, git or codemod processes a previous daemon left behind")
	}
	if err := child.Track(paths.Children()); err != nil {
		log.Warn().Err(err).Msg("children will not be recorded; a hard crash could leave some behind")
	}
}

// startEngine starts the embedded engine (and its Web UI when enabled).
func startEngine(cfg *config.Config, paths Paths, log zerolog.Logger) (*engine.Embedded, error) {
	uiPort := 0
	if cfg.UI.Enabled {
		uiPort = cfg.UI.Port
	}
	started := time.Now()
	eo := engine.Options{
		DBPath: paths.DB(), Port: cfg.Temporal.Port, UIPort: uiPort, Namespace: cfg.Temporal.Namespace,
		Retention: time.Duration(cfg.Engine.RetentionDays) * 24 * time.Hour, Synchronous: cfg.Engine.SQLiteSynchronous,
		ListenIP:         cfg.Temporal.Listen,
		Logger:           log,
		SearchAttributes: workflows.SearchAttributeTypes(),
	}
	if cfg.Engine.Database == "postgres" {
		eo.Postgres = &engine.Postgres{DSN: cfg.Engine.Postgres.DSN, MaxConns: cfg.Engine.Postgres.MaxConns}
	}
	emb, err := engine.StartEmbedded(eo)
	if err != nil {
		return nil, err
	}
	log.Info().Str("Frontend", emb.FrontendAddress()).Str("UI", emb.UIURL()).Dur("Took", time.Since(started)).Msg("engine started")
	return emb, nil
}

// connect dials the engine and readies its namespace: the retention of an
// embedded one, the search attributes runs carry. Those two only warn: a
// run works without them.
func connect(ctx context.Context, cfg *config.Config, log zerolog.Logger, embedded bool) (client.Client, error) {
	c, err := engine.DialWait(ctx, cfg, log, 30*time.Second)
	if err != nil {
		return nil, err
	}
	if embedded {
		if err := engine.EnsureRetention(ctx, c, cfg.Temporal.Namespace, time.Duration(cfg.Engine.RetentionDays)*24*time.Hour); err != nil {
			log.Warn().Err(err).Msg("retention")
		}
	}
	if err := RegisterSearchAttributes(ctx, c, cfg.Temporal.Namespace); err != nil {
		log.Warn().Err(err).Msg("search attributes HorizonRepo/HorizonStatus not registered; runs will not carry them")
	}
	return c, nil
}

// serveEngineOnly publishes the engine for workers elsewhere and waits for
// ctx to end.
func serveEngineOnly(ctx context.Context, o Options, paths Paths, identity string, emb *engine.Embedded, log zerolog.Logger) error {
	info := Info{PID: os.Getpid(), Identity: identity, Frontend: emb.FrontendAddress(), UI: emb.UIURL(), Embedded: true, StartedAt: time.Now()}
	if err := WriteInfo(paths, info); err != nil {
		return err
	}
	log.Info().Str("Frontend", emb.FrontendAddress()).Str("Listen", o.Config.Temporal.Listen).Str("Certificate", emb.FrontendCert()).Msg("engine ready for workers")
	if o.Ready != nil {
		o.Ready(info)
	}
	<-ctx.Done()
	log.Info().Msg("shutting down")
	return nil
}

// newActivities is the daemon's activities with their dependencies.
func newActivities(cfg *config.Config, c client.Client, sessions *lazySessions, identity string, log zerolog.Logger) (*activities.Activities, error) {
	notifier, notifyTimeout, err := buildNotifier(cfg.Notify)
	if err != nil {
		return nil, err
	}
	return &activities.Activities{
		Notifier: notifier, NotifyTimeout: notifyTimeout, OutageAfter: cfg.Notify.OutageAfter,
		Home: cfg.DataDir(), Sessions: sessions, GateAllowEnv: cfg.Gate.EnvAllow, AstGrepBin: cfg.Agent.AstGrepBin, Logger: log,
		Reader:   reader.Config{BaseURL: cfg.Reader.BaseURL, Model: cfg.Reader.Model, APIKey: cfg.Reader.APIKey},
		Engine:   core.Reader{Client: c, Namespace: cfg.Temporal.Namespace},
		Signals:  c,
		Identity: identity,
	}, nil
}

// startWorkers starts the worker of the task queue, the worker of this
// home's host queue (acts.HostQueue) and, when configured, the paid
// queue's; stop stops them, the paid one first.
// activityWorker is a worker of activities only on queue, at most slots
// at a time: the host queue's and the paid queue's.
func activityWorker(c client.Client, acts *activities.Activities, queue, identity string, slots int) worker.Worker {
	w := worker.New(c, queue, worker.Options{
		Identity:                           identity,
		WorkerStopTimeout:                  15 * time.Second,
		MaxConcurrentActivityExecutionSize: slots,
		MaxHeartbeatThrottleInterval:       activities.HeartbeatThrottle,
		DisableWorkflowWorker:              true,
		Interceptors:                       []interceptor.WorkerInterceptor{activities.PayloadGuard()},
	})
	w.RegisterActivityWithOptions(acts, activity.RegisterOptions{})
	return w
}

func startWorkers(c client.Client, cfg *config.Config, acts *activities.Activities, identity string) (stop func(), _ error) {
	w := worker.New(c, cfg.Temporal.TaskQueue, worker.Options{
		Identity:          identity,
		WorkerStopTimeout: 15 * time.Second,
		// Agent sessions are long and mostly waiting; gates are CPU heavy.
		// A handful at a time keeps a laptop usable.
		MaxConcurrentActivityExecutionSize: 8,
		MaxHeartbeatThrottleInterval:       activities.HeartbeatThrottle,
		Interceptors:                       []interceptor.WorkerInterceptor{activities.PayloadGuard()},
	})
	workflows.Register(w)
	w.RegisterActivityWithOptions(acts, activity.RegisterOptions{})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start worker on task queue %s: %w", cfg.Temporal.TaskQueue, err)
	}
	// What must run where this home's OpenCode store is: the advisor's
	// watchdog beside a session this worker runs. Only this worker polls
	// it, and a watchdog is mostly waiting.
	hw := activityWorker(c, acts, acts.HostQueue, identity+"/host", 8)
	if err := hw.Start(); err != nil {
		w.Stop()
		return nil, fmt.Errorf("start host-queue worker on %s: %w", acts.HostQueue, err)
	}
	if !cfg.Worker.PaidPoller {
		return func() { hw.Stop(); w.Stop() }, nil
	}
	// Metered sessions of every run come through this one slot.
	pw := activityWorker(c, acts, cfg.PaidQueue(), identity+"/paid", 1)
	if err := pw.Start(); err != nil {
		hw.Stop()
		w.Stop()
		return nil, fmt.Errorf("start paid-queue worker on %s: %w", cfg.PaidQueue(), err)
	}
	return func() { pw.Stop(); hw.Stop(); w.Stop() }, nil
}

// handBack hands back the activities a dead daemon had started
// (HandBackOrphanedActivities), logging what it did.
func handBack(ctx context.Context, c client.Client, namespace, identity string, log zerolog.Logger) {
	n, err := HandBackOrphanedActivities(ctx, c, namespace, identity, log)
	if err != nil {
		log.Warn().Err(err).Msg("hand back orphaned activities")
	} else if n > 0 {
		log.Info().Int("Activities", n).Msg("handed back activities of a previous daemon")
	}
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "localhost"
	}
	return h
}

// lazySessions starts OpenCode on first use: the daemon runs (and `horizon
// status` works) even where OpenCode is missing, and a machine with no runs
// pays nothing for it.
type lazySessions struct {
	cfg   *config.Config
	paths Paths
	log   zerolog.Logger
	// appliers run the sessions of claude-code/… and codex/… routes.
	appliers *applier.Runner

	mu  sync.Mutex
	srv *agent.Server
}

var (
	_ activities.Sessions     = (*lazySessions)(nil)
	_ activities.SessionParts = (*lazySessions)(nil)
	_ activities.AgentLister  = (*lazySessions)(nil)
	_ activities.Compactor    = (*lazySessions)(nil)

	_ activities.ProjectAgentWriter = (*lazySessions)(nil)
)

func (l *lazySessions) server(ctx context.Context) (*agent.Server, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.srv != nil {
		select {
		case <-l.srv.Exited():
			// OpenCode died under us; a fresh server continues its sessions
			// by ID from the same store.
			l.log.Warn().Msg("opencode server exited; starting a new one")
			_ = l.srv.Close()
			l.srv = nil
			_ = os.Remove(l.paths.OpenCodeEndpoint())
		default:
			return l.srv, nil
		}
	}
	bin, err := tools.Find(tools.OpenCode, l.cfg.Agent.OpenCodeBin, "agent.opencode_bin (HORIZON_AGENT_OPENCODE_BIN)")
	if err != nil {
		return nil, err
	}
	confDir := filepath.Join(l.paths.OpenCode(), "config")
	adv, err := advisorAgent(l.cfg)
	if err != nil {
		return nil, err
	}
	if err := agent.WriteAgentFilesWith(confDir, agent.Subagents{Advisor: adv}); err != nil {
		return nil, err
	}
	if err := writeConsultConfig(confDir, l.cfg); err != nil {
		return nil, err
	}
	srv, err := agent.StartServer(ctx, agent.ServerOptions{
		Bin:         bin,
		ConfigDir:   confDir,
		DBPath:      filepath.Join(l.paths.OpenCode(), "opencode.db"),
		Dir:         filepath.Join(l.paths.OpenCode(), "cwd"),
		EnvAllow:    l.cfg.Agent.EnvAllow,
		ExtraConfig: l.cfg.Agent.OpenCodeConfig,
		LogPath:     l.paths.OpenCodeLog(),
		PIDFile:     l.paths.AgentPIDs(),
		Logger:      l.log,
		Agents:      agent.Subagents{Advisor: adv},
	})
	if err != nil {
		return nil, err
	}
	// Said before the specialists are written: a cold `horizon start`
	// waits for it, and asks for its models meanwhile.
	ep := srv.Endpoint()
	ep.Bin, ep.Config = bin, l.cfg.Agent.OpenCodeConfig
	if err := agent.WriteEndpoint(l.paths.OpenCodeEndpoint(), ep); err != nil {
		l.log.Warn().Err(err).Msg("the CLI will start its own opencode to list models")
	}
	if m, err := writeSpecialists(ctx, srv, confDir, l.cfg); err != nil {
		l.log.Warn().Err(err).Msg("specialists not available to the worker")
	} else {
		l.log.Info().Int("Specialists", len(m.Files)).Int("Delegates", len(m.Delegates)).Int("Unavailable", len(m.Unavailable)).Msg("specialists materialised")
	}
	l.srv = srv
	return srv, nil
}

// warm starts OpenCode now, beside the engine and the worker, rather than
// with the first session: a run's first request then waits for neither,
// and the CLI asks this server which models it reaches. A failure is
// logged; the first session tries again and says why.
func (l *lazySessions) warm(ctx context.Context) {
	if _, err := l.server(ctx); err != nil && ctx.Err() == nil {
		l.log.Warn().Err(err).Msg("opencode not started with the daemon; the first session starts it")
		// A CLI waiting for the endpoint stops waiting, and lists the
		// models with its own OpenCode (which says what is wrong).
		if werr := agent.WriteEndpoint(l.paths.OpenCodeEndpoint(), agent.Endpoint{Error: err.Error()}); werr != nil {
			l.log.Warn().Err(werr).Msg("write opencode endpoint")
		}
	}
}

func (l *lazySessions) RunSession(ctx context.Context, req agent.SessionRequest, onProgress func(agent.Progress)) (agent.SessionResult, error) {
	if k, _ := applier.Of(req.Model); k != applier.OpenCode {
		return l.appliers.RunSession(ctx, req, onProgress)
	}
	s, err := l.server(ctx)
	if err != nil {
		return agent.SessionResult{}, err
	}
	return s.RunSession(ctx, req, onProgress)
}

// WriteProjectAgents adds a trusted repository's specialists to
// OpenCode's agents (activities.ProjectAgentWriter). They stay across
// restarts: a lane OpenCode serves again after one reads them at once.
func (l *lazySessions) WriteProjectAgents(ctx context.Context, files map[string][]byte) error {
	if _, err := l.server(ctx); err != nil {
		return err
	}
	return agent.WriteNamedAgents(filepath.Join(l.paths.OpenCode(), "config"), specialist.ProjectPrefix, files)
}

func (l *lazySessions) ValidateModel(ctx context.Context, dir, model string) error {
	if k, _ := applier.Of(model); k != applier.OpenCode {
		return core.ValidateApplier(ctx, l.cfg, model)
	}
	s, err := l.server(ctx)
	if err != nil {
		return err
	}
	return s.ValidateModel(ctx, dir, model)
}

// Models are the routes OpenCode reaches from dir and the leaderboard's
// applier routes whose CLI is connected. Without OpenCode, the applier
// routes alone are something to run on.
func (l *lazySessions) Models(ctx context.Context, dir string) ([]string, error) {
	routes := core.ApplierRoutes(ctx, l.cfg)
	s, err := l.server(ctx)
	if err != nil {
		if len(routes) > 0 {
			return routes, nil
		}
		return nil, err
	}
	models, err := s.Models(ctx, dir)
	if err != nil {
		return nil, err
	}
	return append(models, routes...), nil
}

// Parts reads a session's finished parts for a background task's stream.
func (l *lazySessions) Parts(ctx context.Context, dir, sessionID string) ([]agent.Part, error) {
	s, err := l.server(ctx)
	if err != nil {
		return nil, err
	}
	return s.Parts(ctx, dir, sessionID)
}

// ContextLimit and Summarize give a loop its occupancy and its
// compaction (activities.Compactor).
func (l *lazySessions) ContextLimit(ctx context.Context, dir, model string) (int, error) {
	s, err := l.server(ctx)
	if err != nil {
		return 0, err
	}
	return s.ContextLimit(ctx, dir, model)
}

func (l *lazySessions) Summarize(ctx context.Context, dir, sid, model string) error {
	s, err := l.server(ctx)
	if err != nil {
		return err
	}
	return s.Summarize(ctx, dir, sid, model)
}

// Agents lists the agents OpenCode knows in dir.
func (l *lazySessions) Agents(ctx context.Context, dir string) ([]agent.AgentInfo, error) {
	s, err := l.server(ctx)
	if err != nil {
		return nil, err
	}
	return s.Agents(ctx, dir)
}

// FindSession, Transcript, Follow, Idle and Deliver give the advisor's
// watchdog the worker's session (activities.AdviceSessions).
func (l *lazySessions) FindSession(ctx context.Context, dir, title string) (string, error) {
	if sid, err := l.appliers.FindSession(ctx, dir, title); sid != "" || err != nil {
		return sid, err
	}
	l.mu.Lock()
	started := l.srv != nil
	l.mu.Unlock()
	if !started {
		// An OpenCode worker's session starts OpenCode; until then there
		// is nothing to find (and an applier's worker needs no OpenCode).
		return "", nil
	}
	s, err := l.server(ctx)
	if err != nil {
		return "", err
	}
	return s.FindSession(ctx, dir, title)
}

func (l *lazySessions) Transcript(ctx context.Context, dir, sid string) ([]agent.Message, error) {
	if l.appliers.Knows(sid) {
		return l.appliers.Transcript(ctx, dir, sid)
	}
	s, err := l.server(ctx)
	if err != nil {
		return nil, err
	}
	return s.Transcript(ctx, dir, sid)
}

func (l *lazySessions) Follow(ctx context.Context, dir, sid string) <-chan struct{} {
	if l.appliers.Knows(sid) {
		return l.appliers.Follow(ctx, dir, sid)
	}
	s, err := l.server(ctx)
	if err != nil {
		return nil // no events: the watchdog polls
	}
	return s.Follow(ctx, dir, sid)
}

func (l *lazySessions) Idle(ctx context.Context, dir, sid string) (bool, error) {
	if l.appliers.Knows(sid) {
		return l.appliers.Idle(ctx, dir, sid)
	}
	s, err := l.server(ctx)
	if err != nil {
		return false, err
	}
	return s.Idle(ctx, dir, sid)
}

func (l *lazySessions) Deliver(ctx context.Context, dir, sid string, d agent.Delivery) error {
	if l.appliers.Knows(sid) {
		return l.appliers.Deliver(ctx, dir, sid, d)
	}
	s, err := l.server(ctx)
	if err != nil {
		return err
	}
	return s.Deliver(ctx, dir, sid, d)
}

// Close stops OpenCode if it was started.
func (l *lazySessions) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.srv != nil {
		_ = os.Remove(l.paths.OpenCodeEndpoint())
		l.srv.Close()
		l.srv = nil
	}
}

// buildNotifier is the notifier of the daemon's activities: nil when no
// receiver is configured. One event's delivery must fit the Notify
// activity's timeout, so a slow receiver is given up on by the notifier,
// not killed mid-attempt by the engine.
func buildNotifier(n config.Notify) (notify.Notifier, time.Duration, error) {
	if !n.Configured() {
		return nil, 0, nil
	}
	s, err := notify.New(n)
	if err != nil {
		return nil, 0, err
	}
	if d := s.MaxDuration(); d > workflows.NotifyTimeout {
		return nil, 0, fmt.Errorf("notify: one event may take %s (notify.timeout %s × notify.attempts %d, with backoff), more than the %s a notification may take: lower notify.timeout or notify.attempts",
			d, n.Timeout, n.Attempts, workflows.NotifyTimeout)
	}
	return s, s.MaxDuration(), nil
}
