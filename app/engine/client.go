package engine

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/logging"
)

// UnreachableError says the engine did not answer (config.UnreachableError).
type UnreachableError = config.UnreachableError

// Dial connects to the configured engine (embedded or remote) and checks it
// answers. It does not start anything. The embedded engine is dialled with
// the token in $HORIZON_HOME/engine.token; a remote one with
// temporal.api_key, else the contents of temporal.api_key_file, if set.
func Dial(ctx context.Context, cfg *config.Config, l zerolog.Logger) (client.Client, error) {
	opts := client.Options{
		HostPort:  cfg.FrontendAddress(),
		Namespace: cfg.Temporal.Namespace,
		Logger:    logging.NewTemporal(l),
	}
	if cfg.Embedded() {
		tok, err := ReadToken(TokenPath(cfg.Home))
		if err != nil {
			return nil, &UnreachableError{Address: opts.HostPort, Err: err}
		}
		opts.Credentials = client.NewAPIKeyStaticCredentials(tok)
		if Loopback(cfg.Temporal.Listen) {
			// The embedded frontend listens on loopback in plaintext; API-key
			// credentials would otherwise switch TLS on.
			opts.ConnectionOptions.TLSDisabled = true
		} else {
			// Listening beyond loopback, it serves TLS under its own
			// certificate, on loopback too.
			tlsConf, err := tlsConfig(config.TLS{CA: filepath.Join(cfg.Home, FrontendCertFile), ServerName: FrontendServerName})
			if err != nil {
				return nil, &UnreachableError{Address: opts.HostPort, Err: err}
			}
			opts.ConnectionOptions.TLS = tlsConf
		}
	} else {
		tlsConf, err := tlsConfig(cfg.Temporal.TLS)
		if err != nil {
			return nil, err
		}
		opts.ConnectionOptions.TLS = tlsConf
		key, err := remoteAPIKey(cfg.Temporal)
		if err != nil {
			return nil, err
		}
		if key != "" {
			opts.Credentials = client.NewAPIKeyStaticCredentials(key)
			if opts.ConnectionOptions.TLS == nil && !loopbackAddress(cfg.Temporal.Address) {
				// API keys leave the machine only over TLS; a loopback
				// address (another home's embedded engine, an SSH tunnel)
				// is as private as the embedded engine's own connection.
				opts.ConnectionOptions.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
			}
			if opts.ConnectionOptions.TLS == nil {
				opts.ConnectionOptions.TLSDisabled = true
			}
		}
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, &UnreachableError{Address: opts.HostPort, Err: err}
	}
	return c, nil
}

// DialWait dials until the engine answers or the timeout passes (a freshly
// started daemon takes a second or two).
func DialWait(ctx context.Context, cfg *config.Config, l zerolog.Logger, timeout time.Duration) (client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var c client.Client
	err := WaitReady(ctx, func(ctx context.Context) error {
		dctx, dcancel := context.WithTimeout(ctx, 2*time.Second)
		defer dcancel()
		var err error
		c, err = Dial(dctx, cfg, l)
		return err
	})
	if err != nil {
		return nil, &UnreachableError{Address: cfg.FrontendAddress(), Err: err}
	}
	return c, nil
}

// remoteAPIKey is temporal.api_key, else the trimmed contents of
// temporal.api_key_file, else "".
func remoteAPIKey(t config.Temporal) (string, error) {
	if t.APIKey != "" || t.APIKeyFile == "" {
		return t.APIKey, nil
	}
	data, err := os.ReadFile(t.APIKeyFile)
	if err != nil {
		return "", fmt.Errorf("engine: read temporal.api_key_file %s: %w", t.APIKeyFile, err)
	}
	key := strings.TrimSpace(string(data))
	if key == "" {
		return "", fmt.Errorf("engine: temporal.api_key_file %s is empty; put the engine's token in it (the engine host's $HORIZON_HOME/%s)", t.APIKeyFile, TokenFile)
	}
	return key, nil
}

// loopbackAddress reports whether host:port names this machine's loopback.
func loopbackAddress(hostPort string) bool {
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		host = hostPort
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func tlsConfig(t config.TLS) (*tls.Config, error) {
	if t.Cert == "" && t.CA == "" && t.ServerName == "" {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if t.Cert != "" {
		pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("engine: load temporal.tls.cert %s / temporal.tls.key %s: %w", t.Cert, t.Key, err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, fmt.Errorf("engine: read temporal.tls.ca %s: %w", t.CA, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("engine: temporal.tls.ca %s holds no PEM certificate", t.CA)
		}
		conf.RootCAs = pool
	}
	return conf, nil
}

// EnsureRetention raises the namespace's retention to at least min, so
// closed runs stay inspectable (an existing database keeps whatever it was
// created with otherwise).
func EnsureRetention(ctx context.Context, c client.Client, namespace string, min time.Duration) error {
	desc, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("engine: describe namespace %s: %w", namespace, err)
	}
	if cur := desc.GetConfig().GetWorkflowExecutionRetentionTtl(); cur != nil && cur.AsDuration() >= min {
		return nil
	}
	conf := desc.GetConfig()
	conf.WorkflowExecutionRetentionTtl = durationpb.New(min)
	_, err = c.WorkflowService().UpdateNamespace(ctx, &workflowservice.UpdateNamespaceRequest{
		Namespace: namespace,
		Config:    conf,
	})
	if err != nil {
		return fmt.Errorf("engine: set retention of %s to %s: %w", namespace, min, err)
	}
	return nil
}
