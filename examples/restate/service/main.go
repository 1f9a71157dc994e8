// Command service serves the Restate examples (package restateexamples) as a deployment and,
// with --register, registers it with a Restate server's admin API, replacing the services' earlier
// deployment. It prints "service: serving URL" once it serves and, registered, "service:
// registered"; it stops on SIGINT or SIGTERM.
//
//	go run ./examples/restate/service --listen 127.0.0.1:9080 --register http://127.0.0.1:9070
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/taskgate/taskgate/adapters/restate"
	restateexamples "github.com/taskgate/taskgate/examples/restate"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9080", "address to serve the deployment on (port 0: any free port)")
	admin := flag.String("register", "", "register the deployment with the Restate admin API at this URL")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *listen, *admin); err != nil {
		fmt.Fprintln(os.Stderr, "service:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, listen, admin string) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	uri := "http://" + ln.Addr().String()
	log := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})
	served := make(chan error, 1)
	go func() { served <- restateexamples.Serve(ctx, ln, log, restateexamples.Definitions()) }()
	fmt.Println("service: serving", uri)
	if admin != "" {
		if err := restate.Register(ctx, restate.Endpoints{Admin: admin, Token: os.Getenv("RESTATE_AUTH_TOKEN")}, uri); err != nil {
			return err
		}
		fmt.Println("service: registered")
	}
	return <-served
}
