package mapping

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/taskgate/taskgate/adapters"
)

// The tests of this package read engine blocks and targets through two drivers of their own,
// which use every part of adapters.Block: the loader must not know any real engine.
//
//	engines: {a: {alpha: {url: http://x, wait: 1s, strict: true, limits: {max: "3"}}}, b: {beta: {zone: z1}}}
//	tools:   [{..., engine: a, work: {name: A, timeout: 1m}}, {..., engine: b, queue: Q}]
func init() {
	adapters.Register("alpha", alpha{})
	adapters.Register("beta", beta{})
}

type alpha struct{}

// alphaConfig is a decoded alpha block.
type alphaConfig struct {
	URL    string
	Wait   time.Duration
	Strict bool
	Max    string
	// Limits is whether the block has limits.
	Limits bool
}

func (alphaConfig) Open(context.Context, adapters.OpenOptions) (adapters.Conn, error) {
	return nil, errors.New("alpha engines are for reading mapping files only")
}

func (alpha) Info() adapters.DriverInfo {
	return adapters.DriverInfo{
		Title: "Alpha", TargetKey: "work",
		EngineExample: "alpha: {url: http://x}", TargetExample: "work: {name: ...}",
		Schema: []byte(`{
			"engine": {"description": "An alpha engine.", "type": "object", "additionalProperties": false,
				"properties": {"url": {"type": "string"}, "wait": {"$ref": "#/$defs/duration"}, "strict": {"type": "boolean"},
					"limits": {"type": "object", "properties": {"max": {"type": "string"}}}}},
			"target": {"description": "The work to start.", "type": "object", "required": ["name"],
				"properties": {"name": {"type": "string"}, "timeout": {"$ref": "#/$defs/duration"}}}}`),
	}
}

func (alpha) DecodeEngine(b adapters.Block) adapters.EngineConfig {
	var c alphaConfig
	if url, ok := b.Required("url", "the alpha server, like http://x"); ok {
		if strings.HasPrefix(url, "http://") {
			c.URL = url
		} else {
			b.Errorf("url", "like http://x", "%q is not an http:// URL", url)
		}
	}
	c.Wait, _ = b.Duration("wait")
	c.Strict, _ = b.Bool("strict")
	if l, ok := b.Block("limits", "write limits: {} for the defaults"); ok {
		c.Limits = true
		c.Max, _ = l.String("max")
		if !l.Has("max") {
			l.Errorf("", "add max: N", "sets no limit")
		}
	}
	return c
}

// alphaWork is the Spec of an alpha target.
type alphaWork struct{ timeout time.Duration }

func (alpha) DecodeTarget(tool adapters.Block) adapters.Target {
	var t adapters.Target
	work, ok := tool.Block("work", "write work: {name: ...}")
	if !ok {
		return t
	}
	t.Name, _ = work.Required("name", "the work to start")
	timeout, _ := work.Duration("timeout")
	t.Spec = alphaWork{timeout}
	return t
}

func (alpha) FormatRef(r adapters.Ref) string { return "alpha:" + r.ID }

func (alpha) ParseRef(id string) (adapters.Ref, error) {
	rest, ok := strings.CutPrefix(id, "alpha:")
	if !ok || rest == "" {
		return adapters.Ref{}, errors.New("not an alpha id")
	}
	return adapters.Ref{ID: rest}, nil
}

type beta struct{}

type betaConfig struct{ Zone string }

func (betaConfig) Open(context.Context, adapters.OpenOptions) (adapters.Conn, error) {
	return nil, errors.New("beta engines are for reading mapping files only")
}

func (beta) Info() adapters.DriverInfo {
	return adapters.DriverInfo{
		Title: "Beta", TargetKey: "queue",
		EngineExample: "beta: {}", TargetExample: "queue: NAME",
		Schema: []byte(`{
			"engine": {"description": "A beta engine.", "type": "object", "additionalProperties": false,
				"properties": {"zone": {"type": "string"}}},
			"target": {"description": "The queue to put work on.", "type": "string", "minLength": 1}}`),
	}
}

func (beta) DecodeEngine(b adapters.Block) adapters.EngineConfig {
	var c betaConfig
	c.Zone, _ = b.String("zone")
	return c
}

func (beta) DecodeTarget(tool adapters.Block) adapters.Target {
	q, _ := tool.Required("queue", "the queue to put work on")
	return adapters.Target{Name: q}
}

func (beta) FormatRef(r adapters.Ref) string { return r.ID }

func (beta) ParseRef(id string) (adapters.Ref, error) { return adapters.Ref{ID: id}, nil }
