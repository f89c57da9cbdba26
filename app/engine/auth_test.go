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
	"slices"
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
	"github.com/horizon/horizon/internal/procnet"
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
	before, err := procnet.Listening(os.Getpid())
	require.NoError(t, err)
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

	// The Web UI forwards the engine's token for a browser that has the
	// UI's own token (as a cookie, from the link `horizon ui` prints).
	uiTok, err := ReadToken(filepath.Join(home, UITokenFile))
	require.NoError(t, err)
	code, body := uiGet(t, e.UIURL()+"/api/v1/namespaces/default/workflows", "", uiTok)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, scheduled)
	requireUIGuarded(t, e.UIURL(), uiTok)

	// The frontend's HTTP API refuses a caller without the token too.
	httpAddr := net.JoinHostPort(loopbackIP, strconv.Itoa(e.conf.Services["frontend"].RPC.HTTPPort))
	resp, err := http.Get("http://" + httpAddr + "/api/v1/namespaces/default/workflows")
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

	// Every listener the engine opened, named or not, refuses a stranger.
	after, err := procnet.Listening(os.Getpid())
	require.NoError(t, err)
	opened := 0
	for _, l := range after {
		if slices.Contains(before, l) {
			continue
		}
		opened++
		require.Empty(t, procnet.Answered(ctx, l.Addr), "%s answered without credentials", l.Addr)
	}
	require.GreaterOrEqual(t, opened, 6, "the frontend (gRPC and HTTP), the UI and the internal services listen")
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

// uiGet GETs url with the UI token as a cookie (none when "") and Host
// host (the URL's when ""), and returns the status and body.
func uiGet(t *testing.T, url, host, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	if token != "" {
		req.AddCookie(&http.Cookie{Name: UICookie, Value: token})
	}
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// requireUIGuarded: without the token, with a wrong one, or under a Host
// that is not this machine's, the UI answers nothing; the link's token
// becomes an HttpOnly cookie; and writes that bypass horizon's verbs
// (terminate, signal, start, batch) are refused even with the cookie.
func requireUIGuarded(t *testing.T, base, token string) {
	t.Helper()
	for _, path := range []string{"/", "/api/v1/namespaces/default/workflows", "/api/v1/settings", "/healthz", "/namespaces/default/workflows/x", "/no-such-page"} {
		status, _ := uiGet(t, base+path, "", "")
		require.Equal(t, http.StatusUnauthorized, status, "%s without the token", path)
		status, _ = uiGet(t, base+path, "", strings.Repeat("0", len(token)))
		require.Equal(t, http.StatusUnauthorized, status, "%s with a wrong token", path)
		for _, host := range []string{"evil.example", "evil.example:8233", "127.0.0.1.evil.example"} {
			status, _ = uiGet(t, base+path, host, token)
			require.Equal(t, http.StatusMisdirectedRequest, status, "%s under Host %s", path, host)
		}
	}

	// The link: its token is traded for a cookie, and the address loses it.
	resp, err := noRedirect.Get(base + "/namespaces/default/workflows?token=" + token)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/namespaces/default/workflows", resp.Header.Get("Location"))
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == UICookie {
			ck = c
		}
	}
	require.NotNil(t, ck, "the link sets the UI cookie")
	require.True(t, ck.HttpOnly, "a page's script cannot read the UI cookie")
	require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	resp, err = noRedirect.Get(base + "/?token=" + strings.Repeat("0", len(token)))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a wrong token in the link")

	// Writes: with the cookie and the CSRF token the UI hands out, a
	// terminate, a signal, a start and a batch are still refused.
	req, err := http.NewRequest(http.MethodGet, base+"/api/v1/settings", nil)
	require.NoError(t, err)
	req.AddCookie(&http.Cookie{Name: UICookie, Value: token})
	resp, err = noRedirect.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	csrf := ""
	for _, c := range resp.Cookies() {
		if c.Name == "_csrf" {
			csrf = c.Value
		}
	}
	for _, path := range []string{
		"/api/v1/namespaces/default/workflows/any/terminate",
		"/api/v1/namespaces/default/workflows/any/signal/sig",
		"/api/v1/namespaces/default/workflows/new-one",
		"/api/v1/namespaces/default/batch-operations/b1",
		"/api/v1/namespaces/default/workflows/any/reset",
	} {
		req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-CSRF-Token", csrf)
		req.AddCookie(&http.Cookie{Name: UICookie, Value: token})
		req.AddCookie(&http.Cookie{Name: "_csrf", Value: csrf})
		resp, err := noRedirect.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.GreaterOrEqual(t, resp.StatusCode, 400, "POST %s must be refused: %s", path, b)
		require.NotEqual(t, http.StatusNotFound, resp.StatusCode, "POST %s: refused as a write, not unknown", path)
	}
}
