package observe

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// NewLogger writes level and above to w, as format says: text (logfmt-like key=value) or json.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// TracerProvider exports spans over OTLP as the standard OpenTelemetry variables say, or is nil
// when they name no endpoint: tracing is on when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
// OTEL_EXPORTER_OTLP_ENDPOINT is set, unless OTEL_SDK_DISABLED is true or OTEL_TRACES_EXPORTER is
// none. OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL picks grpc or http/protobuf (the default); headers,
// TLS, timeouts, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER and OTEL_BSP_*
// are read by the OpenTelemetry SDK. Shut it down to flush the spans.
//
// The exporter is chosen here, not by contrib's autoexport: autoexport reads the process's
// environment (not getenv), answers a wrong protocol without naming the variable, takes
// OTEL_TRACES_EXPORTER=console, which writes spans to standard output (the MCP stream of
// serve --stdio), and links its metric, log and Prometheus exporters into the binary.
func TracerProvider(ctx context.Context, getenv func(string) string, version string) (*sdktrace.TracerProvider, error) {
	if getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" ||
		strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return nil, nil
	}
	if e := getenv("OTEL_TRACES_EXPORTER"); e != "" && e != "otlp" {
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: taskgate exports traces with otlp (or none)", e)
	}
	protocol := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exporter *otlptrace.Exporter
	var err error
	switch protocol {
	case "", "http/protobuf":
		exporter, err = otlptracehttp.New(ctx)
	case "grpc":
		exporter, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: taskgate exports traces over grpc or http/protobuf", protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("the OTLP trace exporter (OTEL_EXPORTER_OTLP_* variables): %w", err)
	}
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", "taskgate"), attribute.String("service.version", version)),
		resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("the trace resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res)), nil
}
