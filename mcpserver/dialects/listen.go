package dialects

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgate/taskgate/internal/strictjson"
	"github.com/taskgate/taskgate/tasks"
)

// subscriptions/listen with notifications.taskIds (the tasks extension on 2026-07-28): the server
// acknowledges the ids it will report and sends notifications/tasks, each the task as tasks/get
// answers it, on every change of its status, on the listen request's own stream. The transports
// answer the method themselves (go-sdk's own handler acknowledges only list changes) and hand
// each listen here with its stream.

// keepAliveEvery is how often an idle listen stream tells proxies on the way that it is alive,
// well inside the idle timeouts of common proxies and load balancers (60 s and more).
const keepAliveEvery = 15 * time.Second

// filter is what a listener asks for: taskIds, nil when it asked for no task (the list changes and
// resource updates it may ask for are not served: taskgate declares neither).
type filter struct{ taskIDs []string }

func errListenParams(format string, a ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params of subscriptions/listen: " + fmt.Sprintf(format, a...)}
}

// checkParams refuses params that are not an object (nil), or whose _meta is not one.
func checkParams(params map[string]json.RawMessage) error {
	if params == nil {
		return errListenParams(`params must be an object, like {"notifications": {"taskIds": ["..."]}}`)
	}
	if raw, ok := params["_meta"]; ok {
		if _, isObject := strictjson.Object(raw); !isObject {
			return errListenParams("_meta must be an object")
		}
	}
	return nil
}

// filterOf reads params.notifications, refusing any member of the schema's SubscriptionFilter
// that has the wrong type; members it does not know are left alone.
func filterOf(params map[string]json.RawMessage) (filter, error) {
	raw, ok := params["notifications"]
	if !ok {
		return filter{}, errListenParams(`notifications is required, like {"notifications": {"taskIds": ["..."]}}`)
	}
	var n map[string]json.RawMessage
	if _, isObject := strictjson.Object(raw); !isObject || json.Unmarshal(raw, &n) != nil {
		return filter{}, errListenParams(`notifications must be an object, like {"taskIds": ["..."]}, not %s`, clip(raw))
	}
	for _, flag := range []string{"toolsListChanged", "promptsListChanged", "resourcesListChanged"} {
		if v, ok := n[flag]; ok && string(v) != "true" && string(v) != "false" {
			return filter{}, errListenParams("notifications.%s must be a boolean, not %s", flag, clip(v))
		}
	}
	if _, err := stringsOf(n, "resourceSubscriptions", "resource URI"); err != nil {
		return filter{}, err
	}
	ids, err := stringsOf(n, "taskIds", "task id")
	if err != nil {
		return filter{}, err
	}
	if len(ids) > tasks.MaxWatched {
		return filter{}, errListenParams("notifications.taskIds lists %d ids; one listen follows at most %d: listen on the others in another request", len(ids), tasks.MaxWatched)
	}
	return filter{taskIDs: ids}, nil
}

// stringsOf reads member name of n as an array of strings (what), nil when absent.
func stringsOf(n map[string]json.RawMessage, name, what string) ([]string, error) {
	raw, ok := n[name]
	if !ok {
		return nil, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || items == nil {
		return nil, errListenParams("notifications.%s must be an array of %s strings, not %s", name, what, clip(raw))
	}
	out := make([]string, len(items))
	for i, item := range items {
		if out[i], ok = strictjson.String(item); !ok {
			return nil, errListenParams("notifications.%s[%d] must be a string (a %s), not %s", name, i, what, clip(item))
		}
	}
	return out, nil
}

// clip is raw JSON shortened for an error message.
func clip(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}

// Listen serves subscriptions/listen (request id, its params members, nil when they are not an
// object), in a context Read made: it acknowledges the ids the caller may follow
// (tasks.Service.Watch, which leaves the others out alike), then sends each acknowledged task as
// tasks/get answers it, at once and on every change, until each has ended, the listener is gone
// (ctx), end closes (the server shuts down, or a stdio client cancels the listen), or the listen
// has lived its life (listenLife). Its result, the empty one the schema gives, ends the stream; it
// comes after the acknowledgement, so no error does. The tasks it asks for count against the
// caller's share of those followed (Config.Followed) while it lasts, and their reads are charged
// to the caller as its polls are.
func (r *Router) Listen(ctx context.Context, id jsonrpc.ID, params map[string]json.RawMessage, out Stream, end <-chan struct{}) (mcp.Result, error) {
	if err := checkParams(params); err != nil {
		return nil, err
	}
	c := capsOf(ctx)
	if !c.modern {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "subscriptions/listen is a method of protocol 2026-07-28"}
	}
	f, err := filterOf(params)
	if err != nil {
		return nil, err
	}
	if f.taskIDs != nil && !c.tasks {
		return nil, errMissingTasksCapability("")
	}
	principal, asked := tasks.Principal(ctx), int64(len(f.taskIDs))
	if ok, own := r.followed.Take(principal, asked); !ok {
		return nil, errTooManyFollowed(len(f.taskIDs), own)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	acknowledged, updates := r.tasks.Watch(ctx, f.taskIDs)
	r.followed.Give(principal, asked-int64(len(acknowledged)))
	defer r.followed.Give(principal, int64(len(acknowledged)))
	life := time.NewTimer(r.listenLife(ctx))
	defer life.Stop()
	subscription := mcp.Meta{mcp.MetaKeySubscriptionID: id.Raw()}
	ack := &acknowledgedParams{Meta: subscription}
	if f.taskIDs != nil {
		ids := append([]string{}, acknowledged...)
		ack.Notifications.TaskIDs = &ids
	}
	if err := out.Send(ctx, "notifications/subscriptions/acknowledged", ack); err != nil {
		return nil, err
	}
	keepAlive := time.NewTicker(keepAliveEvery)
	defer keepAlive.Stop()
	for {
		select {
		case t, more := <-updates:
			if !more {
				return listenClosed(subscription), nil
			}
			if err := out.Send(ctx, "notifications/tasks", &taskNotification{detailedTask: detailed(t), Meta: subscription}); err != nil {
				return nil, err
			}
		case <-keepAlive.C:
			if err := out.KeepAlive(); err != nil {
				return nil, err
			}
		case <-end:
			return listenClosed(subscription), nil
		case <-life.C:
			return listenClosed(subscription), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// listenLife is how long a listen may stream: Config.MaxListen, and no longer than the bearer
// token it came with is valid, so that no stream outlives its credentials.
func (r *Router) listenLife(ctx context.Context) time.Duration {
	life := r.maxListen
	if info := auth.TokenInfoFromContext(ctx); info != nil && !info.Expiration.IsZero() {
		life = min(life, time.Until(info.Expiration))
	}
	return life
}

// errTooManyFollowed refuses a listen of n tasks over the tasks that listens may follow at once:
// the caller's share (own), or everyone's.
func errTooManyFollowed(n int, own bool) *jsonrpc.Error {
	whose := "taskgate follows as many tasks for its listeners as it may at once"
	if own {
		whose = "you follow as many tasks in your listens as one caller may at once"
	}
	data, _ := json.Marshal(map[string]any{"retryable": true})
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Data: data,
		Message: fmt.Sprintf("subscriptions/listen of %d tasks refused: %s; close a listen, or listen again once some have ended", n, whose)}
}

// listenClosed is subscriptions/listen's result: empty, but for the listen it closes.
func listenClosed(subscription mcp.Meta) mcp.Result {
	return &ack{ResultBase: mcp.ResultBase{Meta: subscription}}
}

// acknowledgedParams are notifications/subscriptions/acknowledged's: the task ids the server
// will report (the extension's member of SubscriptionFilter), nothing else.
type acknowledgedParams struct {
	Meta          mcp.Meta `json:"_meta"`
	Notifications struct {
		TaskIDs *[]string `json:"taskIds,omitempty"`
	} `json:"notifications"`
}

// taskNotification is notifications/tasks: the task as tasks/get answers it, but with the
// notification's _meta, which names the listen, and no resultType (a notification is no result).
type taskNotification struct {
	*detailedTask
	ResultType *struct{} `json:"resultType,omitempty"`
	Meta       mcp.Meta  `json:"_meta"`
}
