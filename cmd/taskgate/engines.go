package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	"github.com/taskgate/taskgate/adapters/temporal"
	"github.com/taskgate/taskgate/mapping"
)

// connect opens every engine block of the mapping that a tool uses.
func connect(ctx context.Context, set *mapping.Set) (map[string]adapters.Engine, error) {
	engines := map[string]adapters.Engine{}
	for _, t := range set.Tools {
		if _, done := engines[t.Engine]; done {
			continue
		}
		e, err := open(ctx, set.Engines[t.Engine])
		if err != nil {
			closeAll(engines)
			return nil, fmt.Errorf("engine %q: %w", t.Engine, err)
		}
		engines[t.Engine] = e
	}
	return engines, nil
}

func open(ctx context.Context, e *mapping.Engine) (adapters.Engine, error) {
	switch {
	case e.Temporal != nil:
		cfg := temporal.Config{Address: e.Temporal.Address, Namespace: e.Temporal.Namespace}
		if e.Temporal.APIKeyEnv != "" {
			cfg.APIKey = os.Getenv(e.Temporal.APIKeyEnv)
			if cfg.APIKey == "" {
				return nil, fmt.Errorf("apiKeyEnv names %s, which is not set: export the Temporal API key in it", e.Temporal.APIKeyEnv)
			}
		}
		if e.Temporal.TLS != nil {
			tc, err := tlsConfig(e.Temporal.TLS)
			if err != nil {
				return nil, err
			}
			cfg.TLS = tc
		}
		te, err := temporal.New(ctx, cfg)
		if err != nil { // not a typed nil inside the interface
			return nil, err
		}
		return te, nil
	case e.StepFunctions != nil:
		se, err := stepfunctions.New(ctx, stepfunctions.Config{
			Region: e.StepFunctions.Region, Endpoint: e.StepFunctions.Endpoint, RoleARN: e.StepFunctions.RoleARN,
		})
		if err != nil {
			return nil, err
		}
		return se, nil
	}
	return nil, fmt.Errorf("no engine kind configured")
}

func tlsConfig(t *mapping.TLS) (*tls.Config, error) {
	tc := &tls.Config{ServerName: t.ServerName, MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls.caFile: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls.caFile %s holds no PEM certificate", t.CAFile)
		}
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls.certFile/keyFile: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

func closeAll(engines map[string]adapters.Engine) {
	for _, e := range engines {
		e.Close()
	}
}
