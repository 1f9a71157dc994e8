package stepfunctions

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func TestXRayHeader(t *testing.T) {
	for _, c := range []struct{ traceparent, want string }{
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736;Parent=00f067aa0ba902b7;Sampled=1"},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736;Parent=00f067aa0ba902b7;Sampled=0"},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03", "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736;Parent=00f067aa0ba902b7;Sampled=1"},
		{"", ""},
		// A later version is read as version 00 when its first fields fit (W3C Trace Context).
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later", "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736;Parent=00f067aa0ba902b7;Sampled=1"},
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ""},       // an invalid version
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-05", ""},       // a flag version 00 does not have
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later", ""}, // a field version 00 does not have
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", ""},       // upper case
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", ""},       // invalid trace id
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", ""},       // invalid parent
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", ""},
		{"00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", ""},
	} {
		if got := aws.ToString(xrayHeader(map[string]string{"traceparent": c.traceparent})); got != c.want {
			t.Errorf("xrayHeader(%q) = %q, want %q", c.traceparent, got, c.want)
		}
	}
}
