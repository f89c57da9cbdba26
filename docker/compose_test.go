// Package docker holds the container build and the compose file of a
// horizon cluster; this test keeps the compose file true to horizon's
// settings and to the topology tested natively (README: Running on a
// cluster), since no Docker engine runs it here.
package docker

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"

	"github.com/horizon/horizon/app/daemon"
	"github.com/horizon/horizon/app/engine"
	"github.com/horizon/horizon/config"
)

// imageHome is HORIZON_HOME in the image (docker/Dockerfile).
const imageHome = "/var/lib/horizon"

// load reads compose.yaml, then each override (compose's own merge, as
// `docker compose -f compose.yaml -f override.yaml` does), with
// compose-go, the Compose specification's loader: schema validation,
// anchors and merge keys, !reset, and ${VAR:-default} interpolated from an
// empty environment, so every compose variable takes its default. The
// optional env_file is not read: what is checked is the file itself.
func load(t *testing.T, overrides ...string) (*types.Project, error) {
	t.Helper()
	dir, err := filepath.Abs(".")
	require.NoError(t, err)
	files := []types.ConfigFile{{Filename: filepath.Join(dir, "compose.yaml")}}
	for _, o := range overrides {
		files = append(files, types.ConfigFile{Filename: filepath.Join(dir, o)})
	}
	return loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  dir,
		ConfigFiles: files,
		Environment: types.Mapping{},
	}, func(o *loader.Options) {
		o.SkipResolveEnvironment = true
		o.SkipInclude = true
	})
}

func mustLoad(t *testing.T, overrides ...string) *types.Project {
	t.Helper()
	p, err := load(t, overrides...)
	require.NoError(t, err, "compose-go loads compose.yaml %v", overrides)
	require.NotEmpty(t, p.Services)
	return p
}

// env is a service's environment; a variable listed without a value
// (taken from the shell) is "".
func env(s types.ServiceConfig) map[string]string {
	m := map[string]string{}
	for k, v := range s.Environment {
		if v != nil {
			m[k] = *v
		} else {
			m[k] = ""
		}
	}
	return m
}

// mount is a service's mount at a container path.
func mount(s types.ServiceConfig, target string) (types.ServiceVolumeConfig, bool) {
	for _, v := range s.Volumes {
		if v.Target == target {
			return v, true
		}
	}
	return types.ServiceVolumeConfig{}, false
}

// pathOfVolume is where a service mounts a named volume.
func pathOfVolume(s types.ServiceConfig, volume string) (string, bool) {
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeVolume && v.Source == volume {
			return v.Target, true
		}
	}
	return "", false
}

// home is HORIZON_HOME in a service's container.
func home(s types.ServiceConfig) string {
	if h := env(s)["HORIZON_HOME"]; h != "" {
		return h
	}
	return imageHome
}

func horizonServices(p *types.Project) (engine string, workers []string) {
	var engines []string
	for name, s := range p.Services {
		if len(s.Command) == 0 {
			continue
		}
		switch s.Command[0] {
		case "worker":
			workers = append(workers, name)
		case "server":
			engines = append(engines, name)
		}
	}
	sort.Strings(workers)
	sort.Strings(engines)
	if len(engines) == 1 {
		engine = engines[0]
	}
	return engine, workers
}

// checkKeys: every HORIZON_* variable a service sets is a horizon setting.
func checkKeys(p *types.Project) []string {
	var out []string
	for name, s := range p.Services {
		var kv []string
		for k, v := range env(s) {
			kv = append(kv, k+"="+v)
		}
		for _, u := range config.UnknownEnv(kv) {
			out = append(out, fmt.Sprintf("service %s: %s", name, u))
		}
	}
	sort.Strings(out)
	return out
}

// checkTopology: one engine-only server on PostgreSQL listening beyond
// loopback; workers that join it with its token and certificate; exactly
// one worker, with one replica, polling the paid queue.
func checkTopology(p *types.Project) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	engineSvc, workers := horizonServices(p)
	if len(workers) < 2 {
		bad("%d worker services, want at least 2", len(workers))
	}
	if engineSvc == "" {
		bad("not exactly one service runs `horizon server`")
	} else {
		e := p.Services[engineSvc]
		ev := env(e)
		if got := []string(e.Command); !equal(got, []string{"server", "--engine-only"}) {
			bad("engine %s: command %q, want server --engine-only", engineSvc, got)
		}
		if ev["HORIZON_ENGINE_DATABASE"] != "postgres" {
			bad("engine %s: HORIZON_ENGINE_DATABASE=%q, want postgres", engineSvc, ev["HORIZON_ENGINE_DATABASE"])
		}
		if pg, err := engine.ParsePostgresDSN(ev["HORIZON_ENGINE_POSTGRES_DSN"], 0); err != nil {
			bad("engine %s: HORIZON_ENGINE_POSTGRES_DSN: %v", engineSvc, err)
		} else if host := strings.Split(pg.ConnectAddr, ":")[0]; !hasService(p, host) {
			bad("engine %s: the DSN names host %s, no service of this file", engineSvc, host)
		}
		if engine.Loopback(ev["HORIZON_TEMPORAL_LISTEN"]) {
			bad("engine %s: HORIZON_TEMPORAL_LISTEN=%q is loopback, unreachable on the compose network", engineSvc, ev["HORIZON_TEMPORAL_LISTEN"])
		}
		if dst, ok := pathOfVolume(e, "horizon-engine-home"); !ok || dst != home(e) {
			bad("engine %s: its home %s (token, certificate) is not the volume horizon-engine-home", engineSvc, home(e))
		}
	}

	var paid []string
	for _, name := range workers {
		s := p.Services[name]
		ev := env(s)
		if want := engineSvc + ":7233"; ev["HORIZON_TEMPORAL_ADDRESS"] != want {
			bad("worker %s: HORIZON_TEMPORAL_ADDRESS=%q, want %s (the engine)", name, ev["HORIZON_TEMPORAL_ADDRESS"], want)
		}
		if engineHome, ok := pathOfVolume(s, "horizon-engine-home"); !ok {
			bad("worker %s does not mount the engine's home (horizon-engine-home)", name)
		} else {
			if want := path.Join(engineHome, "engine.token"); ev["HORIZON_TEMPORAL_API_KEY_FILE"] != want {
				bad("worker %s: HORIZON_TEMPORAL_API_KEY_FILE=%q, want the engine's token %s", name, ev["HORIZON_TEMPORAL_API_KEY_FILE"], want)
			}
			if want := path.Join(engineHome, "engine-cert.pem"); ev["HORIZON_TEMPORAL_TLS_CA"] != want {
				bad("worker %s: HORIZON_TEMPORAL_TLS_CA=%q, want the engine's certificate %s", name, ev["HORIZON_TEMPORAL_TLS_CA"], want)
			}
		}
		if ev["HORIZON_TEMPORAL_TLS_SERVER_NAME"] != engine.FrontendServerName {
			bad("worker %s: HORIZON_TEMPORAL_TLS_SERVER_NAME=%q, want %s", name, ev["HORIZON_TEMPORAL_TLS_SERVER_NAME"], engine.FrontendServerName)
		}
		on := true // worker.paid_poller's default
		if v, set := ev["HORIZON_WORKER_PAID_POLLER"]; set {
			var err error
			if on, err = strconv.ParseBool(v); err != nil {
				bad("worker %s: HORIZON_WORKER_PAID_POLLER=%q: %v", name, v, err)
			}
		}
		if on {
			paid = append(paid, name)
			if s.Deploy == nil || s.Deploy.Replicas == nil || *s.Deploy.Replicas != 1 {
				bad("worker %s polls the paid queue with other than exactly one replica", name)
			}
		}
	}
	if len(paid) != 1 {
		bad("%d services poll the paid queue %v, want exactly one", len(paid), paid)
	}
	return out
}

// checkShared: what workers must share is one volume at one path in all
// of them (worker.shared_dir, which each checks at start), the
// repositories are at one path in all of them, and what must not be
// shared (each worker's home: lock, OpenCode's store) is per container and
// outside the shared directory. Each worker's layout is then given to
// daemon.CheckShared, what a worker runs at start, under base.
func checkShared(p *types.Project, base string) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	_, workers := horizonServices(p)
	var shared, repos string
	for _, name := range workers {
		s := p.Services[name]
		dir := env(s)["HORIZON_WORKER_SHARED_DIR"]
		if dir == "" {
			bad("worker %s does not set worker.shared_dir", name)
			continue
		}
		if shared == "" {
			shared = dir
		}
		if dir != shared {
			bad("worker %s: shared directory %s, another worker %s", name, dir, shared)
		}
		if v, ok := mount(s, dir); !ok || v.Type != types.VolumeTypeVolume || v.Source != "horizon-shared" || v.ReadOnly {
			bad("worker %s does not mount the volume horizon-shared read-write at worker.shared_dir %s", name, dir)
		}
		if r, ok := mount(s, "/repos"); !ok {
			bad("worker %s does not mount the repositories at /repos", name)
		} else {
			if repos == "" {
				repos = r.Source
			}
			if r.Source != repos {
				bad("worker %s: repositories from %s, another worker from %s", name, r.Source, repos)
			}
		}
		h := home(s)
		if v, ok := mount(s, h); !ok || v.Type != types.VolumeTypeVolume || v.Source != "" {
			bad("worker %s: its home %s is not an anonymous volume, one per container (lock, OpenCode's store)", name, h)
		}
		cfg := &config.Config{Home: base + "/" + name + h, Worker: config.Worker{SharedDir: base + "/" + name + dir}}
		if err := daemon.CheckShared(cfg); err != nil {
			bad("worker %s: at start: %v", name, err)
		}
	}
	if _, ok := p.Volumes["horizon-shared"]; !ok {
		bad("no volume horizon-shared")
	}
	return out
}

func hasService(p *types.Project, name string) bool {
	_, ok := p.Services[name]
	return ok
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Every HORIZON_* variable a service sets is a horizon setting.
func TestComposeSetsOnlyRealKeys(t *testing.T) {
	require.Empty(t, checkKeys(mustLoad(t)))
}

func TestComposeTopology(t *testing.T) {
	p := mustLoad(t)
	require.Empty(t, checkTopology(p))
	_, workers := horizonServices(p)
	require.Equal(t, []string{"horizon-paid", "horizon-worker"}, workers)
}

func TestComposeSharedPaths(t *testing.T) {
	base := t.TempDir()
	require.Empty(t, checkShared(mustLoad(t), base))
	for _, d := range daemon.SharedDirs {
		require.DirExists(t, path.Join(base, "horizon-worker", "/var/lib/horizon-shared", d))
	}
}

// Each check can fail: compose.yaml with a small override from testdata
// that breaks one rule is reported by that check.
func TestComposeChecksFail(t *testing.T) {
	for _, tt := range []struct {
		override string
		check    func(*types.Project, string) []string
		want     string
	}{
		{"unknown-key.yaml", keys, "HORIZON_WORKER_PAID_POLLR is not a horizon setting"},
		{"two-paid-pollers.yaml", topology, "2 services poll the paid queue"},
		{"paid-poller-default.yaml", topology, "2 services poll the paid queue"},
		{"paid-replicas.yaml", topology, "worker horizon-paid polls the paid queue with other than exactly one replica"},
		{"engine-sqlite.yaml", topology, "HORIZON_ENGINE_DATABASE=\"sqlite\""},
		{"engine-dsn-host.yaml", topology, "the DSN names host db"},
		{"engine-loopback.yaml", topology, "is loopback"},
		{"engine-command.yaml", topology, "want server --engine-only"},
		{"worker-address.yaml", topology, "worker horizon-worker: HORIZON_TEMPORAL_ADDRESS"},
		{"worker-token.yaml", topology, "worker horizon-paid: HORIZON_TEMPORAL_API_KEY_FILE"},
		{"worker-ca.yaml", topology, "worker horizon-worker: HORIZON_TEMPORAL_TLS_CA"},
		{"worker-server-name.yaml", topology, "HORIZON_TEMPORAL_TLS_SERVER_NAME"},
		{"shared-dir-differs.yaml", shared, "worker horizon-worker: shared directory /var/lib/horizon-other"},
		{"shared-dir-unset.yaml", shared, "worker horizon-paid does not set worker.shared_dir"},
		{"shared-not-volume.yaml", shared, "worker horizon-paid does not mount the volume horizon-shared"},
		{"repos-differ.yaml", shared, "worker horizon-worker: repositories from"},
		{"home-named.yaml", shared, "its home /var/lib/horizon is not an anonymous volume"},
		{"home-inside-shared.yaml", shared, "inside worker.shared_dir"},
	} {
		t.Run(tt.override, func(t *testing.T) {
			p := mustLoad(t, "testdata/"+tt.override)
			problems := tt.check(p, t.TempDir())
			t.Log(strings.Join(problems, "\n"))
			require.NotEmpty(t, problems)
			require.Contains(t, strings.Join(problems, "\n"), tt.want)
		})
	}
	// What compose-go itself rejects (the Compose schema).
	_, err := load(t, "testdata/invalid-schema.yaml")
	require.ErrorContains(t, err, "replicas")
}

func keys(p *types.Project, _ string) []string     { return checkKeys(p) }
func topology(p *types.Project, _ string) []string { return checkTopology(p) }
func shared(p *types.Project, base string) []string {
	return checkShared(p, base)
}
