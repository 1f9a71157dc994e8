package dialects

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/tasks"
)

// The results taskgate itself puts on the wire that more than one dialect answers, one type per
// shape (each dialect's own are in its file). Required fields have no
// omitempty, and fixed words are types that can marshal only to that word, so that no result can
// lack a field its schema requires. Each embeds mcp.ResultBase: the SDK adds _meta.serverInfo to
// results of 2026-07-28 requests after the middleware returns.

// complete marshals to "complete", the resultType of every result except a created task. Clients
// before 2026-07-28 ignore it: their schemas allow any extra field on a result.
type complete struct{}

func (complete) MarshalJSON() ([]byte, error) { return []byte(`"complete"`), nil }

// created marshals to "task", the resultType of a CreateTaskResult.
type created struct{}

func (created) MarshalJSON() ([]byte, error) { return []byte(`"task"`), nil }

type text struct{}

func (text) MarshalJSON() ([]byte, error) { return []byte(`"text"`), nil }

type textContent struct {
	Type text   `json:"type"`
	Text string `json:"text"`
}

// callToolResult is a CallToolResult: always one text content.
type callToolResult struct {
	mcp.ResultBase
	ResultType        complete        `json:"resultType"`
	Content           []textContent   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// IsToolError reports whether res is a tool's result with isError.
func IsToolError(res mcp.Result) bool {
	r, ok := res.(*callToolResult)
	return ok && r.IsError
}

// wireResult renders a tool result for a client of protocol 2026-07-28 (modern) or an earlier
// one, where structuredContent must be an object: other values are left to the text.
func wireResult(r *tasks.Result, modern bool) *callToolResult {
	out := &callToolResult{Content: []textContent{{Text: r.Text}}, IsError: r.IsError}
	if r.Structured != nil && (modern || isObject(r.Structured)) {
		out.StructuredContent = r.Structured
	}
	return out
}

func isObject(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// inputRequiredResult asks the client for input before the request can go on (MRTR).
type inputRequiredResult struct {
	mcp.ResultBase
	ResultType    inputRequired `json:"resultType"`
	InputRequests inputRequests `json:"inputRequests"`
	RequestState  string        `json:"requestState,omitempty"`
}

type inputRequired struct{}

func (inputRequired) MarshalJSON() ([]byte, error) { return []byte(`"input_required"`), nil }

// inputRequests are the requests the client fulfils, by key, in the order they are asked: a JSON
// object whose keys keep that order (a client that asks one by one asks in it).
type inputRequests []keyedRequest

type keyedRequest struct {
	key string
	req inputRequest
}

func (rs inputRequests) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		key, _ := json.Marshal(r.key)
		req, err := json.Marshal(r.req)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, key...), ':'), req...)
	}
	return append(b, '}'), nil
}

// inputRequest is one request the client fulfils: always a form-mode elicitation here.
type inputRequest struct {
	Method elicitMethod `json:"method"`
	Params elicitParams `json:"params"`
}

type elicitMethod struct{}

func (elicitMethod) MarshalJSON() ([]byte, error) { return []byte(`"elicitation/create"`), nil }

type elicitParams struct {
	Mode            formMode        `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

type formMode struct{}

func (formMode) MarshalJSON() ([]byte, error) { return []byte(`"form"`), nil }

// ack is the empty answer of tasks/cancel and tasks/update in the extension.
type ack struct {
	mcp.ResultBase
	ResultType complete `json:"resultType"`
}

// tools/list.

type toolEntry struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Execution is 2025-11-25's execution.taskSupport.
	Execution *toolExecution `json:"execution,omitempty"`
	// InvocationMode is SEP-1391's "sync" or "async".
	InvocationMode string `json:"invocationMode,omitempty"`
}

type toolExecution struct {
	TaskSupport string `json:"taskSupport"`
}

type private struct{}

func (private) MarshalJSON() ([]byte, error) { return []byte(`"private"`), nil }

// listToolsResult is cacheable on 2026-07-28. The list depends on what the caller declared, so it
// is cached per caller only.
type listToolsResult struct {
	mcp.ResultBase
	ResultType complete    `json:"resultType"`
	Tools      []toolEntry `json:"tools"`
	TTLMs      int64       `json:"ttlMs"`
	CacheScope private     `json:"cacheScope"`
}

// toolsListTTL is how long a client may keep tools/list: the mapping changes only with a restart.
const toolsListTTL = 5 * time.Minute

// timestampLayout is how taskgate writes times: RFC 3339 in UTC, to the millisecond.
const timestampLayout = "2006-01-02T15:04:05.000Z"

// timestamp is t in timestampLayout, written digit by digit: two of them on every poll, where
// time.Format's layout interpretation cost more than the rest of the task's rendering.
func timestamp(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format(timestampLayout)
	}
	hour, minute, second := t.Clock()
	b := make([]byte, 0, len(timestampLayout))
	b = appendDigits(b, year, 4)
	b = appendDigits(append(b, '-'), int(month), 2)
	b = appendDigits(append(b, '-'), day, 2)
	b = appendDigits(append(b, 'T'), hour, 2)
	b = appendDigits(append(b, ':'), minute, 2)
	b = appendDigits(append(b, ':'), second, 2)
	b = appendDigits(append(b, '.'), t.Nanosecond()/int(time.Millisecond), 3)
	return string(append(b, 'Z'))
}

// appendDigits appends n, at most width digits, padded with zeros to width.
func appendDigits(b []byte, n, width int) []byte {
	p := 1
	for range width - 1 {
		p *= 10
	}
	for ; p > 0; p /= 10 {
		b = append(b, byte('0'+n/p%10))
	}
	return b
}
