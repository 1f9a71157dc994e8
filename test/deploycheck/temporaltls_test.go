package deploycheck

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/taskgate/taskgate/adapters"
	_ "github.com/taskgate/taskgate/adapters/builtin" // the temporal engine kind
	"github.com/taskgate/taskgate/adapters/temporal"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mapping"
)

// The Kubernetes module passes temporal_tls in the variables the Temporal SDK's envconfig reads,
// so that an engine block without tls: (the example's) connects over mutual TLS. OpenTofu renders
// the module's environment and TLS files for the example's inputs plus temporal_tls; with the
// files where the Secret would be mounted, they open taskgate's Temporal engine against the
// test's Temporal server behind a TLS proxy that demands the client certificate.
func TestKubernetesModuleTemporalTLS(t *testing.T) {
	target := testenv.TemporalAddress(t)
	ca := newCA(t)
	proxy := tlsProxy(t, target, ca.issue(t, "temporal.internal"), ca.pool)
	client := ca.issue(t, "taskgate")

	mods := loadModules(t)
	inputs := newEvaluator(t, mods, k8sExample, nil).moduleArgs("taskgate")
	inputs["temporal_tls"] = cty.ObjectVal(map[string]cty.Value{
		"ca_pem": cty.StringVal(ca.certPEM), "cert_pem": cty.StringVal(client.certPEM), "key_pem": cty.StringVal(client.keyPEM),
		"server_name": cty.StringVal("temporal.internal"),
	})
	got := evalModuleLocals(t, mods["terraform/modules/taskgate-kubernetes"], inputs)
	environment := decode[map[string]string](t, got["environment"])
	mountedAt := decode[string](t, got["tls_dir"])
	mount := t.TempDir()
	for name, content := range decode[map[string]string](t, got["tls_files"]) {
		if err := os.WriteFile(filepath.Join(mount, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := adapters.Env{"TEMPORAL_CONFIG_FILE=" + filepath.Join(t.TempDir(), "none.toml")}
	for name, value := range environment {
		if strings.HasPrefix(name, "TEMPORAL_") {
			env = append(env, name+"="+strings.Replace(value, mountedAt, mount, 1))
		}
	}
	// The module's address is the cluster's frontend Service; here it is the proxy.
	env = append(env, "TEMPORAL_ADDRESS="+proxy)

	if err := checkTemporal(t, env); err != nil {
		t.Fatalf("the module's environment %q does not reach Temporal over mutual TLS: %v", env, err)
	}
	var withoutClientCert adapters.Env
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TEMPORAL_TLS_CLIENT_") {
			withoutClientCert = append(withoutClientCert, kv)
		}
	}
	if err := checkTemporal(t, withoutClientCert); err == nil {
		t.Fatal("the proxy let a client without a certificate through: the check above proves nothing")
	}
}

// checkTemporal opens a Temporal engine block with no tls: key in env, as taskgate serves the
// example's mapping, and checks a target: the namespace must answer.
func checkTemporal(t *testing.T, env adapters.Env) error {
	t.Helper()
	set, err := mapping.Parse("tools.yaml", []byte("engines: {temporal: {temporal: {}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	e, err := set.Engines["temporal"].Config.Open(ctx, adapters.OpenOptions{Env: env})
	if err != nil {
		return err
	}
	defer e.Close()
	_, err = e.Check(ctx, temporal.Workflow("WaitAndEcho", "taskgate-examples", 0))
	return err
}

// tlsProxy terminates TLS with cert, requires a client certificate of clients, and forwards
// the gRPC stream in plain text to target.
func tlsProxy(t *testing.T, target string, cert keyPair, clients *x509.CertPool) string {
	t.Helper()
	pair, err := tls.X509KeyPair([]byte(cert.certPEM), []byte(cert.keyPEM))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clients,
		NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if c.(*tls.Conn).HandshakeContext(context.Background()) != nil {
					return
				}
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, c)
				io.Copy(c, up)
			}()
		}
	}()
	return ln.Addr().String()
}

type keyPair struct{ certPEM, keyPEM string }

type testCA struct {
	keyPair
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{keyPair: keyPair{certPEM: pemOf("CERTIFICATE", der)}, cert: cert, key: key, pool: pool}
}

// issue makes a certificate for name, good for a server of that name and for a client.
func (ca *testCA) issue(t *testing.T, name string) keyPair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{certPEM: pemOf("CERTIFICATE", der), keyPEM: pemOf("PRIVATE KEY", keyDER)}
}

func pemOf(kind string, der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}))
}
