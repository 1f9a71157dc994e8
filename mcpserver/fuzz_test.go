package mcpserver_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/taskgate/taskgate/adapters"
	_ "github.com/taskgate/taskgate/adapters/memengine" // the "memory" engine kind
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/tasks"
	"github.com/taskgate/taskgate/tasks/token"
)

// The fuzz targets feed the two entries of the server, the HTTP handler and the stdio line
// reader, with what the fuzzer makes of the sweep's requests (and the corpus under
// testdata/fuzz). Whatever they get, nothing may panic, no HTTP answer may be a 5xx, and the
// stdio connection must still answer a ping. Over HTTP, every request go-sdk serves must be the
// one the front read: the same method, task id and tool.

var fuzzEnv struct {
	once sync.Once
	srv  *mcpserver.Server
	http http.Handler
	logs *panicLog
	err  error
	// disagreements are the requests of the latest HTTP input that go-sdk read otherwise than the front.
	mu            sync.Mutex
	disagreements []string
}

func fuzzServer(t testing.TB) (*mcpserver.Server, http.Handler, *panicLog) {
	fuzzEnv.once.Do(func() {
		set, err := mapping.Load("testdata/fuzz-tools.yaml")
		if err != nil {
			fuzzEnv.err = err
			return
		}
		engines := map[string]adapters.Conn{}
		for name, e := range set.Engines {
			if engines[name], err = e.Config.Open(context.Background(), adapters.OpenOptions{}); err != nil {
				fuzzEnv.err = err
				return
			}
		}
		keys, _ := token.ParseKeys(token.NewKey("fuzz"))
		sealed, _ := token.NewSealed(keys)
		fuzzEnv.logs = &panicLog{}
		log := slog.New(slog.NewTextHandler(fuzzEnv.logs, nil))
		var svc *tasks.Service
		if svc, fuzzEnv.err = tasks.New(tasks.Config{Mapping: set, Engines: engines, Tokens: sealed, Logger: log}); fuzzEnv.err != nil {
			return
		}
		fuzzEnv.srv, fuzzEnv.err = mcpserver.New(mcpserver.Config{Tasks: svc, Logger: log, Limits: mcpserver.Limits{CallsPerSecond: -1, PollsPerSecond: -1}})
		if fuzzEnv.err == nil {
			fuzzEnv.srv.WatchReadings(func(front, served mcpserver.Reading) {
				if front != served {
					fuzzEnv.mu.Lock()
					defer fuzzEnv.mu.Unlock()
					fuzzEnv.disagreements = append(fuzzEnv.disagreements, fmt.Sprintf("the front read %+v, go-sdk served %+v", front, served))
				}
			})
			fuzzEnv.http = fuzzEnv.srv.HTTPHandler()
		}
	})
	if fuzzEnv.err != nil {
		t.Fatal(fuzzEnv.err)
	}
	return fuzzEnv.srv, fuzzEnv.http, fuzzEnv.logs
}

func FuzzHTTP(f *testing.F) {
	for i, line := range sweep() {
		f.Add(line, []string{"", "2025-11-25", "2026-07-28"}[i%3], "", "")
	}
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x"}}`, "2026-07-28", "tasks/get", "y")
	// The spellings that decoders read differently (TestOneReadingOfARequest).
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x"}}}`, "2025-11-25", "", "")
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","METHOD":"ping","params":{"taskId":"x"}}`, "2025-11-25", "", "")
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x","TASKID":"y"}}`, "2026-07-28", "tasks/get", "y")
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"task\u0049d":"x"}}`, "2026-07-28", "tasks/get", "x")
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"quick_echo","NAME":"x"}}`, "2025-11-25", "", "")
	f.Fuzz(func(t *testing.T, body, version, method, name string) {
		_, h, logs := fuzzServer(t)
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range map[string]string{"Mcp-Protocol-Version": version, "Mcp-Method": method, "Mcp-Name": name} {
			if v != "" && !strings.ContainsAny(v, "\r\n\x00") {
				req.Header.Set(k, v)
			}
		}
		fuzzEnv.mu.Lock()
		fuzzEnv.disagreements = nil
		fuzzEnv.mu.Unlock()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("HTTP %d for %q: %s", rec.Code, body, rec.Body)
		}
		fuzzEnv.mu.Lock()
		defer fuzzEnv.mu.Unlock()
		if len(fuzzEnv.disagreements) > 0 {
			t.Fatalf("%q: %s", body, strings.Join(fuzzEnv.disagreements, "; "))
		}
		logs.check(t)
	})
}

func FuzzStdioLine(f *testing.F) {
	for _, line := range sweep() {
		f.Add(line)
	}
	srv, _, logs := fuzzServer(f)
	c := newLineClient(f, srv)
	var n int
	f.Fuzz(func(t *testing.T, line string) {
		// One line is one message: the fuzzer's line breaks would make several.
		c.send(t, strings.NewReplacer("\n", " ", "\r", " ").Replace(line))
		n++
		ping := fmt.Sprint(1_000_000 + n)
		c.roundTrip(t, `{"jsonrpc":"2.0","id":`+ping+`,"method":"ping"}`, ping)
		logs.check(t)
	})
}
