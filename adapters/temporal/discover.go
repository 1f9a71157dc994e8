package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	querypb "go.temporal.io/api/query/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/contrib/envconfig"

	"github.com/taskgate/taskgate/adapters/draft"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/temporal/temporalwire"
)

var _ driver.Discoverer = Driver{}

const (
	// metadataQuery is the query every Temporal SDK's worker answers with what a workflow
	// declares: its signal, query and update handlers.
	metadataQuery = "__temporal_workflow_metadata"
	// metadataWait bounds the wait for a worker to answer it: a type whose workers are gone
	// leaves the query unanswered.
	metadataWait = 5 * time.Second
	// maxTypes and maxQueues bound the listing, one visibility call for each type and queue.
	maxTypes  = 1000
	maxQueues = 100
)

// checked is a string flag whose value is checked when it is set.
type checked struct {
	v     *string
	check func(string) error
}

func (c checked) String() string {
	if c.v == nil {
		return ""
	}
	return *c.v
}

func (c checked) Set(s string) error {
	if err := c.check(s); err != nil {
		return err
	}
	*c.v = s
	return nil
}

// discoverFlags are the flags of `taskgate discover temporal`.
type discoverFlags struct {
	block                                 engineBlock
	tls                                   bool
	caFile, certFile, keyFile, serverName string
	profile, prefix                       string
	since                                 time.Duration
	infer                                 *draft.Inference
}

// Discover serves `taskgate discover temporal`: it drafts a mapping file with one tool per
// workflow type that started in the namespace over a window (--since), on the task queue of its
// most recent workflow (the others named in a comment), with what a running workflow's worker
// declares (the metadata query: signals, queries, updates), marked when it asks questions
// through taskgateflow. The connection is an engine block's: --address, --namespace, TLS and
// --api-key-env over the Temporal CLI's environment and profile (--profile).
func (Driver) Discover(fs *flag.FlagSet) func(ctx context.Context, w, warn io.Writer) error {
	f := &discoverFlags{}
	fs.Var(checked{&f.block.address, func(s string) error {
		if !validHostPort(s) {
			return errors.New(addressHint)
		}
		return nil
	}}, "address", "the Temporal frontend `host:port` (default: the Temporal CLI's environment or profile, else 127.0.0.1:7233)")
	fs.StringVar(&f.block.namespace, "namespace", "", "the namespace (default: the Temporal CLI's environment or profile, else default)")
	fs.BoolVar(&f.tls, "tls", false, "connect with TLS (implied by the other --tls-* flags)")
	fs.StringVar(&f.caFile, "tls-ca-file", "", "the `FILE` of the CA certificate that signs the frontend's")
	fs.StringVar(&f.certFile, "tls-cert-file", "", "the client certificate `FILE`, for mutual TLS (with --tls-key-file)")
	fs.StringVar(&f.keyFile, "tls-key-file", "", "the client key `FILE`, for mutual TLS (with --tls-cert-file)")
	fs.StringVar(&f.serverName, "tls-server-name", "", "the server name the frontend's certificate must have")
	fs.Var(checked{&f.block.apiKeyEnv, func(s string) error {
		if !driver.ValidEnvName(s) {
			return errors.New("want the NAME of the variable that holds the key, like TEMPORAL_API_KEY")
		}
		return nil
	}}, "api-key-env", "the `NAME` of the variable that holds an API key (Temporal Cloud)")
	fs.StringVar(&f.profile, "profile", "", "the Temporal CLI profile to read (TEMPORAL_PROFILE)")
	fs.StringVar(&f.prefix, "prefix", "", "only workflow types whose name starts with this")
	f.since = 7 * 24 * time.Hour
	fs.Var(positiveDuration{&f.since}, "since", "look at the workflows started over the last `DURATION`, like 72h")
	f.infer = draft.InferFlags(fs)
	return f.run
}

// positiveDuration is a flag that holds a positive Go duration.
type positiveDuration struct{ d *time.Duration }

func (p positiveDuration) String() string {
	if p.d == nil {
		return ""
	}
	return p.d.String()
}

func (p positiveDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return errors.New("want a positive duration like 72h")
	}
	*p.d = d
	return nil
}

func (f *discoverFlags) run(ctx context.Context, w, warn io.Writer) error {
	if err := f.tlsBlock(); err != nil {
		return err
	}
	var env driver.Env
	if f.profile != "" {
		env = env.With("TEMPORAL_PROFILE=" + f.profile)
	}
	opened, err := f.block.Open(ctx, driver.OpenOptions{Env: env})
	if err != nil {
		return err
	}
	e := opened.(*conn)
	defer e.Close()
	from := time.Now().Add(-f.since)
	found, err := e.discoverTypes(ctx, warn, from, f.prefix)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return fmt.Errorf("no workflow whose type starts with %q started in namespace %s at %s over the last %v", f.prefix, e.namespace, e.address, f.since)
	}
	for i := range found {
		t := Workflow(found[i].typ, found[i].queues[0], 0)
		if found[i].samples, err = draft.Sample(ctx, e, t, f.infer.Executions); err != nil {
			return err
		}
	}
	return f.writeDraft(w, warn, e, found)
}

// tlsBlock sets the engine block's tls from the flags, as the tls key of a block reads them.
func (f *discoverFlags) tlsBlock() error {
	if (f.certFile == "") != (f.keyFile == "") {
		return errors.New("--tls-cert-file and --tls-key-file go together: set both for mutual TLS, or neither")
	}
	if !f.tls && f.caFile == "" && f.certFile == "" && f.serverName == "" {
		return nil
	}
	abs := func(p string) (string, error) {
		if p == "" {
			return "", nil
		}
		return filepath.Abs(p) // the draft may be read from another directory
	}
	t := &envconfig.ClientConfigTLS{ServerName: f.serverName}
	var err error
	if t.ServerCACertPath, err = abs(f.caFile); err != nil {
		return err
	}
	if t.ClientCertPath, err = abs(f.certFile); err != nil {
		return err
	}
	if t.ClientKeyPath, err = abs(f.keyFile); err != nil {
		return err
	}
	f.block.tls = t
	return nil
}

// workflowType is one workflow type that discover found.
type workflowType struct {
	typ string
	// queues are the task queues its workflows ran on: first the one of the most recent,
	// then the others, sorted.
	queues []string
	// asks: its workflows ask questions through taskgateflow (a memo of questions, or the
	// Update or signal that answers them).
	asks bool
	// meta is what its worker declares, nil when no running workflow's worker answered.
	meta    *sdkpb.WorkflowDefinition
	samples []json.RawMessage
}

// discoverTypes finds the workflow types that started since from, one visibility call per type
// (each one leaves out the types found before it), then their task queues and metadata.
func (e *conn) discoverTypes(ctx context.Context, warn io.Writer, from time.Time, prefix string) ([]workflowType, error) {
	window := "StartTime >= '" + from.UTC().Format(time.RFC3339) + "'"
	base := window
	if prefix != "" {
		if err := listable("--prefix", prefix); err != nil {
			return nil, err
		}
		base += " AND WorkflowType STARTS_WITH '" + prefix + "'"
	}
	var found []workflowType
	var seen []string
	for {
		query := base
		if len(seen) > 0 {
			query += " AND WorkflowType NOT IN (" + strings.Join(seen, ", ") + ")"
		}
		info, err := e.firstListed(ctx, "list the workflow types", query)
		if err != nil || info == nil {
			slices.SortFunc(found, func(a, b workflowType) int { return strings.Compare(a.typ, b.typ) })
			return found, err
		}
		typ := info.GetType().GetName()
		if err := listable("workflow type", typ); err != nil {
			return nil, fmt.Errorf("%w; leave it out with --prefix", err)
		}
		if len(found) == maxTypes {
			return nil, fmt.Errorf("more than %d workflow types started in the window: narrow it with --prefix or --since", maxTypes)
		}
		wt, err := e.describeType(ctx, warn, window, info)
		if err != nil {
			return nil, err
		}
		found = append(found, wt)
		seen = append(seen, "'"+typ+"'")
	}
}

// listable checks that a name can go in a visibility query as a string.
func listable(what, name string) error {
	if strings.ContainsAny(name, `'\`) {
		return fmt.Errorf("%s %q has ' or \\ in it: taskgate cannot write it in a visibility query", what, name)
	}
	return nil
}

// firstListed is the first workflow visibility lists for query (running ones first, then the
// latest closed), nil when there is none.
func (e *conn) firstListed(ctx context.Context, what, query string) (*workflowpb.WorkflowExecutionInfo, error) {
	resp, err := e.svc.ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: e.namespace, PageSize: 1, Query: query})
	if err != nil {
		return nil, e.fail(ctx, what, err)
	}
	if xs := resp.GetExecutions(); len(xs) > 0 {
		return xs[0], nil
	}
	return nil, nil
}

// describeType finds the task queues of a type's workflows in the window (one call per queue,
// latest first: the most recent workflow, first), and what a running one's worker declares.
func (e *conn) describeType(ctx context.Context, warn io.Writer, window string, latest *workflowpb.WorkflowExecutionInfo) (workflowType, error) {
	wt := workflowType{typ: latest.GetType().GetName(), queues: []string{latest.GetTaskQueue()}, asks: asksInMemo(latest)}
	what := "list the task queues of " + wt.typ
	for {
		if err := listable("task queue", wt.queues[len(wt.queues)-1]); err != nil {
			return workflowType{}, err
		}
		if len(wt.queues) > maxQueues {
			return workflowType{}, fmt.Errorf("workflows of type %s ran on more than %d task queues", wt.typ, maxQueues)
		}
		info, err := e.firstListed(ctx, what, window+" AND WorkflowType = '"+wt.typ+"' AND TaskQueue NOT IN ('"+strings.Join(wt.queues, "', '")+"')")
		if err != nil {
			return workflowType{}, err
		}
		if info == nil {
			break
		}
		wt.queues = append(wt.queues, info.GetTaskQueue())
		wt.asks = wt.asks || asksInMemo(info)
	}
	slices.Sort(wt.queues[1:])
	running, err := e.firstListed(ctx, "find a running "+wt.typ, "WorkflowType = '"+wt.typ+"' AND ExecutionStatus = 'Running'")
	if err != nil || running == nil {
		return wt, err
	}
	if wt.meta, err = e.metadata(ctx, running); err != nil {
		fmt.Fprintf(warn, "taskgate: warning: %s: no worker answered the metadata query of its running workflow %s (%v): the draft does not list its signals, queries and updates\n",
			wt.typ, running.GetExecution().GetWorkflowId(), err)
	}
	wt.asks = wt.asks || answersQuestions(wt.meta)
	return wt, nil
}

// asksInMemo reports whether a workflow recorded taskgateflow questions in its memo.
func asksInMemo(info *workflowpb.WorkflowExecutionInfo) bool {
	_, ok := info.GetMemo().GetFields()[temporalwire.MemoQuestions]
	return ok
}

// answersQuestions reports whether a workflow declares the Update or the signal that delivers
// taskgateflow answers.
func answersQuestions(d *sdkpb.WorkflowDefinition) bool {
	named := func(defs []*sdkpb.WorkflowInteractionDefinition, name string) bool {
		return slices.ContainsFunc(defs, func(d *sdkpb.WorkflowInteractionDefinition) bool { return d.GetName() == name })
	}
	return named(d.GetUpdateDefinitions(), temporalwire.UpdateName) || named(d.GetSignalDefinitions(), temporalwire.SignalName)
}

// metadata asks a running workflow's worker what the workflow declares (the query every SDK's
// worker answers), waiting at most metadataWait.
func (e *conn) metadata(ctx context.Context, run *workflowpb.WorkflowExecutionInfo) (*sdkpb.WorkflowDefinition, error) {
	qctx, cancel := context.WithTimeout(ctx, metadataWait)
	defer cancel()
	resp, err := e.svc.QueryWorkflow(qctx, &workflowservice.QueryWorkflowRequest{
		Namespace: e.namespace, Execution: run.GetExecution(), Query: &querypb.WorkflowQuery{QueryType: metadataQuery},
	})
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case qctx.Err() != nil:
		return nil, fmt.Errorf("no answer within %v", metadataWait)
	case err != nil:
		return nil, err
	case resp.GetQueryRejected() != nil:
		return nil, fmt.Errorf("the query was rejected: the workflow is %v", resp.GetQueryRejected().GetStatus())
	}
	var m *sdkpb.WorkflowMetadata
	if err := e.dc.FromPayloads(resp.GetQueryResult(), &m); err != nil {
		return nil, fmt.Errorf("its answer is not workflow metadata: %w", err)
	}
	return m.GetDefinition(), nil
}

func (f *discoverFlags) writeDraft(w, warn io.Writer, e *conn, found []workflowType) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Drafted by `taskgate discover temporal` from the workflows started in namespace %s over the %v before it ran.\n", draft.Quote(e.namespace), f.since)
	b.WriteString("# Review every tool (names, descriptions, task queues, input schemas) and check the result with\n# `taskgate validate --engines` before serving it.\n")
	if f.profile != "" {
		fmt.Fprintf(&b, "# Serve it with TEMPORAL_PROFILE=%s: the engine block leaves TLS and the API key to that profile.\n", f.profile)
	}
	fmt.Fprintf(&b, "version: 1\nengines:\n  temporal:\n    temporal:\n      address: %s\n      namespace: %s\n", draft.Quote(e.address), draft.Quote(e.namespace))
	if t := f.block.tls; t != nil {
		var kv []string
		for _, p := range [][2]string{{"caFile", t.ServerCACertPath}, {"certFile", t.ClientCertPath}, {"keyFile", t.ClientKeyPath}, {"serverName", t.ServerName}} {
			if p[1] != "" {
				kv = append(kv, p[0]+": "+draft.Quote(p[1]))
			}
		}
		fmt.Fprintf(&b, "      tls: {%s}\n", strings.Join(kv, ", "))
	}
	if f.block.apiKeyEnv != "" {
		fmt.Fprintf(&b, "      apiKeyEnv: %s\n", draft.Quote(f.block.apiKeyEnv))
	}
	b.WriteString("tools:\n")
	taken := map[string]bool{}
	for _, wt := range found {
		if err := wt.write(&b, warn, draft.SnakeName(wt.typ, taken), *f.infer); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (wt workflowType) write(b *strings.Builder, warn io.Writer, name string, infer draft.Inference) error {
	desc := "Runs the Temporal workflow " + wt.typ + "."
	if wt.asks {
		desc += " It may ask the caller questions while it runs."
	}
	fmt.Fprintf(warn, "taskgate: warning: %s has no description (Temporal keeps none): the draft says only what it runs\n", wt.typ)
	fmt.Fprintf(b, "  - name: %s\n    description: %s\n    engine: temporal\n", name, draft.Quote(desc))
	if len(wt.queues) > 1 {
		others := make([]string, len(wt.queues)-1)
		for i, q := range wt.queues[1:] {
			others[i] = draft.Quote(q)
		}
		fmt.Fprintf(b, "    # Also ran on task queue %s: the draft uses %s, the queue of its most recent workflow.\n", strings.Join(others, ", "), draft.Quote(wt.queues[0]))
		fmt.Fprintf(warn, "taskgate: warning: %s ran on %d task queues: the draft uses %s, the queue of its most recent workflow; check that its workers poll it\n",
			wt.typ, len(wt.queues), wt.queues[0])
	}
	fmt.Fprintf(b, "    workflow: {type: %s, taskQueue: %s}\n", draft.Quote(wt.typ), draft.Quote(wt.queues[0]))
	if wt.asks {
		b.WriteString("    # Asks questions through taskgateflow: taskgate shows them to the caller as the task's input requests.\n")
	}
	if d := declared(wt.meta); d != "" {
		b.WriteString("    # Its worker declares " + d + ".\n")
	}
	in := draft.Schema{Inference: infer, Samples: wt.samples, Missing: "has no input schema (Temporal keeps none)"}
	if infer.Executions == 0 {
		in.Hint = " (write one, or infer one with --infer N)"
	}
	return in.Write(b, warn, wt.typ)
}

// declared lists a workflow's signals, queries and updates, with their descriptions, for a
// comment; "" when it declares none. The SDKs' own (__stack_trace...) are left out.
func declared(d *sdkpb.WorkflowDefinition) string {
	var parts []string
	for _, kind := range []struct {
		name string
		defs []*sdkpb.WorkflowInteractionDefinition
	}{{"signals", d.GetSignalDefinitions()}, {"queries", d.GetQueryDefinitions()}, {"updates", d.GetUpdateDefinitions()}} {
		var names []string
		for _, x := range kind.defs {
			if strings.HasPrefix(x.GetName(), "__") {
				continue
			}
			n := draft.Quote(x.GetName())
			if desc := strings.Join(strings.Fields(x.GetDescription()), " "); desc != "" {
				n += " (" + desc + ")"
			}
			names = append(names, n)
		}
		if len(names) > 0 {
			slices.Sort(names)
			parts = append(parts, kind.name+" "+strings.Join(names, ", "))
		}
	}
	return strings.Join(parts, "; ")
}
