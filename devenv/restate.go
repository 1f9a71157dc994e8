package devenv

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
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/restate"
	restateexamples "github.com/taskgate/taskgate/examples/restate"
)

// startRestate sets up the examples' Restate side: a Restate server (unless RESTATE_ADMIN_URL
// names one) and the example deployment, registered with it unless it already serves the
// examples. It adds the examples' mapping file and what it reads (RESTATE_INGRESS_URL,
// RESTATE_ADMIN_URL).
func (e *Env) startRestate(ctx context.Context, o Options) error {
	e.RestateIngress, _ = e.Env.LookupEnv("RESTATE_INGRESS_URL")
	e.RestateAdmin, _ = e.Env.LookupEnv("RESTATE_ADMIN_URL")
	if e.RestateAdmin == "" {
		bin, err := restateServer(ctx, o.Cache, o.Log)
		if err != nil {
			return err
		}
		if err := e.startRestateServer(ctx, bin, filepath.Join(e.Dir, "restate"), o.RestatePort, o.Log); err != nil {
			return err
		}
	}
	if e.RestateIngress == "" {
		e.RestateIngress = "http://localhost:8080"
	}
	token, _ := e.Env.LookupEnv("RESTATE_AUTH_TOKEN")
	engine, err := restate.New(restate.Config{Ingress: e.RestateIngress, Admin: e.RestateAdmin, Token: token})
	if err != nil {
		return err
	}
	if err := e.deployRestateExamples(ctx, engine, o.Log); err != nil {
		return err
	}
	f := filepath.Join(e.Dir, "restate-tools.yaml")
	if err := writeAtomically(f, restateexamples.Mapping); err != nil {
		return err
	}
	e.Mappings = append(e.Mappings, f)
	e.Env = e.Env.With("RESTATE_INGRESS_URL="+e.RestateIngress, "RESTATE_ADMIN_URL="+e.RestateAdmin)
	return nil
}

// startRestateServer starts restate-server on 127.0.0.1: the ingress on port, the admin API on
// port+1, the node on port+2, its data kept in dir so that a restarted dev still finds the
// invocations behind earlier task ids.
func (e *Env) startRestateServer(ctx context.Context, bin, dir string, port int, logTo io.Writer) error {
	fmt.Fprintf(logTo, "taskgate: starting a Restate server on 127.0.0.1:%d (admin :%d)\n", port, port+1)
	cmd := exec.Command(bin, "--no-logo", "--listen-mode", "tcp", "--base-dir", dir,
		"--bind-address", fmt.Sprintf("127.0.0.1:%d", port+2), "--default-num-partitions", "4")
	// Quiet: its logs go where dev's do, and it asks GitHub for newer releases at every start.
	cmd.Env = append(os.Environ(), fmt.Sprintf("RESTATE_INGRESS__BIND_ADDRESS=127.0.0.1:%d", port),
		fmt.Sprintf("RESTATE_ADMIN__BIND_ADDRESS=127.0.0.1:%d", port+1), "RESTATE_LOG_FILTER=warn,octocrab=off", "RESTATE_DISABLE_TELEMETRY=true")
	cmd.Stdout, cmd.Stderr = logTo, logTo
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the Restate server %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	e.stop = append(e.stop, func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	e.RestateIngress, e.RestateAdmin = fmt.Sprintf("http://127.0.0.1:%d", port), fmt.Sprintf("http://127.0.0.1:%d", port+1)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			return fmt.Errorf("the Restate server stopped as it started (is another one on port %d or %d? set RESTATE_ADMIN_URL and RESTATE_INGRESS_URL to use it, or pick --restate-port)", port, port+1)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if healthy(ctx, e.RestateAdmin+"/health") && healthy(ctx, e.RestateIngress+"/restate/health") {
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

// deployRestateExamples serves the example deployment in this process and registers it, unless
// the server already has the examples (a server scripts/with-engines started with its own
// deployment).
func (e *Env) deployRestateExamples(ctx context.Context, engine driver.Conn, logTo io.Writer) error {
	served := true
	for _, s := range restateexamples.Definitions() {
		if _, err := engine.Check(ctx, restate.Handler(s.Name(), restateexamples.RunHandler, restate.Cancel)); err != nil {
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
	log := slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: slog.LevelWarn})
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- restateexamples.Serve(sctx, ln, log, restateexamples.Definitions()) }()
	e.stop = append(e.stop, func() { cancel(); <-done })
	var ep restate.Endpoints
	driver.As(engine, &ep)
	if err := restate.Register(ctx, ep, "http://"+ln.Addr().String()); err != nil {
		return fmt.Errorf("registering the Restate example deployment: %w", err)
	}
	fmt.Fprintf(logTo, "taskgate: the Restate example deployment is registered from %s\n", ln.Addr())
	return nil
}

// restateServer finds restate-server on PATH or in the tools folder, where scripts/with-engines
// installs it too, installing it there with npm once when it is missing: the version
// examples/restate/restate-server pins.
func restateServer(ctx context.Context, cache string, logTo io.Writer) (string, error) {
	if p, err := exec.LookPath("restate-server"); err == nil {
		return p, nil
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
	dest := filepath.Join(toolsDir(cache), "npm", "restate-server-"+hex.EncodeToString(sum[:])[:16])
	if bin := findRestateServer(dest); bin != "" {
		return bin, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", errors.New("no restate-server: install it (npm install -g @restatedev/restate-server), or set RESTATE_ADMIN_URL and RESTATE_INGRESS_URL to a running server")
	}
	fmt.Fprintf(logTo, "taskgate: installing the Restate server into %s (once)\n", dest)
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
	cmd.Dir, cmd.Stdout, cmd.Stderr = tmp, logTo, logTo
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
	if bin := findRestateServer(dest); bin != "" {
		return bin, nil
	}
	return "", fmt.Errorf("the Restate server has no build for this platform in %s", dest)
}

// findRestateServer is the restate-server binary of an installed package folder, if any.
func findRestateServer(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err != nil {
		return ""
	}
	bins, _ := filepath.Glob(filepath.Join(dir, "node_modules", "@restatedev", "restate-server-*", "bin", "restate-server"))
	if len(bins) == 0 {
		return ""
	}
	return bins[0]
}
