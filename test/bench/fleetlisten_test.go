package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskgate/taskgate/internal/mcpclient"
)

// listenAnswers serves subscriptions/listen as a server that pushes ("push": every id
// acknowledged, then one task working and the others completed, the stream left open), as
// go-sdk's server without listen ("deaf": an acknowledgement of nothing, then the response) or
// as one that refuses it ("error").
func listenAnswers(t *testing.T, mode string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     int
			Params struct {
				Notifications struct{ TaskIDs []string }
			}
		}
		json.NewDecoder(r.Body).Decode(&req)
		if mode == "error" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"Method not found"}}`, req.ID)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(msg any) {
			b, _ := json.Marshal(msg)
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		if mode == "deaf" {
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": map[string]any{"notifications": map[string]any{}}})
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{}})
			return
		}
		ids := req.Params.Notifications.TaskIDs
		send(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": map[string]any{"notifications": map[string]any{"taskIds": ids}}})
		for i, id := range ids {
			status := map[bool]string{true: "working", false: "completed"}[i == 0]
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks", "params": map[string]any{"taskId": id, "status": status}})
		}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A listener notes the ends its stream shows, and knows a server that does not listen by its
// error answer or by an acknowledgement of none of the tasks, without counting client errors.
func TestListening(t *testing.T) {
	for _, mode := range []string{"push", "deaf", "error"} {
		t.Run(mode, func(t *testing.T) {
			tasks := []*fleetTask{{id: "t0"}, {id: "t1"}, {id: "t2"}}
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			var l listening
			errs := 0
			l.listen(ctx, mcpclient.Modern(mcpclient.HTTP{URL: listenAnswers(t, mode)}, extTasks), tasks, func(error) { errs++ })
			if errs != 0 {
				t.Errorf("%d client errors, want none", errs)
			}
			want := map[string]string{"push": "<nil>", "deaf": "subscriptions/listen acknowledged none of the 3 task ids asked for",
				"error": "subscriptions/listen answered error -32601: Method not found"}[mode]
			if fmt.Sprint(l.refused) != want {
				t.Errorf("refused: %v, want %s", l.refused, want)
			}
			notified := []bool{tasks[0].notified.Load() != 0, tasks[1].notified.Load() != 0, tasks[2].notified.Load() != 0}
			if wantNotified := fmt.Sprint([]bool{false, mode == "push", mode == "push"}); fmt.Sprint(notified) != wantNotified {
				t.Errorf("tasks notified ended: %v, want %s (the first still works)", notified, wantNotified)
			}
			end := time.Now()
			for _, task := range tasks {
				l.record(task, end.Add(-10*time.Second), end)
			}
			if mode == "push" && (l.acknowledged != 3 || l.missed != 1 || len(l.delays) != 3 || !strings.Contains(l.summary(), "1 not notified")) {
				t.Errorf("acknowledged %d, missed %d, delays %v, want 3, 1 (the task never notified) and 3", l.acknowledged, l.missed, l.delays)
			}
			if mode != "push" && (len(l.delays) != 0 || l.missed != 0) {
				t.Errorf("a server that does not listen: delays %v, missed %d, want none (the rows are NaN)", l.delays, l.missed)
			}
		})
	}
}

// A client of the platform figure told of an end by its listen polls the task no more and saw the
// end then; the fleet figure's client polls on until a poll shows it.
func TestAListenedEndStopsThePolls(t *testing.T) {
	var polls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		polls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"taskId":"t","status":"completed"}}`)
	}))
	defer srv.Close()
	c := mcpclient.Modern(mcpclient.HTTP{URL: srv.URL}, extTasks)
	at := time.Now().Add(-time.Minute)
	for _, listenEnds := range []bool{true, false} {
		polls.Store(0)
		task := &fleetTask{id: "t"}
		task.notified.Store(at.UnixNano())
		(&fleetRun{listenEnds: listenEnds}).poll(t.Context(), c, task, nil)
		if wantPolls := map[bool]int64{true: 0, false: 1}[listenEnds]; polls.Load() != wantPolls || listenEnds && !task.seen.Equal(time.Unix(0, at.UnixNano())) {
			t.Errorf("listenEnds %v: %d polls, seen %v; want %d, and seen when notified (%v) if it stops", listenEnds, polls.Load(), task.seen, wantPolls, at)
		}
	}
}
