package main

import (
	"context"
	"encoding/json"
	"time"
)

// listen follows one task of a client on 2026-07-28 with subscriptions/listen, as well as its
// polls: each notifications/tasks about it goes to seen, the newest first (an older one not yet
// taken is replaced). A stream that ends before the task does (its replica was killed or shut
// down) is opened again, through the front, on any replica. It returns when ctx ends.
func (c *client) listen(ctx context.Context, id string, seen chan reading) {
	for opened := 0; ctx.Err() == nil; opened++ {
		c.run.stats.listened(opened > 0)
		_, _, err := c.s.mcp.Listen(ctx, map[string]any{"taskIds": []string{id}}, func(method string, params json.RawMessage) {
			if method != "notifications/tasks" {
				return
			}
			rd, ok := notifiedReading(params, id)
			if !ok {
				return
			}
			select {
			case <-seen:
			default:
			}
			seen <- rd
		})
		// The stream ended: the task did (the client stops listening once it sees the end), the
		// replica shut down, or it went away (an error): listen again, on any replica.
		pause := 200 * time.Millisecond
		if err != nil {
			pause = 500 * time.Millisecond
		}
		sleep(ctx, pause)
	}
}

// notifiedReading is a notifications/tasks about task id as a reading.
func notifiedReading(params json.RawMessage, id string) (reading, bool) {
	var n struct {
		TaskID        string                     `json:"taskId"`
		Status        string                     `json:"status"`
		Result        *toolResult                `json:"result"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
	}
	if json.Unmarshal(params, &n) != nil || n.TaskID != id || n.Status == "" {
		return reading{}, false
	}
	rd := reading{status: n.Status, result: n.Result, notified: true}
	for k := range n.InputRequests {
		rd.questions = append(rd.questions, k)
	}
	return rd, true
}
