package token

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taskgate/taskgate/adapters"
)

func mustSealed(t testing.TB, spec string) *Sealed {
	t.Helper()
	keys, err := ParseKeys(spec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSealed(keys)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSealedRoundTripAndRotation(t *testing.T) {
	k1, k2 := NewKey("k1"), NewKey("k2")
	old := mustSealed(t, k1)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	c := Claims{Tool: "wait_and_echo", Ref: adapters.Ref{ID: "taskgate/WaitAndEcho/abc/r1"}, Caller: "alice", Created: now, TTL: time.Hour}
	id := old.Issue(c)
	if !strings.HasPrefix(id, "tg1.k1.") {
		t.Fatalf("id %q: want prefix tg1.k1.", id)
	}
	if strings.Contains(id, "WaitAndEcho") || strings.Contains(id, "alice") {
		t.Fatalf("id %q leaks its claims", id)
	}
	rotated := mustSealed(t, k2+","+k1) // new key seals, old key still opens
	got, err := rotated.Open(id, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got != c {
		t.Fatalf("Open = %+v, want %+v", got, c)
	}
	if id2 := rotated.Issue(c); !strings.HasPrefix(id2, "tg1.k2.") || id2 == id {
		t.Fatalf("rotated Issue = %q, want a fresh tg1.k2. id", id2)
	}
	if _, err := mustSealed(t, k2).Open(id, now); !errors.Is(err, ErrForged) {
		t.Fatalf("Open after the key was dropped: err = %v, want ErrForged", err)
	}
}

// TestSealedTwoPartRefs: ids sealed while a Ref had a run apart ("r") open as the one id the two
// parts make; ids sealed now carry no "r".
func TestSealedTwoPartRefs(t *testing.T) {
	s := mustSealed(t, NewKey("k1"))
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	old := s.seal(prefix, []byte(`{"t":"wait_and_echo","i":"taskgate/WaitAndEcho/abc","r":"r1","c":"alice","a":`+
		strconv.FormatInt(now.UnixMilli(), 10)+`,"l":3600000}`))
	got, err := s.Open(old, now)
	want := Claims{Tool: "wait_and_echo", Ref: adapters.Ref{ID: "taskgate/WaitAndEcho/abc/r1"}, Caller: "alice", Created: now, TTL: time.Hour}
	if err != nil || got != want {
		t.Fatalf("Open of an id with a run apart = %+v, %v; want %+v", got, err, want)
	}
	plain, err := s.unseal(prefix, s.Issue(want))
	if err != nil || strings.Contains(string(plain), `"r"`) {
		t.Errorf("Issue sealed %s, %v: want no run apart", plain, err)
	}
}

func TestSealedRejects(t *testing.T) {
	s := mustSealed(t, NewKey("k1"))
	other := mustSealed(t, NewKey("k1")) // same id, different secret
	now := time.Now()
	good := s.Issue(Claims{Tool: "t", Ref: adapters.Ref{ID: "x"}, Created: now, TTL: time.Minute})
	body, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(good, "tg1.k1."))
	body[len(body)-1] ^= 0x01
	flipped := "tg1.k1." + base64.RawURLEncoding.EncodeToString(body)
	for name, tc := range map[string]struct {
		id   string
		at   time.Time
		want error
	}{
		"empty":        {"", now, ErrMalformed},
		"native arn":   {"arn:aws:states:us-east-1:1:execution:a:b", now, ErrMalformed},
		"no body":      {"tg1.k1", now, ErrMalformed},
		"bad base64":   {"tg1.k1.!!!", now, ErrMalformed},
		"short":        {"tg1.k1.AAAA", now, ErrMalformed},
		"unknown key":  {strings.Replace(good, "tg1.k1.", "tg1.k9.", 1), now, ErrForged},
		"tampered":     {flipped, now, ErrForged},
		"other secret": {other.Issue(Claims{Tool: "t", Ref: adapters.Ref{ID: "x"}, Created: now}), now, ErrForged},
		"expired":      {good, now.Add(2 * time.Minute), ErrExpired},
	} {
		if _, err := s.Open(tc.id, tc.at); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.want)
		}
	}
}

func TestUnlimitedTTLNeverExpires(t *testing.T) {
	s := mustSealed(t, NewKey("k1"))
	id := s.Issue(Claims{Tool: "t", Ref: adapters.Ref{ID: "x"}, Created: time.Unix(0, 0)})
	if _, err := s.Open(id, time.Now()); err != nil {
		t.Fatal(err)
	}
}

func TestParseKeysErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"":                   "token key 1: want ID:BASE64 with an ID of 1-16 letters, digits or '-'",
		"k1":                 "token key 1: want ID:BASE64 with an ID of 1-16 letters, digits or '-'",
		"k1:AAAA":            `token key "k1": the key is 3 bytes, want 32 (generate one with ` + "`taskgate token new-key`)",
		"k1:%%%":             `token key "k1": the key is not base64 (generate one with ` + "`taskgate token new-key`)",
		NewKey("a") + ",a:x": `token key 2: id "a" is listed twice`,
	} {
		_, err := ParseKeys(spec)
		if err == nil || err.Error() != want {
			t.Errorf("ParseKeys(%q) = %v, want %q", spec, err, want)
		}
	}
}

// refs write "tool:ID" and read what starts with "echo:".
type refs struct{}

func (refs) FormatRef(tool string, r adapters.Ref) string { return tool + ":" + r.ID }
func (refs) ReadsRef(id string) bool                      { return strings.HasPrefix(id, "echo:") }

func TestNative(t *testing.T) {
	n := Native{Refs: refs{}}
	if got := n.Issue(Claims{Tool: "echo", Ref: adapters.Ref{ID: "x"}}); got != "echo:x" {
		t.Errorf("Issue = %q, want what the tool's driver writes", got)
	}
	// Only the tools' drivers can tell which tool an id is of: Open checks that one reads it.
	if got, err := n.Open("echo:x", time.Now()); err != nil || got != (Claims{}) {
		t.Errorf("Open = %+v, %v; want empty claims", got, err)
	}
	for _, bad := range []string{"", "other:x", "echo:a\x00b", "echo:\x7f", "echo:" + strings.Repeat("a", 3000)} {
		if _, err := n.Open(bad, time.Now()); !errors.Is(err, ErrMalformed) {
			t.Errorf("Open(%q): err = %v, want ErrMalformed", bad, err)
		}
	}
}

func TestState(t *testing.T) {
	keys, _ := ParseKeys(NewKey("k1"))
	s, _ := NewSealed(keys)
	st := s.SealState([]byte(`{"a":1}`))
	if data, err := s.OpenState(st); err != nil || string(data) != `{"a":1}` {
		t.Fatalf("OpenState = %s, %v", data, err)
	}
	other, _ := ParseKeys(NewKey("k2"))
	o, _ := NewSealed(other)
	id := s.Issue(Claims{Tool: "echo", Ref: adapters.Ref{ID: "x"}, Created: time.Now()})
	for name, bad := range map[string]string{"tampered": st[:len(st)-2] + "AA", "other key": o.SealState([]byte("x")), "a task id": id, "garbage": "x"} {
		if _, err := s.OpenState(bad); !errors.Is(err, ErrForged) && !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := s.Open(st, time.Now()); err == nil {
		t.Error("a state opened as a task id")
	}
	n := Native{Refs: refs{}}
	if data, err := n.OpenState(n.SealState([]byte("clear"))); err != nil || string(data) != "clear" {
		t.Fatalf("native state: %s, %v", data, err)
	}
}

// Claims sealed under the key but not as Issue writes them open as malformed, never as a task:
// only the key's holder could make them, and Open still reads them with care.
func TestSealedMalformedClaims(t *testing.T) {
	s := mustSealed(t, NewKey("k1"))
	for _, plain := range []string{
		``, `null`, `[]`, `"t"`, `{"t":"x","i":"y","a":1.5}`, `{"t":"x","i":"y","a":"1"}`, `{"t":1,"i":"y","a":1}`,
		`{"t":"x","a":1}`, `{"i":"y","a":1}`, `{"t":"x","i":"y","a":1e300}`, `{"t":"x","i":"y","l":-0.5}`, `{"t":"x","i":"y"`,
		`{"t":"x","i":"y","c":null}`,
	} {
		if c, err := s.Open(s.seal(prefix, []byte(plain)), time.Now()); !errors.Is(err, ErrMalformed) {
			t.Errorf("claims %s: %+v, %v; want ErrMalformed", plain, c, err)
		}
	}
	c, err := s.Open(s.seal(prefix, []byte(`{"t":"x","i":"y","a":0,"z":{"later":[1]}}`)), time.Now())
	if err != nil || c.Tool != "x" || c.Ref.ID != "y" {
		t.Errorf("claims with a member a later version adds: %+v, %v; want them read", c, err)
	}
}

// TestClaimsReadAsEncodingJSONWroteThem: the claims Issue writes read back, by readClaims and by
// json.Unmarshal, as those json.Marshal wrote before it, so that ids of every version read alike.
func TestClaimsReadAsEncodingJSONWroteThem(t *testing.T) {
	for _, sc := range []sealedClaims{
		{Tool: "echo", ID: "wf-1/run-2", Created: 1765000000000},
		{Tool: "a\"b\\c", ID: "arn:aws:states:us-east-1:1:execution:sm:<x>&y", Run: "r", Caller: "alice@example.com", Created: -5, TTL: 3600000, Keep: 1},
		{Tool: "\u2028\u2029\x00\x1f\xff", ID: "inv_1", Caller: "é", Created: 0, TTL: -1},
	} {
		marshalled, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		var want, unmarshalled sealedClaims
		json.Unmarshal(marshalled, &want)
		written := appendClaims(nil, sc)
		read, ok := readClaims(written)
		if err := json.Unmarshal(written, &unmarshalled); err != nil || !ok || read != want || unmarshalled != want {
			t.Errorf("%s read as %+v (%v) and %+v (%v), want %+v", written, read, ok, unmarshalled, err, want)
		}
	}
}

// TestOneSpelling: an id opens in the one spelling Issue wrote, so that whoever deduplicates ids
// by their text deduplicates tasks.
func TestOneSpelling(t *testing.T) {
	s := mustSealed(t, NewKey("k1"))
	now := time.Now()
	good := s.Issue(Claims{Tool: "t", Ref: adapters.Ref{ID: "x"}, Created: now, TTL: time.Minute})
	if _, err := s.Open(good, now); err != nil {
		t.Fatalf("Open(%q): %v", good, err)
	}
	last := strings.IndexByte(base64URL, good[len(good)-1])
	if len(strings.TrimPrefix(good, "tg1.k1."))%4 == 0 {
		t.Fatalf("id %q has no trailing bits to vary", good)
	}
	for name, id := range map[string]string{
		"trailing bits": good[:len(good)-1] + string(base64URL[last^1]),
		"line feed":     good[:20] + "\n" + good[20:],
		"carriage":      good[:20] + "\r" + good[20:],
		"crlf at end":   good + "\r\n",
	} {
		if _, err := s.Open(id, now); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Open(%q) = %v, want ErrMalformed", name, id, err)
		}
	}
	state := s.SealState([]byte("asked"))
	if _, err := s.OpenState(state[:12] + "\n" + state[12:]); err == nil {
		t.Errorf("a sealed state opens with a line feed in it")
	}
	if _, err := (Native{}).OpenState("YWJj\n"); err == nil {
		t.Errorf("a native state opens with a line feed in it")
	}
}

const base64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// BenchmarkOpen opens a sealed id as a poll does.
func BenchmarkOpen(b *testing.B) {
	s, now := mustSealed(b, NewKey("k1")), time.Now()
	id := s.Issue(Claims{Tool: "analyze_dataset", Ref: adapters.Ref{ID: "taskgate/WaitAndEcho/xOm6C6dIBRXYpmuh/f0cb2fa9-f479-8447-2042-34055be284e5/01a252a2-8544-79e1-b781-03dbdc3d63fe"},
		Caller: "u1.Q0Z3dGvR4mPk9sXa", Created: now, TTL: time.Hour})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Open(id, now); err != nil {
			b.Fatal(err)
		}
	}
}
