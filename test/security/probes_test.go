package security

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"github.com/taskgate/taskgate/adapters/stepfunctions"
	sfnexamples "github.com/taskgate/taskgate/examples/stepfunctions"
	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mcpserver/bearer/bearertest"
)

// result is one probe's outcome.
type result struct {
	item, probe, must, seen string
	holds                   bool
}

type results struct {
	mu   sync.Mutex
	list []result
}

func (r *results) add(t *testing.T, item, probe, must, seen string, holds bool) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, result{item, probe, must, seen, holds})
	if !holds {
		t.Errorf("%s: %s: must %s; saw %s", item, probe, must, seen)
	}
}

// table is the results as Markdown.
func (r *results) table() string {
	var b strings.Builder
	b.WriteString("| # | item | probe | must | seen | holds |\n|---|---|---|---|---|---|\n")
	for i, p := range r.list {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", i+1, p.item, p.probe, p.must, strings.ReplaceAll(p.seen, "|", "/"), map[bool]string{true: "yes", false: "**no**"}[p.holds])
	}
	return b.String()
}

const issuerName = "http://localhost/issuer"

// writeMapping writes the probes' mapping into a new folder: the example workflows (one of them
// alice's only), a Step Functions tool whose question refers to a file, two API keys, and the
// OAuth issuer whose keys are at jwks.
func writeMapping(t *testing.T, jwks, sfnEndpoint, questionARN string) string {
	t.Helper()
	aws := fmt.Sprintf("  aws:\n    stepfunctions: {region: us-east-1, endpoint: %q}\n", sfnEndpoint)
	return writeTools(t, aws, jwks, fmt.Sprintf(`  - name: wait_and_echo
    description: Waits, then echoes the text.
    engine: local-temporal
    workflow: {type: WaitAndEcho, taskQueue: taskgate-examples}
    pollInterval: 1s
    inputSchema: {type: object, properties: {seconds: {type: number}, text: {type: string}}, required: [seconds, text]}
  - name: build_release
    description: Builds a release; alice's only.
    engine: local-temporal
    workflow: {type: BuildRelease, taskQueue: taskgate-examples}
    allow: {principals: [alice]}
    inputSchema: {type: object, properties: {version: {type: string}}, required: [version]}
    input: '{version, stepSeconds: 0}'
  - name: bad_question
    description: Asks a question whose schema refers to a file.
    engine: aws
    stateMachine: %s
    inputSchema: {type: object, properties: {message: {type: string}}, required: [message]}
`, questionARN))
}

// questionMachine creates a state machine that asks a question whose schema refers to secret.
func questionMachine(t *testing.T, endpoint, secret string) string {
	t.Helper()
	e, err := stepfunctions.New(context.Background(), stepfunctions.Config{Region: "us-east-1", Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	def := sfnexamples.Definitions()["taskgate-sfn-ask-and-echo"]
	def = strings.Replace(def, `"schema": {`, `"schema": {"type":"object","properties":{"confirm":{"$ref":"file://`+secret+`"}}}, "unused": {`, 1)
	out, err := testenv.As[*sfn.Client](t, e).CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{Name: aws.String("taskgate-probe-question-" + uuid.NewString()[:8]),
		Definition: aws.String(def), RoleArn: aws.String("arn:aws:iam::123456789012:role/taskgate-examples")})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.StateMachineArn)
}

// closedPort is a loopback URL where nothing listens.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String() + "/jwks.json"
}

// TestProbes runs the probes of issue 16 (and a few of the first round) against the build.
func TestProbes(t *testing.T) {
	testenv.TemporalAddress(t)
	sfnEndpoint := testenv.SFNEndpoint(t)
	bin := binary(t)
	r := &results{}
	defer func() {
		t.Logf("taskgate %s:\n%s", bin, r.table())
		if f := os.Getenv("PROBE_TABLE"); f != "" {
			os.WriteFile(f, []byte(r.table()), 0o644)
		}
	}()
	secret := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(secret, []byte(`{"type":"boolean"}`), 0o600)
	is := bearertest.New(t, issuerName)
	dir := writeMapping(t, is.URL, sfnEndpoint, questionMachine(t, sfnEndpoint, secret))

	// The JWKS probes need a refresh interval to pass first: their instances start now.
	slowIssuer, rotating := bearertest.New(t, issuerName), bearertest.New(t, issuerName)
	slow := startDev(t, bin, writeMapping(t, slowIssuer.URL, sfnEndpoint, questionMachine(t, sfnEndpoint, secret)))
	rot := startDev(t, bin, writeMapping(t, rotating.URL, sfnEndpoint, questionMachine(t, sfnEndpoint, secret)))
	cachedKey := slowIssuer.Token(t, "carol", audience, "", nil)
	for _, w := range []struct {
		d     *dev
		token string
	}{{slow, cachedKey}, {rot, rotating.Token(t, "carol", audience, "", nil)}} {
		if a := must(t, w.d.url, w.token, rpc("ping", map[string]any{})); !a.served() {
			t.Fatalf("a good JWT before the JWKS probes: %s", a)
		}
	}
	keysRead := time.Now()

	a := startDev(t, bin, dir)
	oneReading(t, r, a)
	principals(t, r, a, is)
	hidden(t, r, a)
	firstRound(t, r, a)
	questionSchema(t, r, a)
	mappingSchema(t, r, bin, secret)

	b := startDev(t, bin, dir, "--polls-per-second", "1")
	engineWork(t, r, b)

	flags := []string{"--max-in-flight", "8"}
	if supports(bin, "max-wait") {
		flags = append(flags, "--max-wait", "3s")
	}
	fairShare(t, r, startDev(t, bin, dir, flags...))

	down := startDev(t, bin, writeMapping(t, closedPort(t), sfnEndpoint, questionMachine(t, sfnEndpoint, secret)))
	ans := must(t, down.url, is.Token(t, "carol", audience, "", nil), rpc("ping", map[string]any{}))
	leaks := strings.Contains(ans.body, "127.0.0.1") || strings.Contains(ans.body, "dial") || strings.Contains(ans.body, "refused")
	r.add(t, "4 JWKS", "a JWT while the issuer's JWKS endpoint is down", "401, no URL, address or network error", ans.String(), ans.status == http.StatusUnauthorized && !leaks)

	// 30 s is the longest refresh interval of any build (an unknown key id fetches at most once in it).
	time.Sleep(time.Until(keysRead.Add(31 * time.Second)))
	jwksSlow(t, r, slow, slowIssuer, cachedKey)
	jwksRotation(t, r, rot, rotating)
}

// oneReading: bodies that decoders read differently are refused, not served past the checks.
func oneReading(t *testing.T, r *results, d *dev) {
	his := startTask(t, d.url, bobKey, "wait_and_echo", map[string]any{"seconds": 300, "text": "bob's"})
	defer must(t, d.url, bobKey, rpc("tasks/cancel", map[string]any{"taskId": his}))
	burst := func(n int, body string) (served int) {
		for range n {
			if a := must(t, d.url, bobKey, body); a.served() {
				served++
			}
		}
		return served
	}
	poll := rpc("tasks/get", map[string]any{"taskId": his})
	time.Sleep(3 * time.Second) // a full bucket
	normal := burst(160, poll)
	time.Sleep(3 * time.Second)
	trailing := burst(160, poll+"}")
	r.add(t, "1 one reading", "160 rapid polls with a trailing '}'", fmt.Sprintf("no more served than of 160 plain ones (%d)", normal),
		fmt.Sprintf("%d of 160 served", trailing), trailing <= normal)
	time.Sleep(3 * time.Second)
	twin := burst(160, strings.Replace(poll, `"params"`, `"METHOD":"ping","params"`, 1))
	r.add(t, "1 one reading", `160 rapid polls with a second member "METHOD":"ping"`, fmt.Sprintf("no more served than of 160 plain ones (%d)", normal),
		fmt.Sprintf("%d of 160 served", twin), twin <= normal)

	call := rpc("tools/call", map[string]any{"name": "wait_and_echo", "arguments": map[string]any{"seconds": 0, "text": "x"}, "task": map[string]any{}})
	time.Sleep(3 * time.Second)
	calls := burst(40, call)
	time.Sleep(3 * time.Second)
	trailingCalls := burst(40, call+"}")
	r.add(t, "1 one reading", "40 rapid tools/call with a trailing '}'", fmt.Sprintf("no more served than of 40 plain ones (%d)", calls),
		fmt.Sprintf("%d of 40 served", trailingCalls), trailingCalls <= calls)

	time.Sleep(time.Second)
	decoy := must(t, d.url, bobKey, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":%q,"TASKID":"decoy"}}`, his), "Mcp-Name", "decoy")
	r.add(t, "1 one reading", `Mcp-Name: decoy, params {"taskId": REAL, "TASKID": "decoy"}`, "refused (400), the real task not served", decoy.String(),
		decoy.status == http.StatusBadRequest && !decoy.served())
	anonymous := must(t, d.url, "", poll+"}")
	r.add(t, "1 one reading", "a poll with a trailing '}' and no credentials", "refused (400) before authentication", anonymous.String(),
		anonymous.status == http.StatusBadRequest)
}

// principals: an OAuth subject named like an API-key principal is another principal.
func principals(t *testing.T, r *results, d *dev, is *bearertest.Issuer) {
	hers := startTask(t, d.url, aliceKey, "wait_and_echo", map[string]any{"seconds": 300, "text": "alice's"})
	defer must(t, d.url, aliceKey, rpc("tasks/cancel", map[string]any{"taskId": hers}))
	jwt := is.Token(t, "alice", audience, "", nil)
	read := must(t, d.url, jwt, rpc("tasks/get", map[string]any{"taskId": hers}))
	r.add(t, "2 principals", "a JWT with sub: alice reads API-key alice's task", "-32602 (not found)", read.String(), !read.served() && read.code() == -32602)
	start := must(t, d.url, jwt, rpc("tools/call", map[string]any{"name": "build_release", "arguments": map[string]any{"version": "v1"}, "task": map[string]any{}}))
	r.add(t, "2 principals", "a JWT with sub: alice calls build_release (allow: principals [alice])", "refused, nothing started", start.String(), !start.served())
}

// hidden: a tool the caller may not use answers as an unknown one; /metrics is not on the MCP
// listener.
func hidden(t *testing.T, r *results, d *dev) {
	call := func(tool string) answer {
		return must(t, d.url, bobKey, rpc("tools/call", map[string]any{"name": tool, "arguments": map[string]any{"version": "v1"}}))
	}
	got, unknown := call("build_release"), call("no_such_tool")
	same := got.status == unknown.status && got.code() == unknown.code() && got.msg.Error != nil && unknown.msg.Error != nil &&
		strings.ReplaceAll(got.msg.Error.Message, "build_release", "T") == strings.ReplaceAll(unknown.msg.Error.Message, "no_such_tool", "T")
	r.add(t, "5 hidden", "bob calls build_release (hidden from him) and a tool that does not exist",
		"the same status, code and message shape", fmt.Sprintf("hidden: %s; unknown: %s", got, unknown), same)
	resp, err := http.Get(d.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r.add(t, "5 hidden", "GET /metrics on the MCP listener, no credentials (auth: set)", "not served (only on --ops-http)",
		fmt.Sprint(resp.StatusCode), resp.StatusCode == http.StatusNotFound)
}

// firstRound: a few of the first round's probes, which must still hold.
func firstRound(t *testing.T, r *results, d *dev) {
	hers := startTask(t, d.url, aliceKey, "wait_and_echo", map[string]any{"seconds": 300, "text": "alice's"})
	defer must(t, d.url, aliceKey, rpc("tasks/cancel", map[string]any{"taskId": hers}))
	read := must(t, d.url, bobKey, rpc("tasks/get", map[string]any{"taskId": hers}))
	r.add(t, "first round", "bob reads alice's task", "-32602 (not found)", read.String(), read.code() == -32602)
	none := must(t, d.url, "", rpc("ping", map[string]any{}))
	r.add(t, "first round", "no bearer token", "401 with a Bearer challenge", fmt.Sprintf("%d %s", none.status, none.header.Get("WWW-Authenticate")),
		none.status == http.StatusUnauthorized && strings.HasPrefix(none.header.Get("WWW-Authenticate"), "Bearer"))
	origin := must(t, d.url, aliceKey, rpc("ping", map[string]any{}), "Origin", "https://attacker.example")
	r.add(t, "first round", "a hostile Origin", "403", fmt.Sprint(origin.status), origin.status == http.StatusForbidden)
}

// modern is the headers and _meta of a 2026-07-28 request with the tasks extension.
func modern(method, name string) (meta map[string]any, headers []string) {
	return map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}},
		[]string{"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", method, "Mcp-Name", name}
}

// questionSchema: a workflow's question whose schema refers to a file cannot be answered.
func questionSchema(t *testing.T, r *results, d *dev) {
	id := modernTask(t, d, aliceKey, "bad_question", map[string]any{"message": "Deploy?"})
	answered := answerTask(t, d, aliceKey, id, "confirm", map[string]any{"confirm": true})
	r.add(t, "6 schemas", "answer a workflow's question whose schema has $ref: file://SECRET", "refused: the file is never read, the question cannot be asked",
		answered.String(), !answered.served())
	meta, h := modern("tasks/cancel", id)
	must(t, d.url, aliceKey, rpc("tasks/cancel", map[string]any{"taskId": id, "_meta": meta}), h...)
}

// mappingSchema: validate refuses a mapping schema that refers to a file by an absolute URL.
func mappingSchema(t *testing.T, r *results, bin, secret string) {
	f := filepath.Join(t.TempDir(), "tools.yaml")
	os.WriteFile(f, []byte(`engines:
  local-temporal: {temporal: {}}
tools:
  - name: t
    description: d
    engine: local-temporal
    workflow: {type: WaitAndEcho, taskQueue: q}
    inputSchema: {type: object, properties: {x: {$ref: "file://`+secret+`"}}}
`), 0o600)
	out, err := exec.Command(bin, "validate", f).CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	r.add(t, "6 schemas", "validate a mapping whose inputSchema has $ref: file://SECRET", "exit 1, with the $ref's position",
		fmt.Sprintf("exit %d: %s", code, strings.TrimSpace(string(out))), code == 1 && strings.Contains(string(out), f+":8:"))
}

// engineWork: a client token that names nothing costs its principal one poll per engine read.
func engineWork(t *testing.T, r *results, d *dev) {
	time.Sleep(3 * time.Second) // a full bucket
	lookup := must(t, d.url, bobKey, rpc("tools/async/status", map[string]any{"token": "probe-" + uuid.NewString()}))
	next := must(t, d.url, bobKey, rpc("tasks/get", map[string]any{"taskId": "x"}))
	r.add(t, "7 engine work", "at --polls-per-second 1: a lookup of an unknown client token (3 engine reads), then a poll",
		"the poll waits (429): the lookup cost 3", fmt.Sprintf("lookup %d, poll %s", lookup.status, next), next.status == http.StatusTooManyRequests)
}

// fairShare: bob takes all he can of the requests in flight and the body budget; alice is served.
func fairShare(t *testing.T, r *results, d *dev) {
	hers := startTask(t, d.url, aliceKey, "wait_and_echo", map[string]any{"seconds": 300, "text": "alice's"})
	defer must(t, d.url, aliceKey, rpc("tasks/cancel", map[string]any{"taskId": hers}))
	his := startTask(t, d.url, bobKey, "wait_and_echo", map[string]any{"seconds": 300, "text": "bob's"})
	defer must(t, d.url, bobKey, rpc("tasks/cancel", map[string]any{"taskId": his}))

	ctx, stop := context.WithCancel(context.Background())
	refused := make(chan string, 8)
	for range 8 {
		go func() {
			if a, err := post(ctx, d.url, bobKey, rpc("tasks/result", map[string]any{"taskId": his})); err == nil {
				refused <- fmt.Sprint(a.status)
			}
		}()
	}
	time.Sleep(time.Second)
	list := must(t, d.url, aliceKey, rpc("tools/list", map[string]any{}))
	r.add(t, "3 fair share", "--max-in-flight 8: bob parks 8 tasks/result on his running task; alice calls tools/list", "alice served",
		fmt.Sprintf("alice %d; bob's refused at once: %s", list.status, drain(refused)), list.served())
	stop()
	time.Sleep(time.Second) // the parked calls end

	ctx, stop = context.WithCancel(context.Background())
	defer stop()
	uploads := make(chan string, 5)
	for range 5 {
		trickle(ctx, t, d.url, bobKey, 4<<20, uploads)
	}
	time.Sleep(time.Second)
	poll := must(t, d.url, aliceKey, rpc("tasks/get", map[string]any{"taskId": hers}))
	r.add(t, "3 fair share", "bob trickles five 4 MiB uploads (16 MiB is the whole budget); alice polls her task", "alice served",
		fmt.Sprintf("alice %s; bob's refused at once: %s", poll, drain(uploads)), poll.served())
	stop()
	waitServed(t, d.url, bobKey) // the server lets go of the uploads once it sees their connections close

	wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	res, err := post(wait, d.url, bobKey, rpc("tasks/result", map[string]any{"taskId": his}))
	seen := fmt.Sprintf("no answer within 10 s (%v)", err)
	if err == nil {
		seen = fmt.Sprintf("after %.1f s: %s", time.Since(start).Seconds(), res)
	}
	r.add(t, "3 fair share", "tasks/result of a task that runs for 5 more minutes", "answered within --max-wait (3 s) with the task's status",
		seen, err == nil && res.code() == -32603 && strings.Contains(res.body, "Task still working"))
}

// waitServed waits until the principal's requests are served again.
func waitServed(t *testing.T, url, key string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if must(t, url, key, rpc("tools/list", map[string]any{})).served() {
			return
		}
	}
	t.Fatal("the principal's requests are still refused 10 s after its uploads ended")
}

// drain lists what the channel holds now.
func drain(c chan string) string {
	var got []string
	for {
		select {
		case s := <-c:
			got = append(got, s)
		default:
			if len(got) == 0 {
				return "none"
			}
			return strings.Join(got, ", ")
		}
	}
}

// forgedKid is a token of is under a key id it never published.
func forgedKid(t *testing.T, is *bearertest.Issuer) string {
	return is.Token(t, "mallory", audience, "", func(_ *bearertest.Claims, o *jose.SignerOptions) { o.WithHeader("kid", "forged") })
}

// jwksSlow: a token under a key already read is not held up by a forged one that makes taskgate
// read a slow (2 s) JWKS.
func jwksSlow(t *testing.T, r *results, d *dev, is *bearertest.Issuer, cached string) {
	is.Delay.Store(int64(2 * time.Second))
	defer is.Delay.Store(0)
	go post(context.Background(), d.url, forgedKid(t, is), rpc("ping", map[string]any{}))
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	a := must(t, d.url, cached, rpc("ping", map[string]any{}))
	took := time.Since(start)
	r.add(t, "4 JWKS", "a JWT under a key read before, while a forged key id makes taskgate read a slow (2 s) JWKS", "answered at once (under 0.5 s)",
		fmt.Sprintf("%d after %.2f s", a.status, took.Seconds()), a.served() && took < 500*time.Millisecond)
}

// jwksRotation: a forged request that hangs up during the JWKS read does not cost the issuer's new
// key its place.
func jwksRotation(t *testing.T, r *results, d *dev, is *bearertest.Issuer) {
	is.Rotate(t)
	is.Delay.Store(int64(time.Second))
	defer is.Delay.Store(0)
	// A GET: the server notices at once that a request without a body was hung up on.
	hangUp, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(hangUp, http.MethodGet, d.url, nil)
	req.Header.Set("Authorization", "Bearer "+forgedKid(t, is))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	time.Sleep(1500 * time.Millisecond)
	a := must(t, d.url, is.Token(t, "carol", audience, "", nil), rpc("ping", map[string]any{}))
	r.add(t, "4 JWKS", "the issuer publishes a new key; a forged key id's request hangs up during the JWKS read; then a JWT under the new key",
		"served (the read went on without its caller)", a.String(), a.served())
}
