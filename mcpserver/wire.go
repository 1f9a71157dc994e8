package mcpserver

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The results taskgate itself puts on the wire, one type per shape. Required fields have no
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

// The tasks extension on 2026-07-28.

type taskInfo struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          *int64 `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
}

type createTaskResult struct {
	mcp.ResultBase
	ResultType created `json:"resultType"`
	taskInfo
}

// detailedTask answers tasks/get: result once completed, error once failed, the open questions
// while input_required.
type detailedTask struct {
	mcp.ResultBase
	ResultType complete `json:"resultType"`
	taskInfo
	Result        *callToolResult `json:"result,omitempty"`
	Error         *jsonrpc.Error  `json:"error,omitempty"`
	InputRequests inputRequests   `json:"inputRequests,omitempty"`
}

// Tasks on 2025-11-25: the same task, with the field names of that version and no resultType.

type legacyTaskInfo struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

type legacyCreateTaskResult struct {
	mcp.ResultBase
	Task legacyTaskInfo `json:"task"`
}

type legacyTask struct {
	mcp.ResultBase
	legacyTaskInfo
}

type legacyTasksCapability struct {
	Cancel   struct{} `json:"cancel"`
	List     struct{} `json:"list"`
	Requests struct {
		Tools struct {
			Call struct{} `json:"call"`
		} `json:"tools"`
	} `json:"requests"`
}

type legacyTaskList struct {
	mcp.ResultBase
	Tasks      []legacyTaskInfo `json:"tasks"`
	NextCursor string           `json:"nextCursor,omitempty"`
}

type legacyCapabilities struct {
	mcp.ServerCapabilities
	Tasks legacyTasksCapability `json:"tasks"`
}

// legacyInitializeResult is the SDK's initialize result with the 2025-11-25 tasks capability in
// place of the extension.
type legacyInitializeResult struct {
	*mcp.InitializeResult
	Capabilities legacyCapabilities `json:"capabilities"`
}

// SEP-1391 operations.

type operationInfo struct {
	Token         string  `json:"token"`
	Status        string  `json:"status"`
	KeepAlive     *int64  `json:"keepAlive"`
	PollFrequency float64 `json:"pollFrequency"`
}

type operationStarted struct {
	callToolResult
	Operation operationInfo `json:"operation"`
}

type operationStatus struct {
	mcp.ResultBase
	ResultType complete `json:"resultType"`
	Status     string   `json:"status"`
	Error      string   `json:"error,omitempty"`
}

type operationResult struct {
	mcp.ResultBase
	ResultType complete        `json:"resultType"`
	Result     *callToolResult `json:"result"`
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

func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
