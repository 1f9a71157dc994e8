package restate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/taskgate/taskgate/adapters/askwire"
	"github.com/taskgate/taskgate/adapters/driver"
	"github.com/taskgate/taskgate/adapters/restate/restatewire"
)

// answerLimit bounds the body that resolves an awakeable: Restate's limit on one message
// (networking.message-size-limit, 32 MiB by default), less 64 KiB for the rest of the journal
// entry the answer becomes. Over 32 MiB the ingress cut the connection while the body was sent
// (measured on Restate 1.7), which read as the engine being unreachable; an answer of 32 MiB less
// 64 KiB was taken and echoed.
var answerLimit = driver.AnswerLimit{Engine: "Restate", Bytes: 32<<20 - 64<<10}

// answerBody checks an answer and encodes it as the handler reads it.
func answerBody(a driver.Answer) ([]byte, error) {
	if err := a.Check(); err != nil {
		return nil, err
	}
	reply := askwire.Reply{Action: a.Action}
	if a.Action == driver.ActionAccept {
		reply.Content = a.Content
	}
	body, err := json.Marshal(reply)
	if err != nil {
		return nil, fmt.Errorf("encoding the answer: %w", err)
	}
	if err := answerLimit.Check(len(body)); err != nil {
		return nil, err
	}
	return body, nil
}

// answerTaken bounds how long Answer waits for the handler to take an answer it delivered.
const answerTaken = 10 * time.Second

// Answer resolves the awakeable of the open question key with the answer, through the ingress,
// then waits (up to answerTaken) until the handler has taken it: until the question is no longer
// open, so that the next read shows it answered. The handler may be suspended, and Restate then
// has to invoke it again first; an answer it has not taken by then is still delivered.
func (e *conn) Answer(ctx context.Context, t driver.Target, r driver.Ref, key string, a driver.Answer) error {
	what := fmt.Sprintf("answer %q of %v", key, r)
	body, err := answerBody(a)
	if err != nil {
		return fmt.Errorf("restate: %s: %w", what, err)
	}
	inv, err := e.read(ctx, what, t, r)
	if err != nil {
		return err
	}
	q, ok := inv.open(key)
	if !ok {
		if inv.Status == completed {
			return fmt.Errorf("restate: %s: %w: the invocation has completed (%s), no question is open", what, driver.ErrNotFound, inv.native())
		}
		return fmt.Errorf("restate: %s: %w: no open question %q: it was answered, or never asked", what, driver.ErrNotFound, key)
	}
	status, resp, err := e.call(ctx, what, http.MethodPost, e.ingress+"/restate/awakeables/"+url.PathEscape(q.Awakeable)+"/resolve", nil, body)
	if err != nil {
		return err
	}
	if status != http.StatusOK && status != http.StatusAccepted {
		return refused(what, status, resp)
	}
	deadline := time.Now().Add(answerTaken)
	for time.Now().Before(deadline) {
		if inv, err = e.read(ctx, what, t, r); err != nil {
			return err
		}
		if _, open := inv.open(key); !open {
			return nil
		}
		if err := driver.Sleep(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("restate: %s: the answer was delivered; waiting for the handler to take it: %w", what, err)
		}
	}
	return nil
}

// open finds the open question key of a running invocation.
func (inv invocation) open(key string) (restatewire.Question, bool) {
	open, _ := inv.questions()
	i := slices.IndexFunc(open, func(q restatewire.Question) bool { return q.Key == key })
	if i < 0 {
		return restatewire.Question{}, false
	}
	return open[i], true
}
