package engine

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"

	tconfig "go.temporal.io/server/common/config"
)

// internodeName is the name the server's services verify each other by.
const internodeName = "horizon-internode"

// internodeTLS secures the server's own services (history, matching and
// the internal frontend the system worker uses) with mutual TLS under a
// certificate made for this process and never written down. Their ports
// are on loopback, where any local user could otherwise call them
// directly, bypassing the frontend's token check; the internal frontend in
// particular grants everything to whoever reaches it.
func internodeTLS() (tconfig.GroupTLS, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tconfig.GroupTLS{}, fmt.Errorf("engine: internode key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tconfig.GroupTLS{}, fmt.Errorf("engine: internode serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: internodeName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(100 * 365 * 24 * time.Hour), // lives as long as the process
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{internodeName},
		IPAddresses:           []net.IP{net.ParseIP(loopbackIP)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tconfig.GroupTLS{}, fmt.Errorf("engine: internode certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tconfig.GroupTLS{}, fmt.Errorf("engine: internode key: %w", err)
	}
	b64 := func(typ string, der []byte) string {
		return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
	}
	cert, keyPEM := b64("CERTIFICATE", der), b64("EC PRIVATE KEY", keyDER)
	return tconfig.GroupTLS{
		Server: tconfig.ServerTLS{
			CertData:          cert,
			KeyData:           keyPEM,
			ClientCAData:      []string{cert},
			RequireClientAuth: true,
		},
		Client: tconfig.ClientTLS{
			ServerName: internodeName,
			RootCAData: []string{cert},
		},
	}, nil
}
