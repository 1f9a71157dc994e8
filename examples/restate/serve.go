package restateexamples

import (
	"context"
	"embed"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	restate "github.com/restatedev/sdk-go"
	"github.com/restatedev/sdk-go/server"
)

// Serve serves a deployment of services (Definitions, for the examples) on ln until ctx ends,
// over HTTP/2 without TLS, as Restate calls its deployments. The services log to log, replays left
// out.
func Serve(ctx context.Context, ln net.Listener, log slog.Handler, services []restate.ServiceDefinition) error {
	r := server.NewRestate().WithLogger(log, true)
	for _, d := range services {
		r.Bind(d)
	}
	h, err := r.Handler()
	if err != nil {
		return err
	}
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	hs := &http.Server{Handler: h, Protocols: &protocols, ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shutdown)
	})
	defer stop()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ServerPackage pins the Restate server that scripts/with-engines and taskgate dev run: an npm
// package.json and package-lock.json, installed with npm ci.
//
//go:embed restate-server/package.json restate-server/package-lock.json
var ServerPackage embed.FS
