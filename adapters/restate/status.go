package restate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/restate/restatewire"
)

// Restate's invocation statuses, as its sys_invocation table names them.
const (
	pending    = "pending"   // waiting for its virtual object or workflow to be free
	scheduled  = "scheduled" // sent with a delay
	ready      = "ready"     // waiting for the invoker
	running    = "running"
	backingOff = "backing-off"
	suspended  = "suspended"
	paused     = "paused"
	completed  = "completed"
)

// invocation is one row of sys_invocation, with the task's questions and progress from its
// object's or workflow's state (null for plain services).
type invocation struct {
	ID            string     `json:"id"`
	Service       string     `json:"target_service_name"`
	Key           string     `json:"target_service_key"`
	Handler       string     `json:"target_handler_name"`
	Idempotency   string     `json:"idempotency_key"`
	Status        string     `json:"status"`
	Result        string     `json:"completion_result"`
	Failure       string     `json:"completion_failure"`
	Created       time.Time  `json:"created_at"`
	Modified      time.Time  `json:"modified_at"`
	Completed     *time.Time `json:"completed_at"`
	Attempts      int        `json:"retry_count"`
	LastFailure   string     `json:"last_failure"`
	NextRetry     *time.Time `json:"next_retry_at"`
	Pinned        string     `json:"pinned_deployment_id"`
	AttemptServer string     `json:"last_attempt_server"`
	Questions     *string    `json:"questions"`
	Progress      *string    `json:"progress"`
}

// invocationColumns are the columns of sys_invocation that an invocation decodes.
const invocationColumns = "id, target_service_name, target_service_key, target_handler_name, idempotency_key, status, " +
	"completion_result, completion_failure, created_at, modified_at, completed_at, retry_count, last_failure, next_retry_at, " +
	"pinned_deployment_id, last_attempt_server"

// read finds the invocation r names, with a workflow's or object's questions and progress: one
// query (and, once per service, its type). A Ref with an
// invocation id reads that invocation, and only if it is the task's; a KeyRef finds the
// invocation by its task key (an idempotency key, or a workflow's or object's key).
func (e *conn) read(ctx context.Context, what string, t driver.Target, r driver.Ref) (invocation, error) {
	h, err := handlerOf(t)
	if err != nil {
		return invocation{}, err
	}
	p, ok := parseRef(r)
	if !ok || p.service != h.service || p.handler != h.handler {
		return invocation{}, errNoInvocation(what, r)
	}
	svc, err := e.service(ctx, what, h.service)
	if err != nil {
		return invocation{}, err
	}
	where := "id = " + literal(p.invocation)
	if p.invocation == "" {
		where = "target_service_name = " + literal(h.service) + " AND target_handler_name = " + literal(h.handler) +
			" AND " + svc.keyColumn() + " = " + literal(p.key)
	}
	columns := invocationColumns
	if svc.keyed() {
		// Only workflows and objects have state (a third of the query's time here).
		state := func(key string) string {
			return "(SELECT value_utf8 FROM state WHERE service_name = " + literal(h.service) + " AND service_key = " + literal(p.key) + " AND key = " + literal(key) + ")"
		}
		columns += ", " + state(restatewire.StateQuestions) + " AS questions, " + state(restatewire.StateProgress) + " AS progress"
	}
	sql := "SELECT " + columns + " FROM sys_invocation WHERE " + where + " ORDER BY created_at DESC LIMIT 1"
	var rows []invocation
	if err := e.query(ctx, what, sql, &rows); err != nil {
		return invocation{}, err
	}
	// The task key is checked here too: a Ref's invocation id is Restate's, not taskgate's.
	if len(rows) == 0 || rows[0].Service != h.service || rows[0].Handler != h.handler || rows[0].taskKey() != p.key {
		return invocation{}, errNoInvocation(what, r)
	}
	return rows[0], nil
}

// taskKey is the invocation's task key: its key (workflows, objects), else its idempotency key.
func (inv invocation) taskKey() string {
	if inv.Key != "" {
		return inv.Key
	}
	return inv.Idempotency
}

// Describe reads the invocation's status, and a workflow's or object's questions and progress,
// with one query.
func (e *conn) Describe(ctx context.Context, t driver.Target, r driver.Ref) (driver.Status, error) {
	inv, err := e.read(ctx, "describe "+r.String(), t, r)
	if err != nil {
		return driver.Status{}, err
	}
	return inv.status(), nil
}

// status maps the row onto the contract (the table in docs/restate.md).
func (inv invocation) status() driver.Status {
	st := driver.Status{Native: inv.native(), Started: inv.Created, Updated: inv.Modified}
	if inv.Completed != nil {
		st.Updated = *inv.Completed
	}
	switch inv.Status {
	case completed:
		st.State = inv.ending()
		st.Message = inv.Failure
	case pending:
		st.State, st.Message = driver.Submitted, "waiting for the invocations before it on its key to end"
	case scheduled:
		st.State, st.Message = driver.Submitted, "scheduled to start later"
	case ready:
		st.State, st.Message = driver.Submitted, "waiting to be sent to its deployment"
	default:
		st.State = driver.Working
		if inv.Pinned == "" && inv.AttemptServer == "" {
			// No deployment has answered it yet: it has not started.
			st.State, st.Message = driver.Submitted, "waiting for a deployment to take it"
			if inv.Attempts > 0 && inv.LastFailure != "" {
				st.Message += "; " + inv.failing()
			}
			return st
		}
		inv.running(&st)
	}
	return st
}

// native is the status as Restate names it, and a completed invocation's ending as its UI does:
// succeeded, failed, cancelled or killed.
func (inv invocation) native() string {
	if inv.Status != completed {
		return inv.Status
	}
	switch inv.ending() {
	case driver.Succeeded:
		return "succeeded"
	case driver.Cancelled:
		if inv.Failure == killed {
			return "killed"
		}
		return "cancelled"
	}
	return "failed"
}

// abortedCode is the code of Restate's cancellations and kills (its ABORTED, 409); killed is the
// failure of a kill.
const (
	abortedCode = 409
	killed      = "[409] killed"
)

// ending is how a completed invocation ended: cancelled (Restate's 409, for cancel and kill),
// failed, or succeeded.
func (inv invocation) ending() driver.State {
	switch {
	case inv.Result == "success":
		return driver.Succeeded
	case strings.HasPrefix(inv.Failure, "["+strconv.Itoa(abortedCode)+"]"):
		return driver.Cancelled
	}
	return driver.Failed
}

// Bounds of what a status message repeats.
const maxFailureText = 200

// running fills in what a started invocation says about itself: its open questions and
// progress, else its retries and their last failure.
func (inv invocation) running(st *driver.Status) {
	open, err := inv.questions()
	if err != nil {
		st.Message = err.Error()
		return
	}
	for _, q := range open {
		st.Inputs = append(st.Inputs, q.Asked())
	}
	var progress string
	if inv.Progress != nil && json.Unmarshal([]byte(*inv.Progress), &progress) != nil {
		progress = ""
	}
	switch {
	case len(st.Inputs) > 0:
		st.State = driver.InputRequired
		st.Message = progress
		if st.Message == "" {
			st.Message = driver.Awaiting(st.Inputs)
		}
	case inv.Status == backingOff || inv.Status == paused:
		st.Message = inv.failing()
		if progress != "" {
			st.Message = progress + " (" + st.Message + ")"
		}
	default:
		st.Message = progress
	}
}

// questions are the open questions of a running invocation; questions another invocation of the
// same key recorded are not open.
func (inv invocation) questions() ([]restatewire.Question, error) {
	if inv.Status == completed || inv.Questions == nil {
		return nil, nil
	}
	var qs restatewire.Questions
	if err := json.Unmarshal([]byte(*inv.Questions), &qs); err != nil {
		return nil, fmt.Errorf("the handler's questions (state %s) cannot be read: %v", restatewire.StateQuestions, err)
	}
	if qs.Invocation != inv.ID {
		return nil, nil
	}
	return qs.Open, nil
}

// failing says how an invocation that is retried is failing: its attempts and last failure.
func (inv invocation) failing() string {
	msg := fmt.Sprintf("attempt %d failed", inv.Attempts)
	if inv.Status == paused {
		msg = fmt.Sprintf("paused after %d attempts", inv.Attempts)
	}
	if inv.LastFailure != "" {
		first, _, _ := strings.Cut(inv.LastFailure, "\n")
		msg += ", last failure: " + clip(first, maxFailureText)
	}
	if inv.Status == backingOff && inv.NextRetry != nil {
		msg += "; next attempt at " + inv.NextRetry.UTC().Format(time.TimeOnly)
	}
	return msg
}

// clip cuts s to n characters, marking the cut.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// Outcome reads how the invocation ended: its status from the admin API, its output (or its
// failure's name and message) from the ingress.
func (e *conn) Outcome(ctx context.Context, t driver.Target, r driver.Ref) (driver.Outcome, error) {
	what := "read the outcome of " + r.String()
	inv, err := e.read(ctx, what, t, r)
	if err != nil {
		return driver.Outcome{}, err
	}
	if inv.Status != completed {
		return driver.Outcome{}, fmt.Errorf("restate: %s: %w (%s); wait for it or poll its status", what, driver.ErrNotEnded, inv.Status)
	}
	status, body, err := e.call(ctx, what, http.MethodGet, e.ingress+"/restate/invocation/"+url.PathEscape(inv.ID)+"/output", nil, nil)
	if err != nil {
		return driver.Outcome{}, err
	}
	out := driver.Outcome{State: inv.ending(), Native: inv.native()}
	switch {
	case status == http.StatusOK && out.State == driver.Succeeded:
		out = driver.SucceededWith(out.Native, body)
	case status == http.StatusNotFound:
		return driver.Outcome{}, errNoInvocation(what, r)
	case status >= 400 && status < 600 && out.State != driver.Succeeded:
		f := decodeError(body)
		out.Error, out.Cause = f.Metadata[restatewire.MetadataError], f.Message
		if out.Error == "" {
			out.Error = "TerminalError"
		}
	default:
		return driver.Outcome{}, refused(what, status, body)
	}
	out.Status = inv.status()
	return out, nil
}

// Cancel stops the invocation as its target says: Restate's cancel (the handler sees it at its
// next step) or kill. Restate's cancel takes no reason: it is not kept. ErrEnded once it has
// completed.
func (e *conn) Cancel(ctx context.Context, t driver.Target, r driver.Ref, reason string) error {
	what := "cancel " + r.String()
	h, err := handlerOf(t)
	if err != nil {
		return err
	}
	inv, err := e.read(ctx, what, t, r)
	if err != nil {
		return err
	}
	if inv.Status == completed {
		return fmt.Errorf("restate: %s: %w (%s)", what, driver.ErrEnded, inv.native())
	}
	status, body, err := e.call(ctx, what, http.MethodPatch, e.admin+"/invocations/"+url.PathEscape(inv.ID)+"/"+string(h.stop), nil, nil)
	switch {
	case err != nil:
		return err
	case status == http.StatusOK || status == http.StatusAccepted:
		return nil
	case status == http.StatusConflict:
		return fmt.Errorf("restate: %s: %w: %s", what, driver.ErrEnded, decodeError(body).Message)
	}
	return refused(what, status, body)
}
