package restate

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/taskgate/taskgate/adapters/driver"
)

var _ driver.Sampler = (*conn)(nil)

// Samples reads the inputs of at most n of the handler's latest invocations, whoever made them
// and whatever their status, newest first: one query of sys_invocation for their ids, one of
// sys_journal for their first journal entry (the Input command, which holds the request body).
// Restate keeps the journal while an invocation is scheduled, runs or backs off, and for the
// service's journal retention once it completes (a day by default on Restate 1.7): an
// invocation past it, or one still in a virtual object's inbox (its journal not begun), has no
// input to read and is passed over. The input is the request body as JSON; an empty body is null.
func (e *conn) Samples(ctx context.Context, t driver.Target, n int) ([]json.RawMessage, error) {
	h, err := handlerOf(t)
	if err != nil || n <= 0 {
		return nil, err
	}
	what := "read the inputs of " + t.Name
	var ids []struct {
		ID string `json:"id"`
	}
	sql := "SELECT id FROM sys_invocation WHERE target_service_name = " + literal(h.service) + " AND target_handler_name = " +
		literal(h.handler) + " ORDER BY created_at DESC, id LIMIT " + strconv.Itoa(n)
	if err := e.query(ctx, what, sql, &ids); err != nil || len(ids) == 0 {
		return nil, err
	}
	quoted := make([]string, len(ids))
	for i, r := range ids {
		quoted[i] = literal(r.ID)
	}
	var entries []struct {
		ID    string `json:"id"`
		Entry string `json:"entry_json"`
	}
	sql = "SELECT id, entry_json FROM sys_journal WHERE index = 0 AND id IN (" + strings.Join(quoted, ", ") + ")"
	if err := e.query(ctx, what, sql, &entries); err != nil {
		return nil, err
	}
	byID := make(map[string]string, len(entries))
	for _, en := range entries {
		byID[en.ID] = en.Entry
	}
	var inputs []json.RawMessage
	for _, r := range ids {
		entry, ok := byID[r.ID]
		if !ok {
			continue
		}
		in, err := inputOf(entry)
		if err != nil {
			return nil, fmt.Errorf("restate: %s: invocation %s: %w", what, r.ID, err)
		}
		inputs = append(inputs, in)
	}
	return inputs, nil
}

// inputOf reads the request body out of an Input journal entry as sys_journal shows it (journal
// version 2: {"Command": {"Input": {"payload": BYTES, ...}}}, the bytes as an array of numbers).
// It never repeats the entry, which holds the input and the request's headers.
func inputOf(entry string) (json.RawMessage, error) {
	var e struct {
		Command struct {
			Input *struct {
				Payload json.RawMessage `json:"payload"`
			}
		}
	}
	if err := json.Unmarshal([]byte(entry), &e); err != nil || e.Command.Input == nil {
		return nil, fmt.Errorf("its first journal entry is not an Input command of journal version 2, the one taskgate reads")
	}
	body, err := payloadBytes(e.Command.Input.Payload)
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return json.RawMessage("null"), nil
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("its input is not JSON")
	}
	return body, nil
}

// payloadBytes reads bytes written as an array of numbers, or as a base64 string.
func payloadBytes(raw json.RawMessage) ([]byte, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("the payload of its Input entry is not base64")
		}
		return b, nil
	}
	var nums []int
	if err := json.Unmarshal(raw, &nums); err != nil {
		return nil, fmt.Errorf("the payload of its Input entry is not bytes")
	}
	b := make([]byte, len(nums))
	for i, v := range nums {
		if v < 0 || v > 255 {
			return nil, fmt.Errorf("the payload of its Input entry is not bytes")
		}
		b[i] = byte(v)
	}
	return b, nil
}
