// Package token turns an engine reference into the task id a client sees, and back, with no
// server-side state.
//
// Sealed tokens (the default) are AES-256-GCM ciphertexts of {tool, ref, caller, createdAt, ttl}
// under a key named by an id written in clear inside the token, so that keys can rotate: the first
// key seals, every listed key opens. They are opaque, unguessable and tamper-evident. Native tokens
// are the engine's own id (an execution ARN; "workflowID/runID"), written and read by the engine's
// driver, for single-user setups.
package token

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/internal/jsonappend"
	"github.com/taskgate/taskgate/internal/strictjson"
)

// Claims is what a task id stands for.
type Claims struct {
	Tool    string
	Ref     adapters.Ref
	Caller  string
	Created time.Time
	// TTL is how long the id is honoured after Created; zero means unlimited.
	TTL time.Duration
	// KeepAlive, when set, is how long the result stays readable after the execution ended.
	KeepAlive time.Duration
}

// Expired reports whether the claims are past their ttl at now.
func (c Claims) Expired(now time.Time) bool {
	return c.TTL > 0 && now.After(c.Created.Add(c.TTL))
}

// Errors that Open returns (wrapped); none of them says more than needed to an untrusted caller.
var (
	ErrMalformed = errors.New("task id is malformed")
	ErrForged    = errors.New("task id was not issued by this server")
	ErrExpired   = errors.New("task has expired")
)

const prefix = "tg1."

// Key is one named AES-256 key.
type Key struct {
	ID     string
	Secret []byte
}

var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9-]{1,16}$`)

// ParseKeys reads "id:base64key[,id:base64key...]" (standard or URL base64 of 32 bytes). The first
// key seals new tokens; all of them open tokens.
func ParseKeys(spec string) ([]Key, error) {
	var keys []Key
	seen := map[string]bool{}
	for i, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		id, enc, ok := strings.Cut(part, ":")
		if !ok || !keyIDPattern.MatchString(id) {
			return nil, fmt.Errorf("token key %d: want ID:BASE64 with an ID of 1-16 letters, digits or '-'", i+1)
		}
		if seen[id] {
			return nil, fmt.Errorf("token key %d: id %q is listed twice", i+1, id)
		}
		secret, err := decodeSecret(enc)
		if err != nil {
			return nil, fmt.Errorf("token key %q: %w", id, err)
		}
		seen[id] = true
		keys = append(keys, Key{ID: id, Secret: secret})
	}
	return keys, nil
}

func decodeSecret(enc string) ([]byte, error) {
	for _, e := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := e.DecodeString(enc); err == nil {
			if len(b) != 32 {
				return nil, fmt.Errorf("the key is %d bytes, want 32 (generate one with `taskgate token new-key`)", len(b))
			}
			return b, nil
		}
	}
	return nil, errors.New("the key is not base64 (generate one with `taskgate token new-key`)")
}

// NewKey returns a fresh random key with the given id, formatted for ParseKeys.
func NewKey(id string) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return id + ":" + base64.RawURLEncoding.EncodeToString(b)
}

// Codec issues and opens task ids.
type Codec interface {
	Issue(c Claims) string
	// Open reads a task id. Native codecs cannot know the tool, the Ref, the caller, the creation
	// time or the ttl, and return them zero: the caller reads the id with each tool's driver.
	Open(id string, now time.Time) (Claims, error)
	// SealState protects what a client must hand back unchanged (the requestState of a call that
	// asks before it starts), and OpenState reads it back: ErrForged or ErrMalformed when it is not
	// what SealState gave. Native codecs have no key: their state is in clear, and checked only for
	// its shape.
	SealState(data []byte) string
	OpenState(s string) ([]byte, error)
	// Secrets are the secrets of the codec's keys, the sealing one first: the deployment's
	// secrets, which also key the callers that engine records carry. None for a native codec
	// given no keys.
	Secrets() [][]byte
}

// Sealed is the default Codec.
type Sealed struct {
	sealID  string
	aeads   map[string]cipher.AEAD
	secrets [][]byte
}

// NewSealed builds a sealing codec from at least one key.
func NewSealed(keys []Key) (*Sealed, error) {
	if len(keys) == 0 {
		return nil, errors.New("no token key: set TASKGATE_TOKEN_KEYS or --token-keys (generate one with `taskgate token new-key`)")
	}
	s := &Sealed{sealID: keys[0].ID, aeads: map[string]cipher.AEAD{}}
	for _, k := range keys {
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("token key %q: %w", k.ID, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("token key %q: %w", k.ID, err)
		}
		s.aeads[k.ID] = aead
		s.secrets = append(s.secrets, k.Secret)
	}
	return s, nil
}

// Secrets returns the secrets of the keys, the sealing one first.
func (s *Sealed) Secrets() [][]byte { return s.secrets }

type sealedClaims struct {
	Tool string `json:"t"`
	ID   string `json:"i"`
	// Run is only in ids sealed while a Ref had two parts (an id and a run); such a Ref is the two
	// joined by "/", as Ref.String wrote it then and as the one driver that had runs writes its ids
	// now. Issue no longer writes it.
	Run     string `json:"r,omitempty"`
	Caller  string `json:"c,omitempty"`
	Created int64  `json:"a"`           // unix milliseconds
	TTL     int64  `json:"l,omitempty"` // milliseconds
	Keep    int64  `json:"k,omitempty"` // milliseconds
}

// readClaims reads the claims Issue wrote (with their exact names), as json.Unmarshal would, without
// its reflection or a map of the members: a fifth of the CPU of opening an id.
func readClaims(plain []byte) (sc sealedClaims, ok bool) {
	ok = true
	isObject, err := strictjson.EachMember(plain, func(name []byte, v json.RawMessage) {
		if !ok {
			return
		}
		switch string(name) {
		case "t":
			sc.Tool, ok = strictjson.String(v)
		case "i":
			sc.ID, ok = strictjson.String(v)
		case "r":
			sc.Run, ok = strictjson.String(v)
		case "c":
			sc.Caller, ok = strictjson.String(v)
		case "a":
			sc.Created, ok = integer(v)
		case "l":
			sc.TTL, ok = integer(v)
		case "k":
			sc.Keep, ok = integer(v)
		}
	})
	return sc, ok && isObject && err == nil
}

// integer reads raw, a JSON value, as a number that is an integer a float64 holds exactly.
func integer(raw []byte) (int64, bool) {
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// Issue seals c.
func (s *Sealed) Issue(c Claims) string {
	return s.seal(prefix, appendClaims(make([]byte, 0, 128), sealedClaims{
		Tool: c.Tool, ID: c.Ref.ID, Caller: c.Caller,
		Created: c.Created.UnixMilli(), TTL: c.TTL.Milliseconds(), Keep: c.KeepAlive.Milliseconds(),
	}))
}

// appendClaims appends sc as JSON, under the names of its json tags (which readClaims reads),
// without json.Marshal's reflection.
func appendClaims(b []byte, sc sealedClaims) []byte {
	b = jsonappend.String(append(b, `{"t":`...), sc.Tool)
	b = jsonappend.String(append(b, `,"i":`...), sc.ID)
	if sc.Run != "" {
		b = jsonappend.String(append(b, `,"r":`...), sc.Run)
	}
	if sc.Caller != "" {
		b = jsonappend.String(append(b, `,"c":`...), sc.Caller)
	}
	b = strconv.AppendInt(append(b, `,"a":`...), sc.Created, 10)
	if sc.TTL != 0 {
		b = strconv.AppendInt(append(b, `,"l":`...), sc.TTL, 10)
	}
	if sc.Keep != 0 {
		b = strconv.AppendInt(append(b, `,"k":`...), sc.Keep, 10)
	}
	return append(b, '}')
}

// seal encrypts plain under the sealing key as pfx + key id + "." + base64(nonce, ciphertext),
// with pfx and the key id authenticated too.
func (s *Sealed) seal(pfx string, plain []byte) string {
	aead := s.aeads[s.sealID]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic(err)
	}
	return pfx + s.sealID + "." + base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(pfx+s.sealID)))
}

// canonical reads only the spelling seal writes: base64's decoder also takes trailing bits that
// are not zero (and skips line breaks, refused apart), so that one id would have many spellings,
// each a task id of its own to whoever deduplicates by text.
var canonical = base64.RawURLEncoding.Strict()

// unseal opens what seal wrote with pfx, under any listed key.
func (s *Sealed) unseal(pfx, v string) ([]byte, error) {
	rest, ok := strings.CutPrefix(v, pfx)
	if !ok {
		return nil, ErrMalformed
	}
	kid, body, ok := strings.Cut(rest, ".")
	if !ok {
		return nil, ErrMalformed
	}
	aead, ok := s.aeads[kid]
	if !ok {
		return nil, ErrForged
	}
	raw, err := canonical.DecodeString(body)
	if err != nil || strings.ContainsAny(body, "\r\n") || len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, ErrMalformed
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(pfx+kid))
	if err != nil {
		return nil, ErrForged
	}
	return plain, nil
}

// Open checks and reads a sealed id. Expiry is checked too: an expired id is ErrExpired.
func (s *Sealed) Open(id string, now time.Time) (Claims, error) {
	plain, err := s.unseal(prefix, id)
	if err != nil {
		return Claims{}, err
	}
	sc, ok := readClaims(plain)
	if !ok || sc.Tool == "" || sc.ID == "" {
		return Claims{}, ErrMalformed
	}
	if sc.Run != "" {
		sc.ID += "/" + sc.Run
	}
	c := Claims{
		Tool: sc.Tool, Ref: adapters.Ref{ID: sc.ID}, Caller: sc.Caller,
		Created: time.UnixMilli(sc.Created).UTC(), TTL: time.Duration(sc.TTL) * time.Millisecond,
		KeepAlive: time.Duration(sc.Keep) * time.Millisecond,
	}
	if c.Expired(now) {
		return Claims{}, ErrExpired
	}
	return c, nil
}

// statePrefix tells a sealed state from a task id: the two never open as each other.
const statePrefix = "tgs1."

// SealState seals data under the sealing key.
func (s *Sealed) SealState(data []byte) string { return s.seal(statePrefix, data) }

// OpenState opens what SealState sealed, under any listed key.
func (s *Sealed) OpenState(st string) ([]byte, error) { return s.unseal(statePrefix, st) }

// Native hands out the engine's own id, as the engine's driver writes it, for single-user setups.
type Native struct {
	Refs Refs
	// Keys, when set, are the deployment's secrets (Secrets): native ids need none themselves.
	Keys []Key
}

// Secrets returns the secrets of n's keys, the first one first.
func (n Native) Secrets() [][]byte {
	var secrets [][]byte
	for _, k := range n.Keys {
		secrets = append(secrets, k.Secret)
	}
	return secrets
}

// Refs write and read the engine ids of mapped tools: a *mapping.Set.
type Refs interface {
	// FormatRef writes a Ref of the named tool's executions as its engine's own id.
	FormatRef(tool string, r adapters.Ref) string
	// ReadsRef reports whether the driver of some tool's engine reads id as a Ref.
	ReadsRef(id string) bool
}

// Issue writes the Ref as the tool's engine writes it.
func (n Native) Issue(c Claims) string { return n.Refs.FormatRef(c.Tool, c.Ref) }

// maxNativeLen bounds what is parsed at all: an ARN is at most 2048 characters, a Temporal workflow
// id 1000 plus a run id.
const maxNativeLen = 2100

// Open checks that some mapped engine's driver reads id, and returns empty Claims: which tool's
// execution it names, if any, is for the caller to find with each tool's driver
// (mapping.Tool.ParseRef), and whether that tool's engine owns it.
func (n Native) Open(id string, _ time.Time) (Claims, error) {
	if id == "" || len(id) > maxNativeLen || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) || !n.Refs.ReadsRef(id) {
		return Claims{}, ErrMalformed
	}
	return Claims{}, nil
}

// SealState writes data in clear: a native codec has no key.
func (Native) SealState(data []byte) string { return base64.RawURLEncoding.EncodeToString(data) }

// OpenState reads what SealState wrote.
func (Native) OpenState(st string) ([]byte, error) {
	data, err := canonical.DecodeString(st)
	if err != nil || strings.ContainsAny(st, "\r\n") {
		return nil, ErrMalformed
	}
	return data, nil
}
