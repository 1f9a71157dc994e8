package restate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/taskgate/taskgate/adapters/driver"
)

// maxBody bounds what taskgate reads of one answer: a query's rows or an invocation's output.
const maxBody = 64 << 20

// call sends one request to the ingress or the admin API and returns the answer's status and
// body. Its error is only for an answer it could not have: the context's, or ErrUnavailable.
func (e *conn) call(ctx context.Context, what, method, url string, header http.Header, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("restate: %s: %w", what, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return 0, nil, e.unreachable(ctx, what, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	switch {
	case err != nil:
		return 0, nil, e.unreachable(ctx, what, url, err)
	case len(b) > maxBody:
		return 0, nil, fmt.Errorf("restate: %s: the answer is over %d MiB", what, maxBody>>20)
	}
	return resp.StatusCode, b, nil
}

// unreachable is the error of a request that got no answer.
func (e *conn) unreachable(ctx context.Context, what, url string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("restate: %s: %w", what, ctx.Err())
	}
	host, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(url, "http://"), "https://"), "/")
	return fmt.Errorf("restate: %s: %w at %s, retry later: %w", what, driver.ErrUnavailable, host, err)
}

// apiError is the error body of the ingress ({"code", "message", "metadata"}) or of the admin
// API ({"message", "restate_code"}).
type apiError struct {
	Code     int               `json:"code"`
	Message  string            `json:"message"`
	Metadata map[string]string `json:"metadata"`
}

func decodeError(body []byte) apiError {
	var a apiError
	if json.Unmarshal(body, &a) != nil || a.Message == "" {
		a.Message = strings.TrimSpace(string(body))
	}
	return a
}

// refused turns an answer that is not a success into an error that wraps the contract's.
func refused(what string, status int, body []byte) error {
	msg := decodeError(body).Message
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return fmt.Errorf("restate: %s: %w (HTTP %d: %s), retry later", what, driver.ErrUnavailable, status, msg)
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("restate: %s: the server refused taskgate's credentials (HTTP %d: %s): set the engine's authTokenEnv to the variable that holds a valid API token", what, status, msg)
	case http.StatusNotFound:
		return fmt.Errorf("restate: %s: %w: %s", what, driver.ErrNotFound, msg)
	case http.StatusBadRequest:
		return fmt.Errorf("restate: %s: %w: %s", what, driver.ErrInvalid, msg)
	}
	return fmt.Errorf("restate: %s: HTTP %d: %s", what, status, msg)
}

// query runs one SQL query on the admin API and decodes its rows into rows (a pointer to a slice).
func (e *conn) query(ctx context.Context, what, sql string, rows any) error {
	body, err := json.Marshal(map[string]string{"query": sql})
	if err != nil {
		return err
	}
	status, resp, err := e.call(ctx, what, http.MethodPost, e.admin+"/query", nil, body)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return refused(what, status, resp)
	}
	var out struct {
		Rows json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(resp, &out); err != nil || out.Rows == nil {
		return fmt.Errorf("restate: %s: the admin API's answer to a query is not {\"rows\": [...]}: %.200s", what, resp)
	}
	if err := json.Unmarshal(out.Rows, rows); err != nil {
		return fmt.Errorf("restate: %s: reading the rows: %w", what, err)
	}
	return nil
}

// literal quotes s as an SQL string. Every value taskgate puts in a query has been checked for
// its shape already (names, task keys, invocation ids); quoting keeps that from being the only
// guard.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// errNoInvocation is the contract's not-found for a Ref that names no invocation of its target.
func errNoInvocation(what string, r driver.Ref) error {
	return fmt.Errorf("restate: %s: %w: Restate has no invocation %s (it keeps completed invocations for the service's retention, a day by default)", what, driver.ErrNotFound, r)
}
