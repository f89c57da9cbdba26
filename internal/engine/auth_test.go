package engine

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/horizon/horizon/config"
)

// Only a client presenting the token in $HORIZON_HOME/engine.token reaches
// the embedded engine: without it, or with a wrong one, every call that
// lists, starts, signals or reads is refused; with it (Dial, the daemon's
// worker, the Web UI) everything works, including the server's own system
// worker, which runs schedules through the internal frontend.
func TestEmbeddedAdmitsOnlyTheToken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	home := t.TempDir()
	cfg := &config.Config{Home: home, Temporal: config.Temporal{Namespace: "default", Port: freePortT(t)}}
	e, err := StartEmbedded(Options{DBPath: filepath.Join(home, "temporal.db"), Port: cfg.Temporal.Port, UIPort: freePortT(t), Logger: zerolog.Nop()})
	require.NoError(t, err)
	defer e.Stop()

	require.Equal(t, TokenPath(home), e.TokenPath())
	st, err := os.Stat(TokenPath(home))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	tok, err := ReadToken(TokenPath(home))
	require.NoError(t, err)
	require.Len(t, tok, 64)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name  string
		creds client.Credentials
	}{
		{"no token", nil},
		{"wrong token", client.NewAPIKeyStaticCredentials(strings.Repeat("0", 64))},
		{"token with a suffix", client.NewAPIKeyStaticCredentials(tok + "x")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The SDK's own dial only checks health, which anyone may.
			c, err := client.DialContext(ctx, client.Options{HostPort: e.FrontendAddress(), Logger: quiet{}, Credentials: tc.creds,
				ConnectionOptions: client.ConnectionOptions{TLSDisabled: true}})
			require.NoError(t, err)
			defer c.Close()
			_, err = c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"})
			requireRefused(t, err)
			_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "q"}, chain, 1)
			requireRefused(t, err)
			err = c.SignalWorkflow(ctx, "any", "", "sig", nil)
			requireRefused(t, err)
			err = c.CancelWorkflow(ctx, "any", "")
			requireRefused(t, err)
			_, err = c.WorkflowService().DescribeNamespace(ctx, nsReq("default"))
			requireRefused(t, err)
		})
	}

	// Dial presents the token from the home.
	c, err := Dial(ctx, cfg, zerolog.Nop())
	require.NoError(t, err)
	defer c.Close()
	w := newWorker(t, c, "q")
	defer w.Stop()
	runChain(t, c, "q", 2)

	// A schedule fires through the server's system worker, which reaches the
	// frontend over internode mTLS, not the token.
	sched, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:                 "sched",
		Spec:               client.ScheduleSpec{},
		Action:             &client.ScheduleWorkflowAction{ID: "from-schedule", Workflow: chain, Args: []any{1}, TaskQueue: "q"},
		TriggerImmediately: true,
	})
	require.NoError(t, err)
	var scheduled string
	require.Eventually(t, func() bool {
		d, err := sched.Describe(ctx)
		if err != nil || len(d.Info.RecentActions) == 0 {
			return false
		}
		scheduled = d.Info.RecentActions[0].StartWorkflowResult.WorkflowID
		w, err := c.DescribeWorkflowExecution(ctx, scheduled, "")
		return err == nil && w.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	}, time.Minute, 200*time.Millisecond, "the scheduled workflow runs to completion")

	// The Web UI forwards the token for its browser.
	resp, err := http.Get(e.UIURL() + "/api/v1/namespaces/default/workflows")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Contains(t, string(body), scheduled)

	// The frontend's HTTP API refuses a caller without the token too.
	httpAddr := net.JoinHostPort(loopbackIP, strconv.Itoa(e.conf.Services["frontend"].RPC.HTTPPort))
	resp, err = http.Get("http://" + httpAddr + "/api/v1/namespaces/default/workflows")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	// The internal services answer only internode mTLS: in plaintext, or
	// over TLS without the process's client certificate, a call fails.
	for _, name := range []string{"internal-frontend", "history", "matching"} {
		addr := net.JoinHostPort(loopbackIP, strconv.Itoa(e.conf.Services[name].RPC.GRPCPort))
		for _, dialCreds := range []grpc.DialOption{
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})),
		} {
			conn, err := grpc.NewClient(addr, dialCreds)
			require.NoError(t, err)
			cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
			_, err = workflowservice.NewWorkflowServiceClient(conn).ListWorkflowExecutions(cctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"})
			ccancel()
			conn.Close()
			require.Error(t, err, "%s at %s answered a client without the internode certificate", name, addr)
			var pd *serviceerror.PermissionDenied
			require.False(t, errors.As(err, &pd), "%s: the refusal comes from TLS, before any handler: %v", name, err)
		}
	}
}

func requireRefused(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	code := status.Code(err)
	var pd *serviceerror.PermissionDenied
	require.True(t, errors.As(err, &pd) || code == codes.PermissionDenied || code == codes.Unauthenticated,
		"want PermissionDenied or Unauthenticated, got %T (%s): %v", err, code, err)
}

func TestEnsureToken(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", TokenFile)
	_, err := ReadToken(p)
	require.ErrorIs(t, err, ErrNoToken)
	require.ErrorContains(t, err, "horizon server")

	tok, err := EnsureToken(p)
	require.NoError(t, err)
	again, err := EnsureToken(p)
	require.NoError(t, err)
	require.Equal(t, tok, again, "the token is made once")

	require.NoError(t, os.Chmod(p, 0o644))
	_, err = EnsureToken(p)
	require.NoError(t, err)
	st, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "a token readable by others is narrowed")

	require.NoError(t, os.WriteFile(p, []byte("\n"), 0o600))
	_, err = ReadToken(p)
	require.ErrorContains(t, err, "empty")
}

func TestRemoteAPIKey(t *testing.T) {
	f := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(f, []byte("  secret\n"), 0o600))
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	for _, tc := range []struct {
		in     config.Temporal
		want   string
		errHas string
	}{
		{in: config.Temporal{}, want: ""},
		{in: config.Temporal{APIKey: "k"}, want: "k"},
		{in: config.Temporal{APIKey: "k", APIKeyFile: f}, want: "k"},
		{in: config.Temporal{APIKeyFile: f}, want: "secret"},
		{in: config.Temporal{APIKeyFile: empty}, errHas: "is empty"},
		{in: config.Temporal{APIKeyFile: f + "-missing"}, errHas: "temporal.api_key_file"},
	} {
		t.Run(fmt.Sprintf("%+v", tc.in), func(t *testing.T) {
			got, err := remoteAPIKey(tc.in)
			if tc.errHas != "" {
				require.ErrorContains(t, err, tc.errHas)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	for addr, want := range map[string]bool{"127.0.0.1:7233": true, "localhost:7233": true, "[::1]:7233": true, "temporal.example.com:7233": false, "10.0.0.1:7233": false} {
		require.Equal(t, want, loopbackAddress(addr), addr)
	}
}
