package observe

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Readiness answers readiness probes (/readyz) from a check of the engines, run at most once per
// TTL: the probes in between get the last answer, and concurrent probes share one check. A failed
// check answers 503 until a later check passes; nothing needs a restart. A failed answer stands
// for a shorter time, so that readiness follows an engine's return within about a second.
type Readiness struct {
	// Check says whether the engines are reachable and serve what the mapping names.
	Check func(context.Context) error
	// TTL is how long a passing answer stands (default 5s), FailedTTL a failed one (default 1s);
	// Timeout bounds a check (default 3s).
	TTL, FailedTTL, Timeout time.Duration
	// Log gets a line when readiness changes, with the check's error.
	Log *slog.Logger
	// Reason words a failed check for the prober, who must not see what is for the log (engine
	// addresses, tool sources); nil: the same words for every failure.
	Reason func(error) string
	// Detail, when set, says more after the answer, ready or not, in lines of its own (what the
	// drift checks found): nothing in it changes the answer.
	Detail func() string

	flight  singleflight.Group
	mu      sync.Mutex
	checked time.Time
	err     error
}

func (r *Readiness) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if err := r.state(); err != nil {
		reason := "an engine is unreachable or does not serve every mapped target; the server's log says which"
		if r.Reason != nil {
			reason = r.Reason(err)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "not ready: "+reason+"\n"+r.detail())
		return
	}
	io.WriteString(w, "ready\n"+r.detail())
}

func (r *Readiness) detail() string {
	if r.Detail == nil {
		return ""
	}
	return r.Detail()
}

// state is the standing answer, checked again once it is older than the TTL.
func (r *Readiness) state() error {
	ttl, failedTTL, timeout := cmp.Or(r.TTL, 5*time.Second), cmp.Or(r.FailedTTL, time.Second), cmp.Or(r.Timeout, 3*time.Second)
	r.mu.Lock()
	checked, err := r.checked, r.err
	r.mu.Unlock()
	if err != nil {
		ttl = min(ttl, failedTTL)
	}
	if !checked.IsZero() && time.Since(checked) < ttl {
		return err
	}
	v, _, _ := r.flight.Do("check", func() (any, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		now := r.Check(ctx)
		r.mu.Lock()
		before, first := r.err, r.checked.IsZero()
		r.checked, r.err = time.Now(), now
		r.mu.Unlock()
		switch {
		case r.Log == nil:
		case now != nil && (before == nil || first):
			r.Log.Warn("not ready", "error", now)
		case now == nil && before != nil:
			r.Log.Info("ready again")
		}
		return now, nil
	})
	err, _ = v.(error)
	return err
}
