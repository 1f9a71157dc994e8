package dialects

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/taskgate/taskgate/internal/jsonappend"
)

// The answers of the HTTP fast path written without reflection: encoding/json's reflection was a
// fifth of taskgate's own CPU on a poll. Each writes the bytes encoding/json writes for the same
// value (HTML escaping off), and says false for a shape it does not write, which the fast path
// then encodes with encoding/json; tests compare the two on every shape.

// AppendJSON writes the task, with meta (an encoded object, or nil) as its _meta in place of its
// own.
func (t *detailedTask) AppendJSON(b, meta []byte) ([]byte, bool) {
	if len(t.InputRequests) > 0 || t.Error != nil && len(t.Error.Data) > 0 || t.Result != nil && len(t.Result.Meta) > 0 {
		return b, false
	}
	b = append(b, '{')
	if meta != nil {
		b = append(append(append(b, `"_meta":`...), meta...), ',')
	}
	b = append(b, `"resultType":"complete",`...)
	b = t.taskInfo.appendMembers(b)
	if t.Result != nil {
		var ok bool
		if b, ok = t.Result.appendJSON(append(b, `,"result":`...)); !ok {
			return b, false
		}
	}
	if e := t.Error; e != nil {
		b = strconv.AppendInt(append(b, `,"error":{"code":`...), e.Code, 10)
		b = append(jsonappend.String(append(b, `,"message":`...), e.Message), '}')
	}
	return append(b, '}'), true
}

func (t *taskInfo) appendMembers(b []byte) []byte {
	b = jsonappend.String(append(b, `"taskId":`...), t.TaskID)
	b = jsonappend.String(append(b, `,"status":`...), t.Status)
	if t.StatusMessage != "" {
		b = jsonappend.String(append(b, `,"statusMessage":`...), t.StatusMessage)
	}
	b = jsonappend.String(append(b, `,"createdAt":`...), t.CreatedAt)
	b = jsonappend.String(append(b, `,"lastUpdatedAt":`...), t.LastUpdatedAt)
	if t.TTLMs == nil {
		b = append(b, `,"ttlMs":null`...)
	} else {
		b = strconv.AppendInt(append(b, `,"ttlMs":`...), *t.TTLMs, 10)
	}
	if t.PollIntervalMs != 0 {
		b = strconv.AppendInt(append(b, `,"pollIntervalMs":`...), t.PollIntervalMs, 10)
	}
	return b
}

// appendJSON writes r: false when it has a _meta or no content (null).
func (r *callToolResult) appendJSON(b []byte) ([]byte, bool) {
	if len(r.Meta) > 0 || r.Content == nil {
		return b, false
	}
	b = append(b, `{"resultType":"complete","content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(jsonappend.String(append(b, `{"type":"text","text":`...), c.Text), '}')
	}
	b = append(b, ']')
	if len(r.StructuredContent) > 0 {
		buf := bytes.NewBuffer(append(b, `,"structuredContent":`...))
		if json.Compact(buf, r.StructuredContent) != nil {
			return buf.Bytes(), false
		}
		b = buf.Bytes()
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), true
}
