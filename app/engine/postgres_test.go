package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/horizon/horizon/internal/pgtest"
)

// The engine on PostgreSQL creates both databases and their schemas,
// runs a workflow, answers visibility queries on its search attributes,
// and keeps all of it across a stop and a restart (whose schema step
// finds nothing left to upgrade).
func TestEmbeddedOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and a Temporal server")
	}
	pg := pgtest.Start(t)
	home := t.TempDir()
	attrs := map[string]enumspb.IndexedValueType{
		"HorizonRepo":   enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"HorizonStatus": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	}
	o := Options{DBPath: filepath.Join(home, "temporal.db"), Postgres: &Postgres{DSN: pg.DSN("temporal")}, SearchAttributes: attrs}
	e, c := startWith(t, o)
	w := newWorker(t, c, "q")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	sa, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	require.NoError(t, err)
	require.Contains(t, sa.GetCustomAttributes(), "HorizonRepo")
	require.Contains(t, sa.GetCustomAttributes(), "HorizonStatus")

	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kept", TaskQueue: "q",
		TypedSearchAttributes: temporal.NewSearchAttributes(temporal.NewSearchAttributeKeyKeyword("HorizonRepo").ValueSet("/src/a"))}, chain, 3)
	require.NoError(t, err)
	var sum int
	require.NoError(t, run.Get(ctx, &sum))
	require.Equal(t, 3, sum)
	requireListed(ctx, t, c, `HorizonRepo = "/src/a"`, "kept")

	ns, err := c.WorkflowService().DescribeNamespace(ctx, nsReq("default"))
	require.NoError(t, err)
	require.Equal(t, 30*24*time.Hour, ns.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration(), "a new namespace gets the configured retention")

	w.Stop()
	c.Close()
	e.Stop()

	o.Port, o.UIPort, o.Logger = freePortT(t), 0, zerolog.Nop()
	e2, err := StartEmbedded(o)
	require.NoError(t, err)
	defer e2.Stop()
	c2 := dialToken(t, e2)
	defer c2.Close()
	desc, err := c2.DescribeWorkflowExecution(ctx, "kept", "")
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, desc.GetWorkflowExecutionInfo().GetStatus())
	requireListed(ctx, t, c2, `HorizonRepo = "/src/a"`, "kept")
}

// requireListed waits until the visibility query lists exactly id
// (visibility is written shortly after the fact).
func requireListed(ctx context.Context, t *testing.T, c client.Client, query, id string) {
	t.Helper()
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: query})
		require.NoError(ct, err)
		var got []string
		for _, ex := range resp.GetExecutions() {
			got = append(got, ex.GetExecution().GetWorkflowId())
		}
		require.Equal(ct, []string{id}, got, "query %s", query)
	}, 30*time.Second, 200*time.Millisecond)
}

// A DSN that is not a postgres URL, or names no database, is refused with
// the key and an example.
func TestParsePostgresDSN(t *testing.T) {
	for _, tc := range []struct {
		dsn, err   string
		addr, db   string
		user, pass string
		attrs      map[string]string
	}{
		{dsn: "postgres://u:p@db:6543/temporal?sslmode=disable", addr: "db:6543", db: "temporal", user: "u", pass: "p", attrs: map[string]string{"sslmode": "disable"}},
		{dsn: "postgresql://u@db/t", addr: "db:5432", db: "t", user: "u", attrs: map[string]string{}},
		{dsn: "mysql://u@db/t", err: "is not a postgres:// URL"},
		{dsn: "postgres://u:secret@db:5432/", err: "names no database"},
		{dsn: "host=db user=u", err: "is not a postgres:// URL"},
	} {
		t.Run(tc.dsn, func(t *testing.T) {
			conf, err := ParsePostgresDSN(tc.dsn, 0)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.ErrorContains(t, err, "engine.postgres.dsn")
				require.NotContains(t, err.Error(), "secret", "the password is not shown")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.addr, conf.ConnectAddr)
			require.Equal(t, tc.db, conf.DatabaseName)
			require.Equal(t, tc.user, conf.User)
			require.Equal(t, tc.pass, conf.Password)
			require.Equal(t, tc.attrs, conf.ConnectAttributes)
			require.Equal(t, 20, conf.MaxConns)
			require.Equal(t, tc.db+"_visibility", visibilityOf(conf).DatabaseName)
		})
	}
}
