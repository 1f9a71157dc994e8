package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taskgate/taskgate/internal/testenv"
)

// TestMain lets the test binary be the bench's helper processes too, as the bench binary is.
func TestMain(m *testing.M) {
	if code, ok := asHelper(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestShort runs the bench in its smoke mode against the real engines and checks that every figure
// was produced, as finite numbers: positive, except error counts and CPU (zero or more) and
// differences (any sign). It asserts no timing: the numbers themselves are for people, on a quiet
// machine.
func TestShort(t *testing.T) {
	needEngines(t)
	dir := t.TempDir()
	jsonFile, mdFile, svgFile := filepath.Join(dir, "results.json"), filepath.Join(dir, "results.md"), filepath.Join(dir, "fleet.svg")
	// Every figure but fleet-platform, which TestFleetPlatformShort runs.
	figures := slices.DeleteFunc(slices.Clone(figureKeys), func(k string) bool { return k == "fleet-platform" })
	_, rows := runShort(t, "-only", strings.Join(figures, ","), "-json", jsonFile, "-markdown", mdFile, "-fleet-svg", svgFile)

	md, err := os.ReadFile(mdFile)
	if err != nil {
		t.Fatal(err)
	}
	// A build without subscriptions/listen leaves the notified rows NaN, and says so.
	pushless := strings.Contains(string(md), "This build does not push: subscriptions/listen ")
	byName := map[string]Row{}
	for _, r := range rows {
		byName[r.Name] = r
		if pushless && math.IsNaN(r.Taskgate) && (strings.HasPrefix(r.Name, "fleet: end to notified p95 (s)") || strings.HasPrefix(r.Name, "fleet: ends not notified")) {
			continue
		}
		if msg := checkRow(r); msg != "" {
			t.Errorf("%s: %s (%+v)", r.Name, msg, r)
		}
	}
	var want []string
	for _, engine := range []string{"Temporal", "Step Functions", "Restate"} {
		for _, state := range []string{"running", "ended"} {
			for _, v := range []string{"tasks/get over HTTP", "tasks/get over stdio", "2025-11-25 tasks/get over HTTP", "task_status (handle tool) over HTTP"} {
				for _, p := range []string{"p50", "p90", "p99"} {
					want = append(want, fmt.Sprintf("poll: %s, %s task: %s %s", engine, state, v, p))
				}
			}
		}
		want = append(want, fmt.Sprintf("start: %s: tools/call -> CreateTaskResult over HTTP p50", engine))
	}
	for _, tasks := range []string{"1 running task", "20 running tasks"} {
		for _, pollers := range []int{1, 16, 64, 256} {
			for _, m := range []string{"polls/s", "engine calls/s", "errors", "p99", "most engine reads in flight for one task", "CPU of the taskgate process", "CPU of the whole machine"} {
				want = append(want, fmt.Sprintf("throughput: %s, %s: %s", pollersLabel(pollers), tasks, m))
			}
		}
		for _, pollers := range []int{64, 256} {
			for _, m := range []string{"polls/s", "engine calls/s", "errors", "p99", "CPU of the first taskgate process", "CPU of the second taskgate process"} {
				want = append(want, fmt.Sprintf("scale-out: %d pollers, %s: %s", pollers, tasks, m))
			}
		}
	}
	for _, n := range []string{"0", "20", "200"} {
		for _, m := range []string{"RSS", "peak RSS", "goroutines", "Go heap in use after GC"} {
			want = append(want, fmt.Sprintf("memory: %s tasks in flight: %s", n, m))
		}
	}
	want = append(want, "memory: 200 tasks in flight: RSS added since 0 tasks",
		"economy: 2-minute task: engine calls, client follows pollIntervalMs (default polling)",
		"economy: 2-minute task: engine calls the mapping's default curve predicts (a Describe per poll, one outcome read)",
		"economy: 2-minute task: engine calls, client polls every second through taskgate",
		"economy: 2-minute task: client polls, default polling",
		"economy: 2-minute task: pollIntervalMs answered at the first poll")
	for _, suffix := range []string{"", ", 20% of reads throttled"} {
		for _, m := range []string{"sfn engine reads per second, max over 10 s windows", "temporal engine reads per second, max over 10 s windows",
			"restate engine reads per second, max over 10 s windows", "client errors", "stale answers, share", "staleness p95 (s)",
			"end to seen terminal p95 (s)", "end to notified p95 (s)", "ends not notified"} {
			want = append(want, "fleet: "+m+suffix)
		}
	}
	for _, m := range []string{"temporal reads per second at 20 running", "temporal reads per second at 20 running, mean over 10 s windows",
		"temporal staleness p95 at 20 running (s)", "client errors at 20 running"} {
		want = append(want, "fleet: "+m)
	}
	for _, name := range want {
		if _, ok := byName[name]; !ok {
			t.Errorf("no row %q", name)
		}
	}
	if svg, err := os.ReadFile(svgFile); err != nil || !strings.HasPrefix(string(svg), "<svg ") || !strings.Contains(string(svg), "engine throttling") {
		t.Errorf("the fleet chart %s: %v, want an SVG with the throttling window marked", svgFile, err)
	}

	// The files hold the same rows: JSON as {name, unit, direct, taskgate, ratio}, Markdown as
	// one table per figure.
	raw, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	var written []map[string]any
	if err := json.Unmarshal(raw, &written); err != nil {
		t.Fatal(err)
	}
	if len(written) != len(rows) {
		t.Fatalf("%s holds %d rows, want %d", jsonFile, len(written), len(rows))
	}
	for _, w := range written {
		for _, k := range []string{"name", "unit", "direct", "taskgate", "ratio"} {
			if _, ok := w[k]; !ok {
				t.Fatalf("a JSON row lacks %q: %v", k, w)
			}
		}
	}
	for figure, title := range figureTitles {
		if figure == figPlatform {
			continue
		}
		if !strings.Contains(string(md), "## "+title+"\n") {
			t.Errorf("%s has no section %q", mdFile, title)
		}
	}
}

// checkRow says what is wrong with a row's numbers, or "".
func checkRow(r Row) string {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	// Readings of running tasks answer polls for the polling interval: a short phase of the
	// throughput and scale-out figures may make no engine call at all.
	reused := strings.HasSuffix(r.Name, ": engine calls/s") || strings.HasSuffix(r.Name, ": most engine reads in flight for one task")
	zeroOK := r.Unit == unitErrors || r.Unit == unitCPU || r.Unit == unitShare || r.Unit == unitCount || reused
	switch {
	case !finite(r.Taskgate):
		return "taskgate is not a finite number"
	case zeroOK && r.Taskgate < 0:
		return "taskgate is negative"
	case !zeroOK && r.Unit != unitDelta && r.Taskgate <= 0:
		return "taskgate is not positive"
	case r.Direct != nil && (!finite(*r.Direct) || *r.Direct < 0):
		return "direct is not a finite number of zero or more"
	case r.Ratio != nil && (!finite(*r.Ratio) || *r.Ratio < 0 || (*r.Ratio == 0 && !zeroOK)):
		return "the ratio is not a finite positive number"
	}
	return ""
}

// runShort runs the short bench with args, within 10 minutes, and logs its table.
func runShort(t *testing.T, args ...string) (options, []Row) {
	t.Helper()
	opts, err := parseFlags(append([]string{"-short"}, args...), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var table bytes.Buffer
	start := time.Now()
	rows, err := run(ctx, opts, &table, logWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the short bench (%s) took %s:\n%s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond), table.String())
	return opts, rows
}

// logWriter sends the bench's progress to the test log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// needEngines skips t unless the three engines run (scripts/with-engines), and gives the Step
// Functions endpoint test credentials where none are set.
func needEngines(t *testing.T) {
	t.Helper()
	testenv.TemporalAddress(t)
	testenv.SFNEndpoint(t)
	testenv.RestateAdmin(t)
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1"} {
		if os.Getenv(k) == "" {
			t.Setenv(k, v)
		}
	}
}
