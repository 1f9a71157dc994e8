// Package devenv starts the local engines and example workers `taskgate dev` serves: a Temporal
// dev server (unless TEMPORAL_ADDRESS names one) with the example worker, the Step Functions
// examples in an endpoint, and a Restate server with the examples' deployment.
package devenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/taskgate/taskgate/adapters"
	temporalexamples "github.com/taskgate/taskgate/examples/temporal"
)

// Options say what Start starts.
type Options struct {
	// Configs are mapping files to serve instead of the Temporal examples' (the example worker
	// runs anyway).
	Configs []string
	// TemporalPort is the port of the Temporal dev server Start runs when TEMPORAL_ADDRESS names
	// none; its web UI is on TemporalPort+1000.
	TemporalPort int
	// SFNEndpoint, if set, is where the Step Functions examples are created, run by SFNRole.
	SFNEndpoint, SFNRole string
	// Restate also runs a Restate server (unless RESTATE_ADMIN_URL names one) on RestatePort (its
	// admin API on +1, its node on +2) with the Restate examples' deployment.
	Restate     bool
	RestatePort int
	// Cache is the folder of what dev builds and keeps between runs; empty: CacheDir().
	Cache string
	// Log is told what Start does, and gets the engines' own warnings.
	Log io.Writer
}

// Env is what Start started, for `taskgate dev` to serve.
type Env struct {
	// Env is the process's environment with what Start set up (TEMPORAL_ADDRESS, SFN_*,
	// RESTATE_*): the mapping files and their engines read it.
	Env adapters.Env
	// Mappings are the mapping files to serve: Options.Configs or the Temporal examples', then the
	// Step Functions and the Restate examples' when they were asked for.
	Mappings []string
	// Dir is the dev folder, where dev keeps what lasts between runs: the engines' history, the
	// token key.
	Dir string
	// Temporal is the Temporal frontend's host:port; TemporalUI the web UI's URL when Start runs
	// the server.
	Temporal, TemporalUI string
	// RestateIngress and RestateAdmin are the Restate server's URLs, with Options.Restate.
	RestateIngress, RestateAdmin string

	stop []func()
}

// Start starts what o asks for. Close stops it.
func Start(ctx context.Context, o Options) (*Env, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Cache == "" {
		cache, err := CacheDir()
		if err != nil {
			return nil, err
		}
		o.Cache = cache
	}
	e := &Env{Dir: filepath.Join(o.Cache, "dev")}
	if err := e.start(ctx, o); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (e *Env) start(ctx context.Context, o Options) error {
	if err := os.MkdirAll(e.Dir, 0o700); err != nil {
		return err
	}
	if err := e.startTemporal(ctx, o); err != nil {
		return err
	}
	e.Mappings = slices.Clone(o.Configs)
	if len(e.Mappings) == 0 {
		f := filepath.Join(e.Dir, "temporal-tools.yaml")
		if err := writeAtomically(f, temporalexamples.Mapping); err != nil {
			return err
		}
		e.Mappings = []string{f}
	}
	if o.SFNEndpoint != "" {
		if err := e.ensureSFNExamples(ctx, o); err != nil {
			return err
		}
	}
	if o.Restate {
		if err := e.startRestate(ctx, o); err != nil {
			return err
		}
	}
	return e.startWorker(ctx, o.Log)
}

// Close stops what Start started, in the reverse order.
func (e *Env) Close() {
	for i := len(e.stop) - 1; i >= 0; i-- {
		e.stop[i]()
	}
	e.stop = nil
}

// CacheDir returns the one folder where taskgate keeps what it builds (bin/) and what dev keeps
// between runs (dev/): taskgate in the user's cache folder.
func CacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user's cache folder, where taskgate keeps its tools and dev state: %w; set XDG_CACHE_HOME or HOME", err)
	}
	return filepath.Join(base, "taskgate"), nil
}

// toolsDir is where dev finds and builds the engines' binaries: TASKGATE_TOOLS, else the cache.
func toolsDir(cache string) string {
	if dir := os.Getenv("TASKGATE_TOOLS"); dir != "" {
		return dir
	}
	return cache
}

// writeAtomically writes a file of the dev folder so that another dev starting at the same time
// (clients that spawn one each) never reads it half written.
func writeAtomically(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
