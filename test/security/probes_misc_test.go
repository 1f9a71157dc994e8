package security

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mcpserver/bearer/bearertest"
)

// TestProbesMisc runs the probes of issue 29's items 3, 6 and 8 against the build.
func TestProbesMisc(t *testing.T) {
	testenv.TemporalAddress(t)
	sfnEndpoint := testenv.SFNEndpoint(t)
	bin := binary(t)
	r := &results{}
	defer func() { t.Logf("taskgate %s:\n%s", bin, r.table()) }()
	secret := t.TempDir() + "/secret.json"
	questionARN := questionMachine(t, sfnEndpoint, secret)
	dir := writeMapping(t, bearertest.New(t, issuerName).URL, sfnEndpoint, questionARN)

	plantedExecution(t, r, startDev(t, bin, dir, "--token-format", "native"), sfnEndpoint, questionARN)
	d := startDev(t, bin, dir)
	refusalWords(t, r, d)
	ambiguousFraming(t, r, d)

	cachedBytes(t, r, bin, dir)
}

// Item 3: the outputs kept to answer reads again are bounded in bytes.
const (
	outputBytes = 1536 << 10 // under Temporal's 2 MiB limit on a payload
	outputs     = 48
	cacheBound  = 16 << 20
	// rssMargin is what the process may hold beyond its baseline and the bound: the garbage of the
	// last reads, which Go's heap keeps until its next collections.
	rssMargin = 48 << 20
)

// cachedBytes: many large outputs read once each leave the process within the cache's bound.
func cachedBytes(t *testing.T, r *results, bin, dir string) {
	ops := freeAddr(t)
	flags := []string{"--ops-http", ops, "--calls-per-second", "-1", "--polls-per-second", "-1"}
	if supports(bin, "cache-budget") {
		flags = append(flags, "--cache-budget", strconv.Itoa(cacheBound))
	}
	d := startDev(t, bin, dir, flags...)
	text := strings.Repeat("x", outputBytes)
	readAll := func(n int) {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = startTask(t, d.url, aliceKey, "wait_and_echo", map[string]any{"seconds": 0, "text": text + strconv.Itoa(i)})
		}
		for _, id := range ids {
			if a := must(t, d.url, aliceKey, rpc("tasks/result", map[string]any{"taskId": id})); !a.served() || len(a.body) < outputBytes {
				t.Fatalf("tasks/result of a large output: %s", a)
			}
		}
	}
	readAll(2) // the worker, the clients and the buffers warmed up
	before := settled(t, ops)
	readAll(outputs)
	after := settled(t, ops)
	grown := after["process_resident_memory_bytes"] - before["process_resident_memory_bytes"]
	held, metric := after["taskgate_engine_cache_bytes"]
	r.add(t, "3 cache bytes", fmt.Sprintf("%d tool calls that return %d KiB each, each result read once (--cache-budget %d MiB)", outputs, outputBytes>>10, cacheBound>>20),
		fmt.Sprintf("resident memory grows by at most the bound + %d MiB; taskgate_engine_cache_bytes within the bound", rssMargin>>20),
		fmt.Sprintf("resident %d → %d MiB (%+d MiB); cache bytes %s", int(before["process_resident_memory_bytes"])>>20, int(after["process_resident_memory_bytes"])>>20, int(grown)>>20,
			map[bool]string{true: fmt.Sprintf("%d MiB", int(held)>>20), false: "not reported"}[metric]),
		grown <= cacheBound+rssMargin && metric && held <= cacheBound)
}

// freeAddr is a loopback address where nothing listens yet.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// settled reads the metrics at ops once the resident memory has stopped falling (Go gives freed
// memory back to the system over a few seconds): the process's resident bytes and the bytes its
// caches hold, summed over the engine blocks.
func settled(t *testing.T, ops string) map[string]float64 {
	var last map[string]float64
	for range 30 {
		m := scrape(t, ops)
		if last != nil && m["process_resident_memory_bytes"] >= last["process_resident_memory_bytes"] {
			return m
		}
		last = m
		time.Sleep(time.Second)
	}
	return last
}

func scrape(t *testing.T, ops string) map[string]float64 {
	resp, err := http.Get("http://" + ops + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		name, _, _ = strings.Cut(name, "{")
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			m[name] += v
		}
	}
	return m
}

// plantedExecution (item 6): an execution someone started on Step Functions directly, named
// after bob's tag, is not bob's task: d serves native task ids.
func plantedExecution(t *testing.T, r *results, d *dev, endpoint, machine string) {
	e, err := stepfunctions.New(context.Background(), stepfunctions.Config{Region: "us-east-1", Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	sc := testenv.As[*sfn.Client](t, e)
	out, err := sc.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: aws.String(machine),
		Name: aws.String(tagOf("bob") + "-planted-" + strconv.FormatInt(time.Now().UnixNano(), 36)), Input: aws.String(`{"message":"planted"}`)})
	if err != nil {
		t.Fatal(err)
	}
	planted := aws.ToString(out.ExecutionArn)
	defer sc.StopExecution(context.Background(), &sfn.StopExecutionInput{ExecutionArn: out.ExecutionArn})

	// d's task ids are native (sealed ones cannot be forged): the execution's ARN.
	read := must(t, d.url, bobKey, rpc("tasks/get", map[string]any{"taskId": planted}))
	r.add(t, "6 ownership", "bob reads an execution started on the engine directly, named <bob's tag>-planted", "-32602 (not found)",
		read.String(), read.code() == -32602)

	var listed struct {
		Tasks []struct{ TaskID string }
	}
	list := must(t, d.url, bobKey, rpc("tasks/list", map[string]any{}))
	json.Unmarshal(list.msg.Result, &listed)
	found := false
	for _, task := range listed.Tasks {
		found = found || strings.Contains(task.TaskID, planted)
	}
	r.add(t, "6 ownership", "bob lists his tasks", "the planted execution is not among them",
		fmt.Sprintf("%d tasks listed, the planted one %s", len(listed.Tasks), map[bool]string{true: "among them", false: "not among them"}[found]),
		list.served() && !found)
}

// refusalWords (item 8a): a start the engine refuses names the tool, not the engine's kind,
// workflow type or task queue.
func refusalWords(t *testing.T, r *results, d *dev) {
	huge := strings.Repeat("x", 2560<<10) // over Temporal's 2 MiB limit on a payload
	a := must(t, d.url, aliceKey, rpc("tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 0, "text": huge}, "task": map[string]any{}}))
	var res struct {
		IsError bool
		Content []struct{ Text string }
	}
	json.Unmarshal(a.msg.Result, &res)
	text := ""
	if len(res.Content) > 0 {
		text = res.Content[0].Text
	}
	if a.msg.Error != nil {
		text = a.msg.Error.Message
	}
	leaks := containsAny(strings.ToLower(text), "temporal", "waitandecho", "taskgate-examples", "arn:", "rpc error")
	r.add(t, "8a refusal words", "start wait_and_echo with 2.5 MiB of text (over the engine's payload limit)",
		"refused, naming the tool and the reason, not the engine's kind, workflow type or task queue", fmt.Sprintf("%q", text),
		strings.Contains(text, "wait_and_echo") && strings.Contains(text, "too large") && !leaks)
}

// tagOf is the tag taskgate writes into the executions of principal: anyone who knows the name
// of a principal can compute it (the task service hands adapters a hash of the principal).
func tagOf(principal string) string {
	sum := sha256.Sum256([]byte(principal))
	return driver.CallerTag(base64.RawURLEncoding.EncodeToString(sum[:16]))
}

func containsAny(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// ambiguousFraming (item 8b): a request with both Transfer-Encoding and Content-Length is refused
// and its connection closed, so that its tail is never read as a request of its own.
func ambiguousFraming(t *testing.T, r *results, d *dev) {
	host := strings.TrimPrefix(d.base, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ping := rpc("ping", map[string]any{})
	tail := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", host, aliceKey, len(ping), ping)
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n%s",
		host, aliceKey, 5+len(tail), tail)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(conn)
	var answers []string
	closed := false
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			closed = errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
			break
		}
		io.Copy(io.Discard, resp.Body)
		answers = append(answers, strconv.Itoa(resp.StatusCode))
	}
	r.add(t, "8b framing", "a POST with both Content-Length (covering a second request) and Transfer-Encoding: chunked (ending before it), on one connection",
		"400, then the connection closed: the tail never answered", fmt.Sprintf("answers %v, connection %s", answers, map[bool]string{true: "closed", false: "kept open"}[closed]),
		strings.Join(answers, ",") == "400" && closed)
}
