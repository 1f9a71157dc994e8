// Package testenv gives tests the addresses of the real engines they run against. The servers are
// started by scripts/test (and so by .ci/run); a test never talks to a fake engine.
package testenv

import (
	"os"
	"testing"
)

// TemporalAddress returns the host:port of a running Temporal frontend (TEMPORAL_ADDRESS).
func TemporalAddress(t testing.TB) string { return need(t, "TEMPORAL_ADDRESS", "a Temporal server") }

// TemporalCLI returns the path of a Temporal CLI binary (TEMPORAL_CLI), for tests that start a dev
// server of their own.
func TemporalCLI(t testing.TB) string { return need(t, "TEMPORAL_CLI", "the Temporal CLI") }

// RestateIngress and RestateAdmin return the URLs of a running Restate server's ingress and admin
// API (RESTATE_INGRESS_URL, RESTATE_ADMIN_URL), where scripts/with-engines registers the example
// deployment.
func RestateIngress(t testing.TB) string { return need(t, "RESTATE_INGRESS_URL", "a Restate server") }
func RestateAdmin(t testing.TB) string   { return need(t, "RESTATE_ADMIN_URL", "a Restate server") }

// SFNEndpoint returns the URL of a running Step Functions endpoint (SFN_ENDPOINT).
func SFNEndpoint(t testing.TB) string { return need(t, "SFN_ENDPOINT", "a Step Functions endpoint") }

// As is what c (a driver.Conn, or the adapters.Engine over one) answers through its As for a
// target of type *T, an engine SDK client of its driver; the test fails when it answers none.
func As[T any](t testing.TB, c any) T {
	t.Helper()
	var v T
	if a, ok := c.(interface{ As(any) bool }); !ok || !a.As(&v) {
		t.Fatalf("%T answers no %T through As", c, v)
	}
	return v
}

func need(t testing.TB, name, what string) string {
	t.Helper()
	if v := os.Getenv(name); v != "" {
		return v
	}
	msg := name + " is not set: this test needs " + what + "; run ./scripts/test, which starts one"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
