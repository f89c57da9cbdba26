// Package docker holds the container build and the compose file of a
// horizon cluster; this test keeps the compose file true to horizon's
// settings and to the topology tested natively (README: Running on a
// cluster), since no Docker engine runs it here.
package docker

import (
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/daemon"
	"github.com/horizon/horizon/internal/engine"
)

type composeFile struct {
	Services map[string]service `yaml:"services"`
	Volumes  map[string]any     `yaml:"volumes"`
}

type service struct {
	Image       string            `yaml:"image"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Deploy      struct {
		Replicas string `yaml:"replicas"`
	} `yaml:"deploy"`
}

// imageHome is HORIZON_HOME in the image (docker/Dockerfile).
const imageHome = "/var/lib/horizon"

func load(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("compose.yaml")
	require.NoError(t, err)
	var f composeFile
	require.NoError(t, yaml.Unmarshal(b, &f), "compose.yaml parses (anchors and merge keys included)")
	require.NotEmpty(t, f.Services)
	return f
}

// mounts maps a service's container paths to their sources.
func mounts(s service) map[string]string {
	m := map[string]string{}
	for _, v := range s.Volumes {
		parts := splitVolume(v)
		if len(parts) == 1 {
			m[parts[0]] = "" // anonymous volume
			continue
		}
		m[parts[1]] = parts[0]
	}
	return m
}

// splitVolume splits source:target[:mode], keeping a ${VAR:-default}
// source whole.
func splitVolume(v string) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range v {
		switch {
		case r == '{':
			depth++
		case r == '}':
			depth--
		case r == ':' && depth == 0:
			parts = append(parts, v[start:i])
			start = i + 1
		}
	}
	return append(parts, v[start:])
}

var defaultRef = regexp.MustCompile(`\$\{[A-Z_]+:-([^}]*)\}`)

// withDefaults replaces each ${VAR:-default} by its default, as compose
// does when VAR is unset.
func withDefaults(s string) string { return defaultRef.ReplaceAllString(s, "$1") }

func horizonServices(f composeFile) (engine string, workers []string) {
	for name, s := range f.Services {
		if len(s.Command) == 0 {
			continue
		}
		switch s.Command[0] {
		case "worker":
			workers = append(workers, name)
		case "server":
			engine = name
		}
	}
	sort.Strings(workers)
	return engine, workers
}

// Every HORIZON_* variable a service sets is a horizon setting.
func TestComposeSetsOnlyRealKeys(t *testing.T) {
	f := load(t)
	for name, s := range f.Services {
		var env []string
		for k, v := range s.Environment {
			env = append(env, k+"="+v)
		}
		require.Empty(t, config.UnknownEnv(env), "service %s sets HORIZON_* variables that are no setting", name)
	}
}

// The topology: one engine-only server on PostgreSQL listening beyond
// loopback; workers that join it with its token and certificate; exactly
// one worker, with one replica, polling the paid queue.
func TestComposeTopology(t *testing.T) {
	f := load(t)
	engineSvc, workers := horizonServices(f)
	require.NotEmpty(t, engineSvc, "a service runs `horizon server`")
	require.GreaterOrEqual(t, len(workers), 2, "worker services")
	e := f.Services[engineSvc]
	require.Equal(t, []string{"server", "--engine-only"}, e.Command)
	require.Equal(t, "postgres", e.Environment["HORIZON_ENGINE_DATABASE"])
	pg, err := engine.ParsePostgresDSN(withDefaults(e.Environment["HORIZON_ENGINE_POSTGRES_DSN"]), 0)
	require.NoError(t, err)
	require.Contains(t, f.Services, strings.Split(pg.ConnectAddr, ":")[0], "the DSN names the PostgreSQL service")
	require.False(t, engine.Loopback(e.Environment["HORIZON_TEMPORAL_LISTEN"]), "the engine listens on the compose network")
	require.Equal(t, imageHome, pathOfVolume(t, e, "horizon-engine-home"), "the engine's home (token, certificate) is a named volume")

	var paid []string
	for _, name := range workers {
		s := f.Services[name]
		env := s.Environment
		require.Equal(t, engineSvc+":7233", env["HORIZON_TEMPORAL_ADDRESS"], "%s joins the engine", name)
		engineHome := pathOfVolume(t, s, "horizon-engine-home")
		require.Equal(t, path.Join(engineHome, "engine.token"), env["HORIZON_TEMPORAL_API_KEY_FILE"], "%s presents the engine's token", name)
		require.Equal(t, path.Join(engineHome, "engine-cert.pem"), env["HORIZON_TEMPORAL_TLS_CA"], "%s trusts the engine's certificate", name)
		require.Equal(t, engine.FrontendServerName, env["HORIZON_TEMPORAL_TLS_SERVER_NAME"])
		on := true // worker.paid_poller's default
		if v, ok := env["HORIZON_WORKER_PAID_POLLER"]; ok {
			on, err = strconv.ParseBool(v)
			require.NoError(t, err, "%s: HORIZON_WORKER_PAID_POLLER=%q", name, v)
		}
		if on {
			paid = append(paid, name)
			require.Equal(t, "1", s.Deploy.Replicas, "%s polls the paid queue: exactly one replica", name)
		}
	}
	require.Len(t, paid, 1, "exactly one service polls the paid queue: %v", paid)
}

// What workers must share is one volume at one path in all of them
// (worker.shared_dir, which each checks at start), the repositories are
// at one path in all of them, and what must not be shared (each worker's
// home: lock, OpenCode's store) is per container and outside the shared
// directory.
func TestComposeSharedPaths(t *testing.T) {
	f := load(t)
	_, workers := horizonServices(f)
	var shared, repos string
	for _, name := range workers {
		s := f.Services[name]
		dir := s.Environment["HORIZON_WORKER_SHARED_DIR"]
		require.NotEmpty(t, dir, "%s sets worker.shared_dir", name)
		if shared == "" {
			shared = dir
		}
		require.Equal(t, shared, dir, "%s: every worker the same shared directory", name)
		m := mounts(s)
		require.Equal(t, "horizon-shared", m[dir], "%s mounts the shared volume at worker.shared_dir", name)
		src, ok := m["/repos"]
		require.True(t, ok, "%s mounts the repositories at /repos", name)
		if repos == "" {
			repos = src
		}
		require.Equal(t, repos, src, "%s: the same repositories", name)
		home, ok := m[imageHome]
		require.True(t, ok, "%s has its own home volume", name)
		require.Empty(t, home, "%s: the home is an anonymous volume, one per container (lock, OpenCode's store)", name)
		require.False(t, strings.HasPrefix(imageHome+"/", dir+"/"), "the home is outside the shared directory")
	}
	require.Contains(t, f.Volumes, "horizon-shared")
	// CheckShared, what a worker runs at start, accepts this layout.
	base := t.TempDir()
	cfg := &config.Config{Home: base + imageHome, Worker: config.Worker{SharedDir: base + shared}}
	require.NoError(t, daemon.CheckShared(cfg))
	for _, d := range daemon.SharedDirs {
		require.DirExists(t, path.Join(base+shared, d))
	}
	bad := &config.Config{Home: base + shared + "/home", Worker: config.Worker{SharedDir: base + shared}}
	require.ErrorContains(t, daemon.CheckShared(bad), "inside worker.shared_dir")
}

func pathOfVolume(t *testing.T, s service, volume string) string {
	t.Helper()
	for dst, src := range mounts(s) {
		if src == volume {
			return dst
		}
	}
	t.Fatalf("no mount of volume %s in %v", volume, s.Volumes)
	return ""
}
