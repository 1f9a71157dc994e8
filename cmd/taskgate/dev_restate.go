package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/restate"
	restateexamples "github.com/taskgate/taskgate/examples/restate"
)

// devRestate is what dev runs for --restate: a Restate server (unless RESTATE_ADMIN_URL names
// one) and the example deployment, registered with it unless it already serves the examples.
type devRestate struct {
	ingress, admin string
	stop           []func()
}

// Close stops what startRestate started, the deployment first.
func (d *devRestate) Close() {
	for i := len(d.stop) - 1; i >= 0; i-- {
		d.stop[i]()
	}
}

// startRestate sets up the examples' Restate side, and returns the env the examples' mapping
// reads (RESTATE_INGRESS_URL, RESTATE_ADMIN_URL) and the mapping file.
func startRestate(ctx context.Context, env adapters.Env, cache, state string, port int, stderr io.Writer) (*devRestate, string, adapters.Env, error) {
	d := &devRestate{}
	d.ingress, _ = env.LookupEnv("RESTATE_INGRESS_URL")
	d.admin, _ = env.LookupEnv("RESTATE_ADMIN_URL")
	if d.admin == "" {
		bin, err := restateServer(ctx, cache, stderr)
		if err != nil {
			return nil, "", nil, err
		}
		if err := d.startServer(ctx, bin, filepath.Join(state, "restate"), port, stderr); err != nil {
			d.Close()
			return nil, "", nil, err
		}
	}
	if d.ingress == "" {
		d.ingress = "http://localhost:8080"
	}
	token, _ := env.LookupEnv("RESTATE_AUTH_TOKEN")
	e, err := restate.New(restate.Config{Ingress: d.ingress, Admin: d.admin, Token: token})
	if err != nil {
		d.Close()
		return nil, "", nil, err
	}
	if err := d.deployExamples(ctx, e, stderr); err != nil {
		d.Close()
		return nil, "", nil, err
	}
	f := filepath.Join(state, "restate-tools.yaml")
	if err := writeAtomically(f, restateexamples.Mapping); err != nil {
		d.Close()
		return nil, "", nil, err
	}
	return d, f, env.With("RESTATE_INGRESS_URL="+d.ingress, "RESTATE_ADMIN_URL="+d.admin), nil
}

// startServer starts restate-server on 127.0.0.1: the ingress on port, the admin API on port+1,
// the node on port+2, its data kept in dir so that a restarted dev still finds the invocations
// behind earlier task ids.
func (d *devRestate) startServer(ctx context.Context, bin, dir string, port int, stderr io.Writer) error {
	fmt.Fprintf(stderr, "taskgate: starting a Restate server on 127.0.0.1:%d (admin :%d)\n", port, port+1)
	cmd := exec.Command(bin, "--no-logo", "--listen-mode", "tcp", "--base-dir", dir,
		"--bind-address", fmt.Sprintf("127.0.0.1:%d", port+2), "--default-num-partitions", "4")
	// Quiet: its logs go where dev's do, and it asks GitHub for newer releases at every start.
	cmd.Env = append(os.Environ(), fmt.Sprintf("RESTATE_INGRESS__BIND_ADDRESS=127.0.0.1:%d", port),
		fmt.Sprintf("RESTATE_ADMIN__BIND_ADDRESS=127.0.0.1:%d", port+1), "RESTATE_LOG_FILTER=warn,octocrab=off", "RESTATE_DISABLE_TELEMETRY=true")
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the Restate server %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	d.stop = append(d.stop, func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	d.ingress, d.admin = fmt.Sprintf("http://127.0.0.1:%d", port), fmt.Sprintf("http://127.0.0.1:%d", port+1)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			return fmt.Errorf("the Restate server stopped as it started (is another one on port %d or %d? set RESTATE_ADMIN_URL and RESTATE_INGRESS_URL to use it, or pick --restate-port)", port, port+1)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if healthy(ctx, d.admin+"/health") && healthy(ctx, d.ingress+"/restate/health") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the Restate server on port %d did not answer within 30 s", port)
		}
	}
}

func healthy(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// deployExamples serves the example deployment in this process and registers it, unless the
// server already has the examples (a server scripts/with-engines started with its own deployment).
func (d *devRestate) deployExamples(ctx context.Context, e *restate.Engine, stderr io.Writer) error {
	served := true
	for _, s := range restateexamples.Definitions() {
		if _, err := e.Check(ctx, restate.Handler(s.Name(), restateexamples.RunHandler, restate.Cancel)); err != nil {
			if errors.Is(err, adapters.ErrUnavailable) {
				return err
			}
			served = false
		}
	}
	if served {
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	log := slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- restateexamples.Serve(sctx, ln, log, restateexamples.Definitions()) }()
	d.stop = append(d.stop, func() { cancel(); <-done })
	if err := e.Register(ctx, "http://"+ln.Addr().String()); err != nil {
		return fmt.Errorf("registering the Restate example deployment: %w", err)
	}
	fmt.Fprintf(stderr, "taskgate: the Restate example deployment is registered from %s\n", ln.Addr())
	return nil
}

// restateServer finds restate-server on PATH or in the tools folder (TASKGATE_TOOLS, else the
// cache folder), where scripts/with-engines installs it too, installing it there with npm once
// when it is missing: the version examples/restate/restate-server pins.
func restateServer(ctx context.Context, cache string, stderr io.Writer) (string, error) {
	if p, err := exec.LookPath("restate-server"); err == nil {
		return p, nil
	}
	dir := os.Getenv("TASKGATE_TOOLS")
	if dir == "" {
		dir = cache
	}
	pkg, err := restateexamples.ServerPackage.ReadFile("restate-server/package.json")
	if err != nil {
		return "", err
	}
	lock, err := restateexamples.ServerPackage.ReadFile("restate-server/package-lock.json")
	if err != nil {
		return "", err
	}
	// The folder scripts/lib/npm-tools.sh installs the same lock file into.
	sum := sha256.Sum256(append(append([]byte{}, pkg...), lock...))
	dest := filepath.Join(dir, "npm", "restate-server-"+hex.EncodeToString(sum[:])[:16])
	if bin := findServer(dest); bin != "" {
		return bin, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", errors.New("no restate-server: install it (npm install -g @restatedev/restate-server), or set RESTATE_ADMIN_URL and RESTATE_INGRESS_URL to a running server")
	}
	fmt.Fprintf(stderr, "taskgate: installing the Restate server into %s (once)\n", dest)
	tmp := dest + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	for name, data := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return "", err
		}
	}
	cmd := exec.CommandContext(ctx, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir, cmd.Stdout, cmd.Stderr = tmp, stderr, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("installing the Restate server (npm ci in %s): %w", tmp, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".installed"), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.RemoveAll(dest); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dest); err != nil {
		return "", err
	}
	if bin := findServer(dest); bin != "" {
		return bin, nil
	}
	return "", fmt.Errorf("the Restate server has no build for this platform in %s", dest)
}

// findServer is the restate-server binary of an installed package folder, if any.
func findServer(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err != nil {
		return ""
	}
	bins, _ := filepath.Glob(filepath.Join(dir, "node_modules", "@restatedev", "restate-server-*", "bin", "restate-server"))
	if len(bins) == 0 {
		return ""
	}
	return bins[0]
}
