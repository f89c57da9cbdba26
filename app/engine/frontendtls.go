package engine

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// FrontendServerName is the name in the engine's own frontend certificate:
// a worker elsewhere sets temporal.tls.server_name to it and
// temporal.tls.ca to a copy of FrontendCertFile.
const FrontendServerName = "horizon-engine"

// FrontendCertFile and frontendKeyFile hold the frontend's certificate
// under $HORIZON_HOME when the engine listens beyond loopback
// (temporal.listen). The certificate is its own authority: copying it to a
// worker is how the worker learns to trust this engine.
const (
	FrontendCertFile = "engine-cert.pem"
	frontendKeyFile  = "engine-key.pem"
)

// Loopback reports whether ip (a temporal.listen value) reaches this
// machine only; "" is the default, 127.0.0.1.
func Loopback(ip string) bool {
	if ip == "" {
		return true
	}
	p := net.ParseIP(ip)
	return p != nil && p.IsLoopback()
}

// ensureFrontendCert returns the certificate and key files in dir, making
// a self-signed pair (ECDSA P-256, ten years, names FrontendServerName and
// 127.0.0.1) on first use. The key is mode 0600.
func ensureFrontendCert(dir string) (certPath, keyPath string, err error) {
	certPath, keyPath = filepath.Join(dir, FrontendCertFile), filepath.Join(dir, frontendKeyFile)
	_, cerr := os.Stat(certPath)
	_, kerr := os.Stat(keyPath)
	if cerr == nil && kerr == nil {
		return certPath, keyPath, nil
	}
	if (cerr != nil && !errors.Is(cerr, fs.ErrNotExist)) || (kerr != nil && !errors.Is(kerr, fs.ErrNotExist)) {
		return "", "", fmt.Errorf("engine: frontend certificate in %s: %w", dir, errors.Join(cerr, kerr))
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("engine: frontend key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return "", "", fmt.Errorf("engine: frontend serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: FrontendServerName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{FrontendServerName},
		IPAddresses:           []net.IP{net.ParseIP(loopbackIP)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", fmt.Errorf("engine: frontend certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", fmt.Errorf("engine: frontend key: %w", err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", "", fmt.Errorf("engine: write %s: %w", keyPath, err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return "", "", fmt.Errorf("engine: write %s: %w", certPath, err)
	}
	return certPath, keyPath, nil
}
