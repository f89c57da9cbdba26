// Package engine gives horizon a Temporal engine: either one embedded in the
// daemon process (a single-node server on a SQLite file plus the Web UI, all
// on loopback) or a remote cluster reached by address, TLS and API key.
//
// The embedded engine is tuned for one machine running long, mostly idle
// workflows whose activities run back to back: its queue processors poll
// often (a one-shard server otherwise adds tens of milliseconds to every
// activity) and SQLite runs in WAL mode. Durability is not traded for that
// speed; see sqliteAttributes.
//
// Only the owner reaches the embedded engine: its frontend admits a caller
// only with the token kept in $HORIZON_HOME/engine.token (mode 0600,
// created on first start; see tokenClaims), which Dial presents for every
// horizon client and the Web UI presents for its browser. The server's own
// services talk over mutual TLS (internodeTLS), the system worker through
// the internal frontend.
package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	tconfig "go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/horizon/horizon/config"
)

const loopbackIP = "127.0.0.1"

// Options configures the embedded engine.
type Options struct {
	// DBPath is the SQLite file; created with its schema on first start.
	// With Postgres set it is unused except to place the token file.
	DBPath string
	// Postgres, when set, keeps the engine's state in PostgreSQL instead
	// of the SQLite file (engine.database: postgres).
	Postgres *Postgres
	// TokenPath is the access token file (created on first start); empty
	// means TokenFile next to DBPath, which is $HORIZON_HOME/engine.token.
	TokenPath string
	// Port is the frontend gRPC port.
	Port int
	// ListenIP is where the frontend listens (temporal.listen); empty is
	// 127.0.0.1. Beyond loopback the frontend serves TLS only, under a
	// certificate kept beside the token (FrontendCertFile), and still
	// admits only the token: workers elsewhere present it as their API key.
	// The Web UI listens there too: it carries the token, so whoever
	// reaches it acts as the owner (publish it only where that is meant).
	// The server's own services stay on loopback, under mutual TLS.
	ListenIP string
	// UIPort is the Web UI port on 127.0.0.1; 0 disables the UI.
	UIPort int
	// Namespace is created if missing, with Retention.
	Namespace string
	Retention time.Duration
	// Synchronous is the SQLite synchronous pragma (FULL or NORMAL).
	Synchronous string
	Logger      zerolog.Logger

	// SearchAttributes are created with a new namespace (an existing one
	// keeps its own: register those at runtime).
	SearchAttributes map[string]enumspb.IndexedValueType

	// Untuned starts the server with its stock queue pollers and SQLite
	// journal, for the benchmark that shows what the tuning buys.
	Untuned bool
}

// Embedded is a running in-process engine.
type Embedded struct {
	server   temporal.Server
	conf     *tconfig.Config
	ui       *uiServer
	uiDone   chan error
	opts     Options
	stopOnce sync.Once
}

// PortInUseError is an address something else holds (config.PortInUseError).
type PortInUseError = config.PortInUseError

// StartEmbedded starts the server and the UI and returns once the frontend
// accepts connections.
func StartEmbedded(o Options) (*Embedded, error) {
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Retention <= 0 {
		o.Retention = 30 * 24 * time.Hour
	}
	if o.ListenIP == "" {
		o.ListenIP = loopbackIP
	}
	if err := checkFree("engine frontend", "HORIZON_TEMPORAL_PORT", o.ListenIP, o.Port); err != nil {
		return nil, err
	}
	if o.UIPort != 0 {
		if err := checkFree("Web UI", "HORIZON_UI_PORT", o.ListenIP, o.UIPort); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(o.DBPath), 0o700); err != nil {
		return nil, fmt.Errorf("engine: create %s: %w", filepath.Dir(o.DBPath), err)
	}
	if o.TokenPath == "" {
		o.TokenPath = filepath.Join(filepath.Dir(o.DBPath), TokenFile)
	}
	token, err := EnsureToken(o.TokenPath)
	if err != nil {
		return nil, err
	}
	var sqlConf, visConf *tconfig.SQL
	if o.Postgres != nil {
		sqlConf, visConf, err = preparePostgres(o)
	} else {
		sqlConf, err = prepareDB(o)
		visConf = sqlConf
	}
	if err != nil {
		return nil, err
	}
	conf, err := serverConfig(o, sqlConf, visConf)
	if err != nil {
		return nil, err
	}
	logger := newServerLogger(o.Logger)
	hosts := map[primitives.ServiceName]static.Hosts{}
	services := make([]string, 0, len(conf.Services))
	for name, svc := range conf.Services {
		// Membership addresses are how the services reach each other: the
		// frontend listening on every interface is still reached on loopback.
		hosts[primitives.ServiceName(name)] = static.SingleLocalHost(net.JoinHostPort(loopbackIP, strconv.Itoa(svc.RPC.GRPCPort)))
		services = append(services, name)
	}
	srv, err := temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(services),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(logger),
		temporal.WithAuthorizer(authorization.NewDefaultAuthorizer()),
		temporal.WithClaimMapper(func(*tconfig.Config) authorization.ClaimMapper { return tokenClaims{token: []byte(token)} }),
		temporal.WithDynamicConfigClient(dynamicConfig(o.Untuned)),
	)
	if err != nil {
		return nil, fmt.Errorf("engine: build server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("engine: start server: %w", err)
	}
	e := &Embedded{server: srv, conf: conf, opts: o}
	if o.UIPort != 0 {
		uiToken, err := EnsureToken(filepath.Join(filepath.Dir(o.TokenPath), UITokenFile))
		if err != nil {
			_ = srv.Stop()
			return nil, err
		}
		uo := uiOptions{
			listenIP: o.ListenIP, port: o.UIPort, frontend: net.JoinHostPort(loopbackIP, strconv.Itoa(o.Port)),
			namespace: o.Namespace, engineToken: token, uiToken: uiToken,
		}
		if !Loopback(o.ListenIP) {
			uo.tls = uiconfig.TLS{CaFile: filepath.Join(filepath.Dir(o.TokenPath), FrontendCertFile), ServerName: FrontendServerName, EnableHostVerification: true}
		}
		if e.ui, err = newUIServer(uo); err != nil {
			_ = srv.Stop()
			return nil, err
		}
		e.uiDone = make(chan error, 1)
		go func() { e.uiDone <- e.ui.serve() }()
	}
	return e, nil
}

// TokenPath is the file holding the engine's access token.
func (e *Embedded) TokenPath() string { return e.opts.TokenPath }

// FrontendAddress is the gRPC address clients dial.
func (e *Embedded) FrontendAddress() string {
	return net.JoinHostPort(e.reachIP(), strconv.Itoa(e.opts.Port))
}

// reachIP is the IP this machine reaches the engine's listeners on.
func (e *Embedded) reachIP() string {
	if p := net.ParseIP(e.opts.ListenIP); p == nil || p.IsUnspecified() {
		return loopbackIP // listening everywhere, reached here on loopback
	}
	return e.opts.ListenIP
}

// FrontendCert is the frontend's certificate file when it serves TLS
// (ListenIP beyond loopback), else "".
func (e *Embedded) FrontendCert() string {
	if Loopback(e.opts.ListenIP) {
		return ""
	}
	return filepath.Join(filepath.Dir(e.opts.TokenPath), FrontendCertFile)
}

// UIURL is the Web UI's base URL, or "" without a UI.
func (e *Embedded) UIURL() string {
	if e.ui == nil {
		return ""
	}
	return "http://" + net.JoinHostPort(e.reachIP(), strconv.Itoa(e.opts.UIPort))
}

// Stop stops the UI and the server. Safe to call twice.
func (e *Embedded) Stop() {
	e.stopOnce.Do(func() {
		if e.ui != nil {
			e.ui.stop()
		}
		if err := e.server.Stop(); err != nil {
			e.opts.Logger.Warn().Err(err).Msg("engine stop")
		}
	})
}

func checkFree(what, setting, ip string, port int) error {
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return &PortInUseError{What: what, Addr: addr, Err: err, Setting: setting}
	}
	return l.Close()
}

// freePorts finds n distinct free loopback ports, none of them in
// exclude (ports the engine was given: its frontend, its Web UI). The
// listeners are held until all n are found, so the kernel cannot hand
// one out twice; a port is still only free until someone binds it.
func freePorts(n int, exclude ...int) ([]int, error) {
	var (
		held  []net.Listener
		ports []int
	)
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for tries := 0; len(ports) < n; tries++ {
		if tries > 10*n+10 {
			return nil, fmt.Errorf("engine: find %d free ports: the kernel keeps handing out excluded ones", n)
		}
		l, err := net.Listen("tcp", net.JoinHostPort(loopbackIP, "0"))
		if err != nil {
			return nil, fmt.Errorf("engine: find a free port: %w", err)
		}
		held = append(held, l)
		if p := l.Addr().(*net.TCPAddr).Port; !slices.Contains(exclude, p) {
			ports = append(ports, p)
		}
	}
	return ports, nil
}

// sqliteAttributes are the connection attributes of the engine's database.
//
// journal_mode=wal: a commit appends to the write-ahead log and is durable
// once written, so a SIGKILL of the daemon at any instant loses no committed
// transaction and never leaves a torn database (the next open replays the
// log). synchronous=FULL additionally fsyncs the log on every commit, so an
// OS crash or power loss loses nothing either; NORMAL (configurable) fsyncs
// only at checkpoints: still crash-safe for the process, at risk only on
// power loss. busy_timeout lets the engine's few connections wait for each
// other instead of failing with "database is locked".
func sqliteAttributes(o Options) map[string]string {
	sync := o.Synchronous
	if sync == "" {
		sync = "FULL"
	}
	if o.Untuned {
		return map[string]string{"mode": "rwc"}
	}
	return map[string]string{
		"mode":         "rwc",
		"journal_mode": "wal",
		"synchronous":  sync,
		"busy_timeout": "10000",
	}
}

func prepareDB(o Options) (*tconfig.SQL, error) {
	conf := &tconfig.SQL{
		PluginName:        sqliteplugin.PluginName,
		DatabaseName:      o.DBPath,
		ConnectAttributes: sqliteAttributes(o),
	}
	if _, err := os.Stat(o.DBPath); errors.Is(err, os.ErrNotExist) {
		if err := sqliteschema.SetupSchema(conf); err != nil {
			_ = os.Remove(o.DBPath)
			return nil, fmt.Errorf("engine: create schema in %s: %w", o.DBPath, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("engine: stat %s: %w", o.DBPath, err)
	}
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, o.Namespace, false, o.SearchAttributes)
	if err != nil {
		return nil, fmt.Errorf("engine: namespace %s: %w", o.Namespace, err)
	}
	// New namespaces would get 24 h; runs last days and their records must
	// outlive them. Existing namespaces are raised at runtime (EnsureRetention).
	ns.Detail.Config.Retention = durationpb.New(o.Retention)
	if err := sqliteschema.CreateNamespaces(conf, ns); err != nil {
		return nil, fmt.Errorf("engine: create namespace %s: %w", o.Namespace, err)
	}
	return conf, nil
}

const clusterName = "active"

func serverConfig(o Options, sqlConf, visConf *tconfig.SQL) (*tconfig.Config, error) {
	var conf tconfig.Config
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = loopbackIP
	if o.Postgres != nil {
		conf.Persistence.DefaultStore = "postgres"
		conf.Persistence.VisibilityStore = "postgres-visibility"
		conf.Persistence.NumHistoryShards = pgHistoryShards
		conf.Persistence.DataStores = map[string]tconfig.DataStore{"postgres": {SQL: sqlConf}, "postgres-visibility": {SQL: visConf}}
	} else {
		conf.Persistence.DefaultStore = "sqlite"
		conf.Persistence.VisibilityStore = "sqlite"
		conf.Persistence.NumHistoryShards = 1
		conf.Persistence.DataStores = map[string]tconfig.DataStore{"sqlite": {SQL: sqlConf}}
	}

	// The frontend's HTTP port and the four internal services' ports,
	// found together so no two are the same, and none is the frontend's
	// or the Web UI's.
	ports, err := freePorts(5, o.Port, o.UIPort)
	if err != nil {
		return nil, err
	}
	httpPort, internal := ports[0], ports[1:]
	frontend := net.JoinHostPort(loopbackIP, strconv.Itoa(o.Port))
	conf.ClusterMetadata = &cluster.Config{
		EnableGlobalNamespace:    false,
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             frontend,
				HTTPAddress:            net.JoinHostPort(loopbackIP, strconv.Itoa(httpPort)),
				ClusterID:              "horizon",
			},
		},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Services = map[string]tconfig.Service{}
	// The internal frontend serves the server's own system worker
	// (schedules, batch operations) without the token, so it is reachable
	// only over internode mutual TLS.
	for _, name := range []string{"frontend", "internal-frontend", "history", "matching", "worker"} {
		var svc tconfig.Service
		svc.RPC.BindOnIP = loopbackIP
		if name == "frontend" {
			svc.RPC.BindOnIP = o.ListenIP
			svc.RPC.GRPCPort = o.Port
			svc.RPC.HTTPPort = httpPort
		} else {
			// Internal services only talk to each other; any free port will do.
			p := internal[0]
			internal = internal[1:]
			// No HTTP port: an internal service's HTTP API would answer
			// without the token (it trusts internode callers), and
			// nothing of horizon's speaks HTTP to it.
			svc.RPC.GRPCPort = p
		}
		conf.Services[name] = svc
	}
	internode, err := internodeTLS()
	if err != nil {
		return nil, err
	}
	conf.Global.TLS.Internode = internode
	if !Loopback(o.ListenIP) {
		certPath, keyPath, err := ensureFrontendCert(filepath.Dir(o.TokenPath))
		if err != nil {
			return nil, err
		}
		conf.Global.TLS.Frontend = tconfig.GroupTLS{Server: tconfig.ServerTLS{CertFile: certPath, KeyFile: keyPath}}
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	// With an internal frontend, the server's own clients find it through
	// membership; PublicClient must stay empty.
	return &conf, nil
}

// dynamicConfig tunes a one-shard server for latency. The defaults cap the
// history queue processors at 20 polls a second, which alone adds ~45 ms to
// every activity dispatch; 2000 removes that floor at negligible idle cost.
func dynamicConfig(untuned bool) dynamicconfig.StaticClient {
	if untuned {
		return dynamicconfig.StaticClient{}
	}
	return dynamicconfig.StaticClient{
		dynamicconfig.TransferProcessorMaxPollRPS.Key():   2000,
		dynamicconfig.TimerProcessorMaxPollRPS.Key():      2000,
		dynamicconfig.VisibilityProcessorMaxPollRPS.Key(): 2000,
		dynamicconfig.OutboundProcessorMaxPollRPS.Key():   2000,
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key():  8192,
		// The Web UI and `horizon list` read visibility; the default is tight.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
	}
}

// WaitReady polls until the engine answers or ctx ends.
func WaitReady(ctx context.Context, dial func(context.Context) error) error {
	var last error
	for {
		if last = dial(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("engine did not answer: %w (last error: %v)", ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
