package engine

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/horizon/horizon/config"
	"github.com/horizon/horizon/internal/logging"
)

// UnreachableError says the engine did not answer at an address.
type UnreachableError struct {
	Address string
	Err     error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("engine at %s does not answer: %v", e.Address, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Dial connects to the configured engine (embedded or remote) and checks it
// answers. It does not start anything.
func Dial(ctx context.Context, cfg *config.Config, l zerolog.Logger) (client.Client, error) {
	opts := client.Options{
		HostPort:  cfg.FrontendAddress(),
		Namespace: cfg.Temporal.Namespace,
		Logger:    logging.NewTemporal(l),
	}
	if !cfg.Embedded() {
		tlsConf, err := tlsConfig(cfg.Temporal.TLS)
		if err != nil {
			return nil, err
		}
		opts.ConnectionOptions.TLS = tlsConf
		if cfg.Temporal.APIKey != "" {
			opts.Credentials = client.NewAPIKeyStaticCredentials(cfg.Temporal.APIKey)
			if opts.ConnectionOptions.TLS == nil {
				// API keys travel only over TLS.
				opts.ConnectionOptions.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
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
