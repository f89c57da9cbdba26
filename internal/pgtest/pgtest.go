// Package pgtest starts a throw-away PostgreSQL cluster for tests: initdb
// in a temporary directory, a server on a free loopback port, stopped and
// removed when the test ends. It uses the server binaries of the machine's
// PostgreSQL package (Debian: /usr/lib/postgresql/<version>/bin); a test
// skips, naming what to install, only where they are missing.
//
// The cluster trades durability for speed (fsync off): it lives for one
// test. Run as root, the server runs as the unprivileged user postgres
// (initdb refuses root).
package pgtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"
)

// Cluster is a running throw-away PostgreSQL server.
type Cluster struct {
	// Port is the server's port on 127.0.0.1.
	Port int
	// User is the superuser, reached without a password from loopback.
	User string

	bin, data, runAs string
}

// ErrNoServer is returned by Find when no PostgreSQL server binaries exist.
var ErrNoServer = fmt.Errorf("no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (apt-get install -y postgresql)")

// Find returns the newest /usr/lib/postgresql/<v>/bin holding initdb,
// or the directory of an initdb on PATH.
func Find() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	if len(dirs) > 0 {
		return filepath.Dir(dirs[0]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", ErrNoServer
}

func version(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// Start starts a cluster for tb and stops it when tb ends. It skips tb
// when PostgreSQL is not installed.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	bin, err := Find()
	if err != nil {
		tb.Skipf("PostgreSQL is not installed here: %v", err)
	}
	c, err := start(bin)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(c.Stop)
	return c
}

func start(bin string) (*Cluster, error) {
	c := &Cluster{bin: bin, User: "postgres"}
	data, err := os.MkdirTemp("", "horizon-pg-")
	if err != nil {
		return nil, fmt.Errorf("make data directory: %w", err)
	}
	c.data = data
	if os.Geteuid() == 0 {
		// initdb and postgres refuse to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(data)
			return nil, fmt.Errorf("running as root needs the unprivileged user postgres (made by the postgresql package): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(data, uid, gid); err != nil {
			os.RemoveAll(data)
			return nil, fmt.Errorf("hand %s to postgres: %w", data, err)
		}
		c.runAs = "postgres"
	}
	if out, err := c.run("initdb", "-D", data, "-U", c.User, "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		os.RemoveAll(data)
		return nil, fmt.Errorf("initdb %s: %w\n%s", data, err, out)
	}
	var lastErr error
	for try := 0; try < 5; try++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		c.Port = port
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", port, data)
		out, err := c.run("pg_ctl", "-D", data, "-l", filepath.Join(data, "server.log"), "-o", opts, "-w", "-t", "60", "start")
		if err == nil {
			return c, nil
		}
		lastErr = fmt.Errorf("pg_ctl start on port %d: %w\n%s%s", port, err, out, c.logTail())
	}
	os.RemoveAll(data)
	return nil, lastErr
}

func (c *Cluster) run(tool string, args ...string) ([]byte, error) {
	name := filepath.Join(c.bin, tool)
	if c.runAs != "" {
		args = append([]string{"-u", c.runAs, "--", name}, args...)
		name = "runuser"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = os.TempDir()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

func (c *Cluster) logTail() string {
	b, err := os.ReadFile(filepath.Join(c.data, "server.log"))
	if err != nil {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "\n--- server.log ---\n" + string(b)
}

// DSN is a postgres:// URL for database db on the cluster.
func (c *Cluster) DSN(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", c.User, c.Port, db)
}

// Stop stops the server at once and removes its files.
func (c *Cluster) Stop() {
	if c.data == "" {
		return
	}
	_, _ = c.run("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop")
	_ = os.RemoveAll(c.data)
	c.data = ""
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
