package driver

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Driver is one kind of engine. It owns everything engine-specific about mapping files and task
// ids, so that taskgate's mapping loader, server and command line never name an engine: it reads
// its engine blocks and tool targets, opens engines, and writes and reads the engine's own ids.
//
// An engine package registers its driver from init (adapters.Register); importing the package
// for its side effects is then all it takes to use that kind of engine, as with database/sql
// drivers.
type Driver interface {
	// Info describes the driver's parts of a mapping file.
	Info() DriverInfo
	// DecodeEngine reads an engine block: the mapping under the driver's name in
	// engines.<block name>. It reports every problem through b and returns what it could read.
	DecodeEngine(b Block) EngineConfig
	// DecodeTarget reads a tool's target from the tool's mapping: the value of Info().TargetKey,
	// which the loader has checked is present. It reports every problem through tool. What the
	// engine needs of it beyond a Name goes in the Target's Spec.
	DecodeTarget(tool Block) Target
	// FormatRef writes a Ref as the engine's own id, the one its own tools show (an execution ARN;
	// a workflow id and run id).
	FormatRef(r Ref) string
	// ParseRef reads an id that FormatRef wrote, and fails on text that no Ref formats to. A
	// parsed Ref is only a candidate: whether a target owns it is adapters.Engine.Owns's to say.
	ParseRef(id string) (Ref, error)
}

// DriverInfo describes a driver's parts of a mapping file, for the loader and for editors.
type DriverInfo struct {
	// Title names the kind of engine in messages, like "Step Functions".
	Title string
	// TargetKey is the key of a tool mapping that holds the tool's target, like "workflow". It
	// must not be one of the keys every tool has (name, engine, inputSchema...).
	TargetKey string
	// Schema is the JSON Schema of the driver's parts of a mapping file, as one JSON object
	// {"engine": SCHEMA, "target": SCHEMA}: an engine block, and the value of TargetKey. The keys
	// the loader accepts in an object are the properties of its schema, so nested objects are
	// written inline; "#/$defs/duration" (a Go duration) may be referred to.
	Schema json.RawMessage
	// EngineExample and TargetExample are short YAML snippets for hints, like
	// "temporal: {address: 127.0.0.1:7233}" and "workflow: {type: ..., taskQueue: ...}".
	EngineExample, TargetExample string
	// Budget is the read budget of an engine block that sets none: what the engine's published
	// default quotas leave to taskgate with room for every other caller. Zero: unlimited.
	Budget Budget
	// SweepBudget, when set, is the budget of sweeps and samples (Sweeper, Sampler), for an engine
	// that throttles its listing apart from its reads; zero: they spend the read budget. It
	// applies when the read budget is not unlimited.
	SweepBudget Budget
}

// Budget is how fast taskgate may read an engine: ReadsPerSecond on average, up to Burst at once
// after a quiet spell (a token bucket). The zero Budget is unlimited.
type Budget struct {
	ReadsPerSecond float64
	Burst          int
}

// Unlimited reports whether b sets no limit.
func (b Budget) Unlimited() bool { return b.ReadsPerSecond <= 0 }

// Split returns one of n replicas' share of b, which together spend what b allows (each at least
// one read at once).
func (b Budget) Split(n int) Budget {
	if n <= 1 || b.Unlimited() {
		return b
	}
	return Budget{ReadsPerSecond: b.ReadsPerSecond / float64(n), Burst: max(1, b.Burst/n)}
}

// Block is one mapping of a mapping file (an engine block, a tool) as a driver reads it; the
// mapping loader implements it. Reading a key checks the type of its value, and every problem is
// reported with the file, line and column of the offending key or value and the key's path in the
// file (engines.prod.temporal.address). Strings come with ${VAR} and ${VAR:-default} expanded.
// Keys that the block's schema does not declare were reported before the driver sees it.
type Block interface {
	// Has reports whether the block sets key.
	Has(key string) bool
	// String reads an optional string. ok is false when the key is absent or its value is not a
	// string (reported).
	String(key string) (s string, ok bool)
	// Required reads a string that must be set and not blank; hint says what to write.
	Required(key, hint string) (s string, ok bool)
	// File reads an optional path of a file that serving the engine reads (a certificate, a
	// key); a relative path is made relative to the mapping file. taskgate validate checks that
	// the file can be read.
	File(key string) (path string, ok bool)
	// EnvName reads an optional name of an environment variable that serving the engine reads (one
	// that holds a secret, never the secret); hint says what to write when it is no variable name.
	// taskgate validate checks that the variable is set.
	EnvName(key, hint string) (name string, ok bool)
	// Bool reads an optional true or false.
	Bool(key string) (v bool, ok bool)
	// Duration reads an optional positive Go duration like 30s or 1h.
	Duration(key string) (d time.Duration, ok bool)
	// Block reads a nested mapping; hint says what to write when the value is missing or is
	// something else.
	Block(key, hint string) (b Block, ok bool)
	// IsBlock reports whether key is set to a nested mapping, and reports nothing: for a value
	// that may be written short (a string) or long (a mapping).
	IsBlock(key string) bool
	// Errorf reports a problem with the value of key, or with the block itself when key is "" or
	// absent; hint says what to do about it and may be empty.
	Errorf(key, hint, format string, args ...any)
}

// Discoverer is a Driver that drafts mapping files from what its engine already runs: the command
// `taskgate discover NAME`.
type Discoverer interface {
	Driver
	// Discover declares the command's flags on fs and returns what the command runs once they are
	// parsed: it writes a draft mapping file to w, and what a reader must review to warn. A flag
	// value that cannot be right is an error of the flag's Set, so that it reads as a usage error.
	Discover(fs *flag.FlagSet) func(ctx context.Context, w, warn io.Writer) error
}

// EngineConfig is a decoded engine block.
type EngineConfig interface {
	// Open connects to the engine the block describes: the driver's Conn, which adapters.NewEngine
	// makes an Engine of.
	Open(ctx context.Context, opts OpenOptions) (Conn, error)
}

// OpenOptions is what the caller adds to an engine block when it opens it.
type OpenOptions struct {
	// Env is where the engine's own ecosystem variables are read (TEMPORAL_ADDRESS, AWS_REGION,
	// credentials): values an engine block leaves out come from there. Nil is the process's
	// environment.
	Env Env
	// Retried, when set, is told of every retry the engine's client makes on its own (the AWS
	// SDK's), and whether the engine throttled the call retried. Engines whose client does not
	// retry on its own never call it.
	Retried func(throttled bool)
}

// ValidEnvName reports whether name can name an environment variable: a letter or underscore,
// then letters, digits and underscores.
func ValidEnvName(name string) bool { return envNameRE.MatchString(name) }

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Env is an environment in the form os.Environ gives it, "KEY=value" entries, where the last
// entry of a key wins. A nil Env is the process's own environment.
type Env []string

// LookupEnv does what os.LookupEnv does, in e.
func (e Env) LookupEnv(key string) (string, bool) {
	if e == nil {
		return os.LookupEnv(key)
	}
	for _, kv := range slices.Backward(e) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Environ does what os.Environ does, in e.
func (e Env) Environ() []string {
	if e == nil {
		return os.Environ()
	}
	return slices.Clone(e)
}

// With returns e with more "KEY=value" entries, which win over e's own.
func (e Env) With(kv ...string) Env {
	return append(e.Environ(), kv...)
}

// A Permissioner is a driver that drafts the least-privilege permissions its engines need in
// their cloud (the Step Functions driver writes IAM policies), for `taskgate iam-policy`.
type Permissioner interface {
	Driver
	// Permissions declares the command's flags on fs, for what a mapping cannot tell about the
	// engines (which state machines are Express), and returns what the command runs once they are
	// parsed: the policies of uses, engine blocks of the driver's kind, one per identity.
	// Every Permissioner declares its flags on the one flag set of the command, so a flag name
	// belongs to one driver: declaring a name that another driver has declared panics, as flag
	// does.
	Permissions(fs *flag.FlagSet) func(uses []EngineUse) ([]Policy, error)
}

// Policy is what one identity may do in an engine's cloud.
type Policy struct {
	// Identity is whose policy it is: "taskgate" for taskgate's own identity, else one that an
	// engine block has taskgate assume (for Step Functions, a role's ARN).
	Identity string
	// Document is the policy as the cloud reads it, such as an IAM policy document.
	Document json.RawMessage
}

// OwnIdentity is the Identity of taskgate's own policy.
const OwnIdentity = "taskgate"

// EngineUse is one engine block and what the mapping's tools do with it.
type EngineUse struct {
	Name   string
	Config EngineConfig
	// Targets are the targets of the engine's tools.
	Targets []Target
}
