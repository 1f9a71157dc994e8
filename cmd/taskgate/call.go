package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	neturl "net/url"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/internal/mcpclient"
	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/mcpserver"
	"github.com/taskgate/taskgate/mcpserver/token"
)

const (
	exitInterrupted = 130 // 128 + SIGINT, what shells report for Ctrl-C
	// startGrace is how long an interrupted tools/call may still take to answer: an async tool
	// answers at once, and its task can then be cancelled instead of running on unseen.
	startGrace = 3 * time.Second
	// retryFor bounds how long polling goes on through unanswered requests (-32603, network).
	retryFor = time.Minute
)

func newCallCmd() *cobra.Command {
	var argsJSON, url string
	var configs, answers, declines []string
	cmd := &cobra.Command{
		Use:   "call TOOL [--args JSON] (--url URL | --config PATH) [--answer KEY=JSON]... [--decline KEY]...",
		Short: "Call a tool as a task and show its progress",
		Long: `Calls one tool as a task and shows its progress until it ends, then prints its result (text, and
structured content as indented JSON) on standard output. --url calls an MCP endpoint (Streamable
HTTP); --config serves a mapping file or folder in this process to try it. Ctrl-C cancels the task.

A tool may ask questions before it starts, and its task while it runs. Each question is answered
with its --answer KEY=JSON (the form's content, one JSON object) or --decline KEY if given, else
asked on the terminal one field at a time: answer, decline, dismiss, or put it off for a minute
(later). A question with no answer and no terminal to ask on ends the call, the task still waiting.
Exit status: 0 success, 1 tool error or failed/cancelled task, 2 usage error, 3 a question left
unanswered (the task goes on, its id printed), 130 interrupted.`,
		Args: func(cmd *cobra.Command, positional []string) error {
			if len(positional) != 1 {
				return usageError{fmt.Sprintf("call wants one TOOL name, got %d arguments %q\n\nUsage:\n  %s", len(positional), positional, cmd.UseLine())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, positional []string) error {
			if (url == "") == (len(configs) == 0) {
				return usageError{"call needs exactly one of --url URL (an MCP endpoint) or --config PATH (a mapping to serve in this process)"}
			}
			arguments, err := toolArguments(argsJSON)
			if err != nil {
				return usageError{err.Error()}
			}
			given, err := parseAnswers(answers, declines)
			if err != nil {
				return usageError{err.Error()}
			}
			var in io.Reader // no terminal: no asking
			if f, ok := cmd.InOrStdin().(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				in = f
			}
			return exitError{runCall(cmd.Context(), positional[0], arguments, url, configs, given, in, cmd.OutOrStdout(), cmd.ErrOrStderr())}
		},
	}
	cmd.Flags().StringVar(&argsJSON, "args", "{}", "the tool's arguments, one JSON object")
	cmd.Flags().StringVar(&url, "url", "", "MCP endpoint to call, e.g. http://127.0.0.1:8080/mcp")
	cmd.Flags().StringArrayVar(&configs, "config", nil, "mapping file or folder to serve in this process (repeatable)")
	cmd.Flags().StringArrayVar(&answers, "answer", nil, `answer the question KEY with the form's content, like approve='{"approve": true}' (repeatable)`)
	cmd.Flags().StringArrayVar(&declines, "decline", nil, "decline the question KEY (repeatable)")
	return cmd
}

// runCall calls the tool, at url or served from configs in this process, and returns the exit
// status. Questions are answered from given (responses by key), else asked on stderr and read
// from in, a terminal or (in tests) lines fed to it; nil: no asking.
func runCall(ctx context.Context, tool string, arguments json.RawMessage, url string, configs []string, given map[string]json.RawMessage, in io.Reader, stdout, stderr io.Writer) int {
	endpoint := url
	if len(configs) > 0 {
		var stop func()
		var err error
		endpoint, stop, err = serveLoopback(ctx, configs, stderr)
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintln(stderr, "taskgate call: interrupted")
				return exitInterrupted
			}
			fmt.Fprintln(stderr, "taskgate call:", err)
			return 1
		}
		defer stop()
	}
	c := newCallClient(endpoint)
	disp := newDisplay(stderr, tool)
	var term *prompter
	if in != nil {
		_, isFile := in.(*os.File) // a terminal echoes what is typed
		term = newPrompter(in, stderr, !isFile)
	}
	return callTool(ctx, c, tool, arguments, disp, newAsker(given, term, stderr, disp), stdout, stderr)
}

// toolArguments checks that s is one JSON object and returns it as is, numbers untouched.
func toolArguments(s string) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			err = fmt.Errorf("%v at byte %d", err, syn.Offset)
		}
		return nil, fmt.Errorf(`--args %s is not valid JSON: %v; pass one object, quoted for the shell: --args '{"text": "hi"}'`, s, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf(`--args must be a JSON object of the tool's arguments, like '{"text": "hi"}', not %s`, s)
	}
	return json.RawMessage(s), nil
}

// serveLoopback serves the mapping on a loopback port, as `serve --http` would, until stop.
func serveLoopback(ctx context.Context, paths []string, stderr io.Writer) (endpoint string, stop func(), err error) {
	set, err := mapping.Load(paths...)
	if err != nil {
		return "", nil, err
	}
	keys := os.Getenv("TASKGATE_TOKEN_KEYS")
	if keys == "" {
		// The task ids never leave this process: a key of its own will do.
		keys = token.NewKey("call")
	}
	tokens, err := codec(set, "sealed", keys, "")
	if err != nil {
		return "", nil, err
	}
	engines, err := connect(ctx, set, adapters.OpenOptions{}, nil)
	if err != nil {
		return "", nil, err
	}
	srv, err := newServer(ctx, set, engines, tokens, transportFlags{mode: mcpserver.NoTaskHandles, noAudit: true}, nil, stderr)
	if err != nil {
		closeAll(engines)
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		closeAll(engines)
		return "", nil, err
	}
	hs := httpServer(srv, nil, transportFlags{})
	go hs.Serve(ln)
	return "http://" + ln.Addr().String() + "/mcp", func() {
		hs.Close()
		closeAll(engines)
	}, nil
}

// taskResult is a task as tools/call and tasks/get return it, or (resultType not "task") a
// CallToolResult.
type taskResult struct {
	ResultType     string           `json:"resultType"`
	TaskID         string           `json:"taskId"`
	Status         string           `json:"status"`
	StatusMessage  string           `json:"statusMessage"`
	PollIntervalMs *int64           `json:"pollIntervalMs"`
	Result         json.RawMessage  `json:"result"`
	Error          *mcpclient.Error `json:"error"`
	InputRequests  inputRequests    `json:"inputRequests"`
}

func (t *taskResult) terminal() bool {
	return t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled"
}

// pollInterval is the server's suggestion, which grows with the task's age, never under 100ms
// (the shortest a mapping may suggest); 1s when the server suggests none.
func (t *taskResult) pollInterval() time.Duration {
	d := time.Second
	if t.PollIntervalMs != nil {
		d = time.Duration(*t.PollIntervalMs) * time.Millisecond
	}
	return max(d, 100*time.Millisecond)
}

// callTool calls the tool, follows its task to the end and prints the outcome; it returns the
// exit status.
func callTool(ctx context.Context, c *callClient, tool string, arguments json.RawMessage, disp display, a *asker, stdout, stderr io.Writer) int {
	send := func(params map[string]any) (json.RawMessage, error) {
		callCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
		defer abort()
		stopGrace := context.AfterFunc(ctx, func() { time.AfterFunc(startGrace, abort) })
		defer stopGrace()
		return c.call(callCtx, "tools/call", params)
	}
	params := map[string]any{"name": tool, "arguments": arguments}
	raw, err := send(params)
	if err == nil {
		raw, err = a.beforeStart(ctx, raw, params, send)
	}
	var un *unanswered
	switch {
	case errors.As(err, &un):
		disp.end("input_required")
		fmt.Fprintf(stderr, "taskgate call: %v\n%s did not start.\n", err, tool)
		return exitUnanswered
	case err != nil && ctx.Err() != nil:
		disp.end("interrupted")
		fmt.Fprintf(stderr, "taskgate call: interrupted before %s answered; if it started an execution, that goes on\n", tool)
		return exitInterrupted
	case err != nil:
		disp.end("error")
		fmt.Fprintf(stderr, "taskgate call: calling %s: %v\n", tool, err)
		return 1
	}
	var t taskResult
	if err := json.Unmarshal(raw, &t); err != nil {
		disp.end("error")
		fmt.Fprintf(stderr, "taskgate call: %s answered with something other than a JSON object: %s\n", tool, raw)
		return 1
	}
	if t.ResultType != "task" {
		return printResult(raw, disp, stdout, stderr)
	}

	var failingSince time.Time
	for {
		disp.show(t.Status, t.StatusMessage)
		if t.terminal() {
			break
		}
		wait := t.pollInterval()
		if t.Status == "input_required" {
			sent, err := a.answerOpen(ctx, c, &t)
			if sent {
				wait = 0 // to show at once what the answers changed
			}
			var un *unanswered
			switch {
			case ctx.Err() != nil:
				// interrupted while asking: the task is cancelled below
			case errors.As(err, &un):
				disp.end(t.Status)
				fmt.Fprintf(stderr, "taskgate call: %v\nThe task goes on, waiting for the answer: %s\n", err, t.TaskID)
				return exitUnanswered
			case err != nil:
				disp.end("error")
				fmt.Fprintf(stderr, "taskgate call: task %s: %v\n", t.TaskID, err)
				return 1
			}
		}
		select {
		case <-ctx.Done():
			disp.end("interrupted")
			return cancelTask(c, t.TaskID, stderr)
		case <-time.After(wait):
		}
		getCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		raw, err := c.call(getCtx, "tasks/get", map[string]any{"taskId": t.TaskID})
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			continue // to the cancellation above
		case err != nil && retryable(err) && (failingSince.IsZero() || time.Since(failingSince) < retryFor):
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			t.StatusMessage = fmt.Sprintf("no answer (%v); retrying", err)
			continue
		case err != nil:
			disp.end("error")
			fmt.Fprintf(stderr, "taskgate call: polling task %s: %v\n", t.TaskID, err)
			return 1
		}
		failingSince = time.Time{}
		var next taskResult
		if err := json.Unmarshal(raw, &next); err != nil || next.Status == "" {
			disp.end("error")
			fmt.Fprintf(stderr, "taskgate call: tasks/get answered with no task status: %s\n", raw)
			return 1
		}
		t = next
	}

	switch t.Status {
	case "completed":
		return printResult(t.Result, disp, stdout, stderr)
	case "failed":
		disp.end(t.Status)
		fmt.Fprintf(stderr, "taskgate call: task %s failed", t.TaskID)
		if t.Error != nil {
			fmt.Fprintf(stderr, ": %v", t.Error)
		}
		fmt.Fprintln(stderr)
		return 1
	default:
		disp.end(t.Status)
		fmt.Fprintf(stderr, "taskgate call: task %s was cancelled: %s\n", t.TaskID, t.StatusMessage)
		return 1
	}
}

func retryable(err error) bool {
	var re *mcpclient.Error
	return !errors.As(err, &re) || re.Code == -32603
}

// cancelTask is what Ctrl-C does to a running task. The call's context is gone by then.
func cancelTask(c *callClient, id string, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.call(ctx, "tasks/cancel", map[string]any{"taskId": id}); err != nil {
		fmt.Fprintf(stderr, "taskgate call: interrupted, but cancelling task %s failed: %v\n", id, err)
		return exitInterrupted
	}
	fmt.Fprintln(stderr, "cancelled", id)
	return exitInterrupted
}

// printResult prints a CallToolResult: on stdout, or on stderr with exit status 1 when isError.
func printResult(raw json.RawMessage, disp display, stdout, stderr io.Writer) int {
	var r struct {
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			MimeType string `json:"mimeType"`
			URI      string `json:"uri"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		disp.end("error")
		fmt.Fprintf(stderr, "taskgate call: the result is not a CallToolResult (%v): %s\n", err, raw)
		return 1
	}
	w, code := stdout, 0
	disp.end("completed")
	if r.IsError {
		w, code = stderr, 1
	}
	var structured bytes.Buffer
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		json.Indent(&structured, r.StructuredContent, "", "  ")
	}
	for _, c := range r.Content {
		switch {
		case c.Type == "text" && structured.Len() > 0 && sameJSON(c.Text, r.StructuredContent):
			// The structured content as text, for clients that read only text: shown once, below.
		case c.Type == "text":
			fmt.Fprintln(w, strings.TrimSuffix(c.Text, "\n"))
		default:
			fmt.Fprintf(w, "[%s content %s%s not shown]\n", c.Type, c.MimeType, c.URI)
		}
	}
	if structured.Len() > 0 {
		fmt.Fprintln(w, structured.String())
	}
	return code
}

func sameJSON(text string, structured json.RawMessage) bool {
	var a, b bytes.Buffer
	return json.Compact(&a, []byte(text)) == nil && json.Compact(&b, structured) == nil && bytes.Equal(a.Bytes(), b.Bytes())
}

// callClient speaks protocol 2026-07-28 over stateless Streamable HTTP, declaring the tasks
// extension on every request.
type callClient struct {
	url    string
	badURL error // what http.NewRequest says of url, reported by every call as before
	c      *mcpclient.Client
}

func newCallClient(endpoint string) *callClient {
	c := mcpclient.Modern(mcpclient.HTTP{URL: endpoint}, "io.modelcontextprotocol/tasks")
	c.Name, c.Version = "taskgate call", mcpserver.Version
	_, err := neturl.Parse(endpoint)
	return &callClient{url: endpoint, badURL: err, c: c}
}

// call sends one request (its Mcp-Name is the tool called or the task id); a JSON-RPC error is
// returned as a *mcpclient.Error.
func (c *callClient) call(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	if c.badURL != nil {
		return nil, fmt.Errorf("--url %s: %w", c.url, c.badURL)
	}
	res, rerr, err := c.c.Call(ctx, method, params)
	switch {
	case err != nil:
		return nil, err
	case rerr != nil:
		return nil, rerr
	}
	return res, nil
}

// display shows the task's progress on stderr.
type display interface {
	// show is called with the status after every answer.
	show(status, message string)
	// end stops showing progress, with the final word on it.
	end(status string)
	// hold stops showing progress while f writes to stderr (asks a question), until the next show.
	hold(f func())
}

func newDisplay(stderr io.Writer, tool string) display {
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		l := &liveLine{f: f, tool: tool, start: time.Now(), status: "calling", stop: make(chan struct{}), done: make(chan struct{})}
		go l.run()
		return l
	}
	return &plainLines{w: stderr}
}

// plainLines prints a line per status change, for logs and pipes.
type plainLines struct {
	w    io.Writer
	last string
}

func (p *plainLines) show(status, message string) {
	line := status
	if message != "" {
		line += ": " + message
	}
	if line != p.last {
		fmt.Fprintln(p.w, line)
		p.last = line
	}
}

func (p *plainLines) end(string) {}

func (p *plainLines) hold(f func()) { f() }

// liveLine redraws one status line in place on a terminal.
type liveLine struct {
	f     *os.File
	tool  string
	start time.Time

	mu              sync.Mutex
	status, message string
	held            bool

	stop, done chan struct{}
	endOnce    sync.Once
}

const spinner = `-\|/`

func (l *liveLine) run() {
	defer close(l.done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		l.draw(spinner[i%len(spinner) : i%len(spinner)+1])
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
	}
}

func (l *liveLine) show(status, message string) {
	l.mu.Lock()
	l.status, l.message = status, strings.Join(strings.Fields(message), " ")
	l.held = false
	l.mu.Unlock()
}

func (l *liveLine) end(status string) {
	l.endOnce.Do(func() {
		close(l.stop)
		<-l.done
		l.mu.Lock()
		if status != l.status {
			l.status, l.message = status, ""
		}
		l.held = false
		l.mu.Unlock()
		l.draw("")
		fmt.Fprint(l.f, "\n")
	})
}

// hold clears the line and draws nothing more until the next show, which has news after what f
// wrote: the line never shows a state that f has made stale.
func (l *liveLine) hold(f func()) {
	l.mu.Lock()
	l.held = true
	fmt.Fprint(l.f, "\r\x1b[K")
	l.mu.Unlock()
	f()
}

// draw writes the line from its start and clears what an earlier, longer line left; a line
// wider than the terminal would wrap, and \r cannot go back up.
func (l *liveLine) draw(frame string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		return
	}
	line := fmt.Sprintf("%s %s %s", l.tool, elapsed(time.Since(l.start)), l.status)
	if l.message != "" {
		line += ": " + l.message
	}
	if frame != "" {
		line = frame + " " + line
	}
	if w, _, err := term.GetSize(int(l.f.Fd())); err == nil && w > 1 && utf8.RuneCountInString(line) >= w {
		line = string([]rune(line)[:w-1])
	}
	fmt.Fprint(l.f, "\r"+line+"\x1b[K")
}

func elapsed(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Truncate(time.Second).String()
}
