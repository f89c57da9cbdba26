package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/horizon/horizon/config"
)

// An engine listening beyond loopback (temporal.listen) serves TLS under
// its own certificate and still admits only its token: a plaintext client
// fails, a TLS client without the token is refused, and a client trusting
// the certificate with the token works, as Dial does for the engine's
// own home and as a worker elsewhere does with temporal.tls.ca,
// temporal.tls.server_name and temporal.api_key_file.
func TestEngineListeningBeyondLoopbackNeedsTLSAndToken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	home := t.TempDir()
	port := freePortT(t)
	e, err := StartEmbedded(Options{DBPath: filepath.Join(home, "temporal.db"), Port: port, ListenIP: "0.0.0.0", UIPort: freePortT(t), Logger: zerolog.Nop()})
	require.NoError(t, err)
	defer e.Stop()
	require.Equal(t, filepath.Join(home, FrontendCertFile), e.FrontendCert())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tok, err := ReadToken(TokenPath(home))
	require.NoError(t, err)

	plain, err := client.DialContext(ctx, client.Options{HostPort: e.FrontendAddress(), Logger: quiet{}, Credentials: client.NewAPIKeyStaticCredentials(tok),
		ConnectionOptions: client.ConnectionOptions{TLSDisabled: true}})
	if err == nil {
		_, err = plain.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"})
		plain.Close()
	}
	require.Error(t, err, "plaintext is not served beyond loopback")

	// Own home: Dial finds the certificate beside the token.
	own := &config.Config{Home: home, Temporal: config.Temporal{Namespace: "default", Port: port, Listen: "0.0.0.0"}}
	c, err := Dial(ctx, own, zerolog.Nop())
	require.NoError(t, err)
	_, err = c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"})
	require.NoError(t, err)
	c.Close()

	// A worker elsewhere: address, CA copy, server name, token as API key.
	remote := &config.Config{Home: t.TempDir(), Temporal: config.Temporal{Namespace: "default", Address: e.FrontendAddress(),
		APIKeyFile: TokenPath(home), TLS: config.TLS{CA: e.FrontendCert(), ServerName: FrontendServerName}}}
	c, err = Dial(ctx, remote, zerolog.Nop())
	require.NoError(t, err)
	_, err = c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"})
	require.NoError(t, err)
	c.Close()

	remote.Temporal.APIKeyFile = ""
	c, err = Dial(ctx, remote, zerolog.Nop())
	require.NoError(t, err)
	_, err = c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"})
	requireRefused(t, err)
	c.Close()
}
