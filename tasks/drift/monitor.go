package drift

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// FirstCheck is how soon after Run starts the first check is made (or after every, when
// shorter): soon, but not in the way of the start-up's own check of the targets.
const FirstCheck = 10 * time.Second

// Monitor repeats the checks of a Checker and keeps what they found: the latest report of each
// tool, and of each check the last answer (Fits or Drifted) and when it was given, which a check
// that could not be made leaves standing. It logs a line each time a check of a tool changes state.
type Monitor struct {
	checker *Checker
	log     *slog.Logger
	every   time.Duration

	mu       sync.Mutex
	reports  []Report
	answered map[answerKey]Answer
	checked  time.Time
}

type answerKey struct{ tool, check string }

// Answer is the last answer of one check of one tool.
type Answer struct {
	Tool, Check string
	Drifted     bool
	At          time.Time
}

// NewMonitor repeats c's checks every interval (Run), logging to log (nil: nowhere).
func NewMonitor(c *Checker, every time.Duration, log *slog.Logger) *Monitor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Monitor{checker: c, every: every, log: log, answered: map[answerKey]Answer{}}
}

// Run checks every tool FirstCheck after it starts (or every, when shorter), then every interval,
// until ctx ends.
func (m *Monitor) Run(ctx context.Context) {
	next := min(FirstCheck, m.every)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(next):
		}
		m.CheckNow(ctx)
		next = m.every
	}
}

// CheckNow checks every tool once and records what it found.
func (m *Monitor) CheckNow(ctx context.Context) {
	reports := m.checker.All(ctx)
	if ctx.Err() != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, r := range reports {
		var was Report
		if i < len(m.reports) {
			was = m.reports[i]
		}
		for _, name := range []string{TargetCheck, InputsCheck} {
			m.record(r.Tool.Name, name, was.Check(name), r.Check(name))
		}
	}
	m.reports, m.checked = reports, m.checker.now()
}

// record keeps a check's answer and logs a change of its state, under m.mu. A first check logs
// only what is worth a look: drift, or a check that could not be made.
func (m *Monitor) record(tool, name string, was, now Check) {
	if now.State == Fits || now.State == Drifted {
		m.answered[answerKey{tool, name}] = Answer{Tool: tool, Check: name, Drifted: now.State == Drifted, At: now.At}
	}
	if was.State == now.State || (was.State == Unchecked && (now.State == Fits || now.State == Skipped)) {
		return
	}
	level := slog.LevelInfo
	if now.State == Drifted || now.State == Unknown {
		level = slog.LevelWarn
	}
	m.log.Log(context.Background(), level, "drift check: "+now.State.String(), "tool", tool, "check", name,
		"was", was.State.String(), "detail", now.Summary())
}

// Answers are the last answer of each check of each tool that has given one, in the mapping's
// order.
func (m *Monitor) Answers() []Answer {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Answer
	for _, t := range m.checker.svc.Mapping().Tools {
		for _, name := range []string{TargetCheck, InputsCheck} {
			if a, ok := m.answered[answerKey{t.Name, name}]; ok {
				out = append(out, a)
			}
		}
	}
	return out
}

// Reports are the latest reports, one a tool, in the mapping's order; none before the first check.
func (m *Monitor) Reports() []Report {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Report(nil), m.reports...)
}

// Detail says what the latest checks found, a line a tool after a line that says when they were
// made (nothing before the first check), for the detailed /readyz: the fields at fault, but not the engine's words, which name
// addresses and accounts and are for the log.
func (m *Monitor) Detail() string {
	m.mu.Lock()
	reports, checked := m.reports, m.checked
	m.mu.Unlock()
	if checked.IsZero() {
		return "" // nothing to say yet: readiness answers as it did without drift checks
	}
	drifted := 0
	for _, r := range reports {
		if r.Drifted() {
			drifted++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "drift: %d of %d tools drifted, checked %s (every %s)\n", drifted, len(reports), checked.UTC().Format(time.RFC3339), m.every)
	for _, r := range reports {
		fmt.Fprintf(&b, "drift: tool %q: target %s; inputs %s\n", r.Tool.Name, r.Target.public(), r.Inputs.public())
	}
	return b.String()
}

// public is Summary without the engine's words.
func (c Check) public() string {
	switch {
	case c.State == Unknown:
		return "unknown: not checked (the server's log says why)"
	case c.State == Drifted && len(c.Findings) == 0:
		return "drifted (the server's log says why)"
	}
	return c.Summary()
}
