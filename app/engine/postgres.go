package engine

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	tconfig "go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	postgresplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	pgschema "go.temporal.io/server/schema/postgresql/v12"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	schematool "go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Postgres keeps the engine's state in PostgreSQL: the database named by
// DSN holds the executions, the one named with a "_visibility" suffix the
// visibility records (Temporal keeps them apart, as the official images
// do). Both are created when the DSN's user may, and their schemas are set
// up and upgraded on every start with Temporal's own schema tool, so a newer
// horizon (hence a newer server) upgrades an older database in place.
type Postgres struct {
	// DSN is a URL: postgres://user:password@host:port/database?sslmode=disable.
	DSN string
	// MaxConns bounds the engine's connections per database (0: 20).
	MaxConns int
}

// pgHistoryShards is fixed for the life of a PostgreSQL database (the
// server refuses another count later): four lets several workers' runs
// progress in parallel without the single-shard queue of the SQLite engine.
const pgHistoryShards = 4

// pgSchemas are the embedded schema directories the schema tool applies.
var pgSchemas = struct{ main, visibility string }{"postgresql/v12/temporal", "postgresql/v12/visibility"}

// ParsePostgresDSN turns the DSN into the server's SQL settings for the
// main database; the visibility database is the same with its own name.
func ParsePostgresDSN(dsn string, maxConns int) (*tconfig.SQL, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return nil, fmt.Errorf("engine.postgres.dsn %q is not a postgres:// URL (postgres://user:password@host:5432/temporal?sslmode=disable)", redactDSN(dsn))
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return nil, fmt.Errorf("engine.postgres.dsn %q names no database: end it with /temporal (or another name)", redactDSN(dsn))
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "5432")
	}
	if maxConns <= 0 {
		maxConns = 20
	}
	conf := &tconfig.SQL{
		PluginName:        postgresplugin.PluginName,
		DatabaseName:      db,
		ConnectAddr:       host,
		ConnectProtocol:   "tcp",
		User:              u.User.Username(),
		MaxConns:          maxConns,
		MaxIdleConns:      maxConns,
		ConnectAttributes: map[string]string{},
	}
	conf.Password, _ = u.User.Password()
	for k, vs := range u.Query() {
		if len(vs) > 0 {
			conf.ConnectAttributes[k] = vs[len(vs)-1]
		}
	}
	return conf, nil
}

// redactDSN hides a DSN's password in messages.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// visibilityOf is the visibility database's settings beside main's.
func visibilityOf(main *tconfig.SQL) *tconfig.SQL {
	v := *main
	v.DatabaseName = main.DatabaseName + "_visibility"
	v.ConnectAttributes = map[string]string{}
	for k, val := range main.ConnectAttributes {
		v.ConnectAttributes[k] = val
	}
	return &v
}

// preparePostgres creates both databases if missing, brings their schemas
// to this server's versions and creates the namespace with its retention
// and search attributes if missing.
func preparePostgres(o Options) (main, vis *tconfig.SQL, err error) {
	main, err = ParsePostgresDSN(o.Postgres.DSN, o.Postgres.MaxConns)
	if err != nil {
		return nil, nil, err
	}
	vis = visibilityOf(main)
	logger := log.NewNoopLogger()
	for _, db := range []struct {
		conf    *tconfig.SQL
		schema  string
		version string
	}{
		{main, pgSchemas.main, pgschema.Version},
		{vis, pgSchemas.visibility, pgschema.VisibilityVersion},
	} {
		if err := setupPostgresDB(db.conf, db.schema, db.version, logger); err != nil {
			return nil, nil, err
		}
	}
	// The namespace writer works on any SQL store, PostgreSQL included,
	// despite its package's name: it inserts the namespace row the way the
	// server does, before the server starts (no registry refresh to wait for).
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, o.Namespace, false, o.SearchAttributes)
	if err != nil {
		return nil, nil, fmt.Errorf("engine: namespace %s: %w", o.Namespace, err)
	}
	ns.Detail.Config.Retention = durationpb.New(o.Retention)
	if err := sqliteschema.CreateNamespaces(main, ns); err != nil {
		return nil, nil, fmt.Errorf("engine: create namespace %s in PostgreSQL database %s: %w", o.Namespace, main.DatabaseName, err)
	}
	return main, vis, nil
}

// setupPostgresDB is what `temporal-sql-tool create-database`,
// `setup-schema -v 0.0` and `update-schema -d <versioned dir>` do, run in
// process with the schema files embedded in the server module.
func setupPostgresDB(conf *tconfig.SQL, schemaName, want string, logger log.Logger) error {
	c := *conf
	if err := sqltool.DoCreateDatabase(&c, "postgres", logger); err != nil {
		// A managed server may not let this user create databases; an
		// existing database is all we need, which connecting proves below.
		logger.Warn("create database: " + err.Error())
	}
	conn, err := sqltool.NewConnection(conf, logger)
	if err != nil {
		return fmt.Errorf("engine: connect to PostgreSQL database %s at %s: %w", conf.DatabaseName, conf.ConnectAddr, err)
	}
	defer conn.Close()
	setup := schematool.NewSetupSchemaTask(conn, &schematool.SetupConfig{InitialVersion: "0.0"}, logger)
	if err := setup.Run(); err != nil {
		return fmt.Errorf("engine: set up schema versioning in PostgreSQL database %s at %s: %w", conf.DatabaseName, conf.ConnectAddr, err)
	}
	update := schematool.NewUpdateSchemaTask(conn, &schematool.UpdateConfig{DBName: conf.DatabaseName, SchemaName: schemaName, TargetVersion: want}, logger)
	if err := update.Run(); err != nil {
		return fmt.Errorf("engine: upgrade schema of PostgreSQL database %s to %s: %w", conf.DatabaseName, want, err)
	}
	got, err := conn.ReadSchemaVersion()
	if err != nil {
		return fmt.Errorf("engine: read schema version of PostgreSQL database %s: %w", conf.DatabaseName, err)
	}
	if got != want {
		return fmt.Errorf("engine: PostgreSQL database %s is at schema %s, this server needs %s", conf.DatabaseName, got, want)
	}
	return nil
}
