package procnet

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Answered tries addr as a stranger would: with no credentials, over
// plain HTTP and plain gRPC, it asks for the engine's workflows (the
// Temporal HTTP and gRPC APIs), for the root page, and for a horizon web
// API read. It returns what answered with data ("" when every attempt was
// refused: a status of 400 or more, a gRPC error, a failed handshake), so a test can require that no listener answers.
func Answered(ctx context.Context, addr netip.AddrPort) string {
	if addr.Addr().IsUnspecified() {
		addr = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), addr.Port())
	}
	hc := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/api/v1/namespaces/default/workflows", "/", "/api/v1/runs", "/config"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr.String()+path, nil)
		if err != nil {
			return err.Error()
		}
		resp, err := hc.Do(req)
		if err != nil {
			continue // not HTTP, or closed on us: not an answer
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		if resp.StatusCode < 400 {
			return fmt.Sprintf("GET %s: %d", path, resp.StatusCode)
		}
	}
	conn, err := grpc.NewClient(addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return ""
	}
	defer conn.Close()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := workflowservice.NewWorkflowServiceClient(conn).ListWorkflowExecutions(cctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"}); err == nil {
		return "gRPC ListWorkflowExecutions"
	}
	return ""
}
