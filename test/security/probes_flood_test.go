package security

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/taskgate/taskgate/internal/testenv"
	"github.com/taskgate/taskgate/mcpserver/bearer/bearertest"
)

// TestProbesFlood runs the probes of the review of 78d21d6: made-up native ids (item 1), listens
// that were neither rate limited nor charged (2), the many spellings of one sealed id (3), and
// listens that outlived their token or their ids' ttl (5).
func TestProbesFlood(t *testing.T) {
	testenv.TemporalAddress(t)
	bin := binary(t)
	r := &results{}
	defer func() { t.Logf("taskgate %s:\n%s", bin, r.table()) }()
	is := bearertest.New(t, issuerName)
	dir := writeEchoes(t, is.URL, briefEchoTTL)

	ops := freeAddr(t)
	madeUpIDs(t, r, startDev(t, bin, dir, "--token-format", "native", "--ops-http", ops), ops)

	slow := startDev(t, bin, dir, "--polls-per-second", "1")
	listenBurst(t, r, slow)
	listenCharged(t, r, slow)

	ops = freeAddr(t)
	d := startDev(t, bin, dir, "--ops-http", ops)
	respellings(t, r, d)
	respelledFollowers(t, r, d, ops)
	listenTokenExpiry(t, r, d, is)
	listenTTL(t, r, d)

	bounds := boundFlags(bin)
	listenBounds(t, r, startDev(t, bin, dir, bounds...), bounds != nil)
}

// briefEchoTTL is the ttl of brief_echo's ids.
const briefEchoTTL = 3 * time.Second

// madeUpIDs (item 1): alice copies the shape of a native id she was given (her tag, then UUIDs)
// with suffixes of her own: none is found, a listen acknowledges none, and none costs an engine
// read. d serves native ids, and its metrics on ops.
func madeUpIDs(t *testing.T, r *results, d *dev, ops string) {
	hers := startTask(t, d.url, aliceKey, "wait_and_echo", map[string]any{"seconds": 0, "text": "alice's"})
	// Its end read and confirmed, her task costs no read while the made-up ids are counted.
	if a := must(t, d.url, aliceKey, rpc("tasks/result", map[string]any{"taskId": hers})); !a.served() {
		t.Fatalf("the result of alice's task: %s", a)
	}
	madeUp := madeUpLike(t, hers, 50)

	before := settledReads(t, ops)
	notFound := 0
	for _, id := range madeUp {
		if a := must(t, d.url, aliceKey, rpc("tasks/get", map[string]any{"taskId": id})); a.code() == -32602 && !a.served() {
			notFound++
		}
	}
	read := executionReads(t, ops) - before
	r.add(t, "1 native ids", "alice makes up 50 ids from her own (her tag, random UUIDs) and reads each (tasks/get)",
		"-32602 (not found) for each, with no engine read", fmt.Sprintf("%d of 50 not found; %d engine reads", notFound, read), notFound == len(madeUp) && read == 0)

	before = settledReads(t, ops)
	events, status := listenAs(t, d, aliceKey, madeUp, true)
	acked, _ := listenedOf(events)
	read = executionReads(t, ops) - before
	r.add(t, "1 native ids", "alice listens on the 50 made-up ids", "none acknowledged, with no engine read",
		fmt.Sprintf("HTTP %d, %d acknowledged; %d engine reads", status, len(acked), read), status == http.StatusOK && len(acked) == 0 && read == 0)
}

// madeUpLike makes up n Temporal ids in the shape of id (…/TAG/WORKFLOW-UUID/RUN-UUID): its
// prefix and tag, then random UUIDs.
func madeUpLike(t *testing.T, id string, n int) []string {
	parts := strings.Split(id, "/")
	if len(parts) < 4 {
		t.Fatalf("a native id of wait_and_echo that is not TAG/UUID/RUN: %s", id)
	}
	prefix := strings.Join(parts[:len(parts)-2], "/")
	ids := make([]string, n)
	for i := range ids {
		ids[i] = prefix + "/" + uuid.NewString() + "/" + uuid.NewString()
	}
	return ids
}

// executionReads is how many reads of executions (describe and outcome calls) the engines were
// sent, from the metrics on ops.
func executionReads(t *testing.T, ops string) int {
	resp, err := http.Get("http://" + ops + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "taskgate_engine_call_duration_seconds_count{") ||
			!strings.Contains(line, `operation="describe"`) && !strings.Contains(line, `operation="outcome"`) {
			continue
		}
		_, value, _ := strings.Cut(line, "} ")
		v, _ := strconv.ParseFloat(value, 64)
		n += int(v)
	}
	return n
}

// settledReads is executionReads once it holds still for 300 ms (within 5 s): no read of an
// earlier request is still under way.
func settledReads(t *testing.T, ops string) int {
	n := executionReads(t, ops)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(300 * time.Millisecond)
		again := executionReads(t, ops)
		if again == n {
			break
		}
		n = again
	}
	return n
}

// fullPollBucket waits until a principal's polls at --polls-per-second 1 (bursts of 2) are all
// available again, however many it spent.
func fullPollBucket() { time.Sleep(3 * time.Second) }

// listenBurst (item 2): at --polls-per-second 1, listens come out of alice's polls.
func listenBurst(t *testing.T, r *results, d *dev) {
	fullPollBucket()
	meta, h := modern("subscriptions/listen", "")
	body := rpc("subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{"no-such-task"}}, "_meta": meta})
	// At once, so that the bucket refills nothing in between however slow the machine is.
	answers := make(chan answer, 5)
	for range cap(answers) {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			a, _ := post(ctx, d.url, aliceKey, body, h[:4]...)
			answers <- a
		}()
	}
	var seen []string
	limited := 0
	for range cap(answers) {
		a := <-answers
		seen = append(seen, strconv.Itoa(a.status))
		if a.status == http.StatusTooManyRequests && strings.Contains(a.body, "Rate limit exceeded for subscriptions/listen") {
			limited++
		}
	}
	slices.Sort(seen)
	r.add(t, "2 listen rate", "at --polls-per-second 1 (bursts of 2): alice sends 5 listens at once",
		"those past her burst refused: 429, the rate limit of subscriptions/listen", "HTTP "+strings.Join(seen, ", "), limited >= 2)
}

// listenCharged (item 2): the reads of a listen's tasks are charged to its caller as polls.
func listenCharged(t *testing.T, r *results, d *dev) {
	ids := make([]string, 8)
	for i := range ids {
		ids[i] = modernStart(t, d, aliceKey, "wait_and_echo", map[string]any{"seconds": 10, "text": "alice's " + strconv.Itoa(i)})
	}
	fullPollBucket() // and the starts' readings are past their interval: the listen reads each task
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	status, events := openListen(ctx, t, d, aliceKey, ids)
	notified := listenNotified(events, len(ids))
	cancel()
	poll := must(t, d.url, aliceKey, rpc("tasks/get", map[string]any{"taskId": ids[0]}))
	r.add(t, "2 listen rate", "at --polls-per-second 1 (bursts of 2): alice listens on 8 running tasks of hers, then polls once each is notified",
		"the poll waits (429): the listen's 8 reads were charged as polls", fmt.Sprintf("listen HTTP %d, %d of 8 notified; poll %s", status, notified, poll),
		notified == len(ids) && poll.status == http.StatusTooManyRequests)
}

// respellings (item 3): a sealed id opens in the one spelling it was issued in.
func respellings(t *testing.T, r *results, d *dev) {
	hers := modernStart(t, d, aliceKey, "wait_and_echo", map[string]any{"seconds": 0, "text": "alice's"})
	if status := awaitTask(t, d, aliceKey, hers, "completed"); status != "completed" {
		t.Fatalf("alice's task is %s, want completed", status)
	}
	flipped, broken := respell(hers, 99)

	read := slices.Concat(flipped, broken[:30])
	refused := 0
	for _, id := range read {
		if a := must(t, d.url, aliceKey, rpc("tasks/get", map[string]any{"taskId": id})); a.code() == -32602 && !a.served() {
			refused++
		}
	}
	r.add(t, "3 one spelling", fmt.Sprintf("alice reads her sealed id in %d other spellings: %d with the last character's unused bits flipped, %d with \\n, \\r or \\r\\n inside (tasks/get)",
		len(read), len(flipped), len(read)-len(flipped)), "-32602 (not found) for each", fmt.Sprintf("%d of %d not found", refused, len(read)), refused == len(read))

	spellings := slices.Concat([]string{hers}, flipped, broken)[:100]
	events, status := listenAs(t, d, aliceKey, spellings, true)
	acked, _ := listenedOf(events)
	r.add(t, "3 one spelling", "alice listens on her id in 100 spellings (itself and 99 others)", "exactly one acknowledged",
		fmt.Sprintf("HTTP %d, %d acknowledged", status, len(acked)), status == http.StatusOK && len(acked) == 1)
}

// respelledFollowers (item 3): 32 listens of 1,000 spellings of one running task follow it 32
// times at most (a listen past the principal's share of followed tasks is refused), and the
// process is back to its goroutines and memory once they close.
func respelledFollowers(t *testing.T, r *results, d *dev, ops string) {
	hers := modernStart(t, d, aliceKey, "wait_and_echo", map[string]any{"seconds": 120, "text": "followed"})
	spellings := lineBroken(hers, 1000)
	goroutines, rss := processGauge(t, ops, "go_goroutines"), processGauge(t, ops, "process_resident_memory_bytes")
	ctx, cancel := context.WithCancel(context.Background())
	acked := 0
	for range 32 {
		if status, events := openListen(ctx, t, d, aliceKey, spellings); status == http.StatusOK && firstAcknowledged(events) > 0 {
			acked++
		}
	}
	during := processGauge(t, ops, "go_goroutines")
	cancel()
	after := goroutines + 1000
	for deadline := time.Now().Add(10 * time.Second); after > goroutines+20 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		after = processGauge(t, ops, "go_goroutines")
	}
	// The runtime gives back the memory it no longer holds over a while, not at once.
	closed, grown := time.Now(), 0.0
	for deadline := closed.Add(time.Minute); ; time.Sleep(time.Second) {
		if grown = (processGauge(t, ops, "process_resident_memory_bytes") - rss) / (1 << 20); grown < 12 || time.Now().After(deadline) {
			break
		}
	}
	r.add(t, "3 one spelling", "alice opens 32 listens of 1,000 spellings of her running task, then closes them",
		"a few goroutines a listen, none left after, and the memory back within 12 MB within a minute",
		fmt.Sprintf("%d listens acknowledged; goroutines %.0f, %.0f during, %.0f after; RSS %+.0f MB %s after", acked, goroutines, during, after, grown, time.Since(closed).Round(time.Second)),
		during-goroutines < 32*10 && after-goroutines <= 20 && grown < 12)
}

// lineBroken is id and n-1 spellings of it with line breaks in its base64, which a lenient base64
// reader skips: one to as many as it takes, at each place in turn.
func lineBroken(id string, n int) []string {
	dot := strings.LastIndexByte(id, '.')
	head, body := id[:dot+1], id[dot+1:]
	out := []string{id}
	for breaks := 1; len(out) < n; breaks++ {
		for i := 1; i < len(body) && len(out) < n; i++ {
			out = append(out, head+body[:i]+strings.Repeat("\n", breaks)+body[i:])
		}
	}
	return out
}

// firstAcknowledged is how many ids the first message of a listen's stream acknowledges.
func firstAcknowledged(events <-chan listenEvent) int {
	for e := range events {
		acked, _ := listenedOf([]string{e.msg})
		return len(acked)
	}
	return 0
}

// processGauge is the value of a gauge of the process on ops's /metrics.
func processGauge(t *testing.T, ops, name string) float64 {
	resp, err := http.Get("http://" + ops + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if value, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			v, _ := strconv.ParseFloat(value, 64)
			return v
		}
	}
	t.Fatalf("no %s on %s/metrics", name, ops)
	return 0
}

const base64URLAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// respell writes other spellings of a sealed id (….BASE64) that a lenient base64 reader decodes
// to the same bytes: flipped, with the unused low bits of the last character set otherwise; and
// at least n broken up by line breaks inside the base64.
func respell(id string, n int) (flipped, broken []string) {
	dot := strings.LastIndexByte(id, '.')
	head, body := id[:dot+1], id[dot+1:]
	unused := map[int]int{2: 4, 3: 2}[len(body)%4]
	last := strings.IndexByte(base64URLAlphabet, body[len(body)-1])
	for bits := 1; bits < 1<<unused; bits++ {
		flipped = append(flipped, head+body[:len(body)-1]+string(base64URLAlphabet[last^bits]))
	}
	for i := len(body) / 2; len(broken) < n && i < len(body); i++ {
		for _, lf := range []string{"\n", "\r", "\r\n"} {
			broken = append(broken, head+body[:i]+lf+body[i:])
		}
	}
	return flipped, broken
}

// listenTokenExpiry (item 5): a listen ends with its result when its bearer token expires.
func listenTokenExpiry(t *testing.T, r *results, d *dev, is *bearertest.Issuer) {
	id := modernStart(t, d, is.Token(t, "carol", audience, "", nil), "wait_and_echo", map[string]any{"seconds": 15, "text": "carol's"})
	var expiry time.Time
	brief := is.Token(t, "carol", audience, "", func(c *bearertest.Claims, _ *jose.SignerOptions) {
		c.Expiry = jwt.NewNumericDate(time.Now().Add(3 * time.Second))
		expiry = c.Expiry.Time()
	})
	ctx, cancel := context.WithDeadline(context.Background(), expiry.Add(6*time.Second))
	defer cancel()
	status, events := openListen(ctx, t, d, brief, []string{id})
	ended, at := listenResultAt(events)
	seen := fmt.Sprintf("HTTP %d; no result within 6 s of the expiry", status)
	if ended {
		seen = fmt.Sprintf("HTTP %d; the result %.1f s after the expiry", status, at.Sub(expiry).Seconds())
	}
	r.add(t, "5 listen life", "carol listens on her 15 s task with an OAuth token that expires in 3 s",
		"the stream ends with its result within 2 s of the expiry", seen, ended && at.Sub(expiry) < 2*time.Second)
}

// listenTTL (item 5): a listen tells nothing of a task past its id's ttl.
func listenTTL(t *testing.T, r *results, d *dev) {
	issued := time.Now()
	id := modernStart(t, d, aliceKey, "brief_echo", map[string]any{"seconds": 6, "text": "alice's"})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	status, events := openListen(ctx, t, d, aliceKey, []string{id})
	var told []string
	late, ended := false, "did not end within 15 s"
	for e := range events {
		at := e.at.Sub(issued)
		if strings.Contains(e.msg, `"notifications/tasks"`) {
			told = append(told, fmt.Sprintf("%.1f s", at.Seconds()))
			// The ttl runs from the start's answer, a little after issued.
			late = late || at > briefEchoTTL+500*time.Millisecond
		} else if isListenResult(e.msg) {
			ended = fmt.Sprintf("ended at %.1f s", at.Seconds())
		}
	}
	r.add(t, "5 listen life", fmt.Sprintf("alice listens on her 6 s task of a tool whose ids live %s", briefEchoTTL),
		"no notification past the ttl", fmt.Sprintf("HTTP %d; notifications at %v; %s", status, told, ended), status == http.StatusOK && len(told) > 0 && !late)
}

// The bounds of listens that listenBounds probes.
const (
	followedShare = 2
	maxListen     = 4 * time.Second
)

// boundFlags sets the bounds of listens, in a build that has their flags.
func boundFlags(bin string) []string {
	if !supports(bin, "max-followed-per-principal") || !supports(bin, "max-listen") {
		return nil
	}
	return []string{"--max-followed-per-principal", strconv.Itoa(followedShare), "--max-listen", maxListen.String()}
}

// listenBounds (items 2 and 5): a principal's listens follow at most its share of tasks at once,
// and a listen lives at most --max-listen; flagged says whether d was started with those bounds.
func listenBounds(t *testing.T, r *results, d *dev, flagged bool) {
	run := func(bearer, text string) string {
		return modernStart(t, d, bearer, "wait_and_echo", map[string]any{"seconds": 15, "text": text})
	}
	hers, another, his := []string{run(aliceKey, "alice's 1"), run(aliceKey, "alice's 2")}, run(aliceKey, "alice's 3"), run(bobKey, "bob's")
	opened := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), maxListen+6*time.Second)
	defer cancel()
	_, held := openListen(ctx, t, d, aliceKey, hers)
	if first := <-held; !strings.Contains(first.msg, "notifications/subscriptions/acknowledged") {
		t.Fatalf("alice's listen on her tasks: %s", first.msg)
	}
	unflagged := map[bool]string{true: "", false: "(the build has no such flags) "}[flagged]
	second, bobs := listenFirst(t, d, aliceKey, another), listenFirst(t, d, bobKey, his)
	r.add(t, "2 listen bounds", fmt.Sprintf("--max-followed-per-principal %d: while alice's listen follows %d tasks of hers, she listens on another; bob listens on his", followedShare, len(hers)),
		"alice's second listen refused (her share is full), bob's acknowledged", fmt.Sprintf("%salice's %s; bob's %s", unflagged, firstSaid(second), firstSaid(bobs)),
		strings.Contains(second, "you follow as many tasks") && strings.Contains(bobs, "notifications/subscriptions/acknowledged") && strings.Contains(bobs, his))

	ended, at := listenResultAt(held)
	seen := fmt.Sprintf("%sno result within %s", unflagged, maxListen+6*time.Second)
	if ended {
		seen = fmt.Sprintf("%sthe result after %.1f s", unflagged, at.Sub(opened).Seconds())
	}
	r.add(t, "5 listen life", fmt.Sprintf("--max-listen %s: alice's listen on tasks that run 15 s", maxListen), "the stream ends with its result within 2 s of --max-listen",
		seen, ended && at.Sub(opened) < maxListen+2*time.Second)
}

// listenFirst is the first message of bearer's listen on id: its acknowledgement, or its refusal.
func listenFirst(t *testing.T, d *dev, bearer, id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, events := openListen(ctx, t, d, bearer, []string{id})
	if e, ok := <-events; ok {
		return e.msg
	}
	return "no message"
}

// firstSaid says what a listen's first message was: its acknowledgement, or its error.
func firstSaid(msg string) string {
	var m struct {
		Method string
		Error  *struct {
			Code    int
			Message string
		}
	}
	json.Unmarshal([]byte(msg), &m)
	switch {
	case m.Method == "notifications/subscriptions/acknowledged":
		return "acknowledged"
	case m.Error != nil:
		return fmt.Sprintf("refused: %d %.90q", m.Error.Code, m.Error.Message)
	}
	return fmt.Sprintf("%.90s", msg)
}

// listenEvent is one JSON-RPC message of a listen's stream, and when it came.
type listenEvent struct {
	at  time.Time
	msg string
}

// openListen sends subscriptions/listen for ids as bearer (a 2026-07-28 client with the tasks
// extension) and passes on its messages as they come, until the answer or ctx ends.
func openListen(ctx context.Context, t *testing.T, d *dev, bearer string, ids []string) (status int, events <-chan listenEvent) {
	t.Helper()
	meta, h := modern("subscriptions/listen", "")
	body := rpc("subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": ids}, "_meta": meta})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set(h[0], h[1])
	req.Header.Set(h[2], h[3])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("listening: %v", err)
	}
	out := make(chan listenEvent)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				line = "data: " + line
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				select {
				case out <- listenEvent{time.Now(), data}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return resp.StatusCode, out
}

// listenNotified reads events until n tasks have been notified or the stream ends, and returns how
// many were.
func listenNotified(events <-chan listenEvent, n int) int {
	told := map[string]bool{}
	for e := range events {
		var m struct {
			Method string
			Params struct{ TaskID string }
		}
		if json.Unmarshal([]byte(e.msg), &m); m.Method == "notifications/tasks" {
			told[m.Params.TaskID] = true
		}
		if len(told) == n {
			break
		}
	}
	return len(told)
}

// listenResultAt reads events until the listen's result: whether it came, and when.
func listenResultAt(events <-chan listenEvent) (bool, time.Time) {
	for e := range events {
		if isListenResult(e.msg) {
			return true, e.at
		}
	}
	return false, time.Time{}
}

// isListenResult reports whether msg is the answer that ends a listen (its result).
func isListenResult(msg string) bool {
	var m struct {
		Method string
		Result json.RawMessage
	}
	return json.Unmarshal([]byte(msg), &m) == nil && m.Method == "" && m.Result != nil
}
