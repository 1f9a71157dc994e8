package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/taskgate/taskgate/adapters"
	"github.com/taskgate/taskgate/adapters/restate"
)

// The Restate side of the bench: what a client of the Restate server sends without taskgate.

// restateServer is the Restate server of the test environment.
type restateServer struct {
	ingress, admin string
	// driver is taskgate's Restate driver on the same server, called from the bench process.
	driver adapters.Conn
}

func restateFromEnv(hc *http.Client) (restateServer, error) {
	s := restateServer{ingress: os.Getenv("RESTATE_INGRESS_URL"), admin: os.Getenv("RESTATE_ADMIN_URL")}
	if s.ingress == "" || s.admin == "" {
		return s, fmt.Errorf("RESTATE_INGRESS_URL and RESTATE_ADMIN_URL must name a running Restate server with the example deployment: run ./scripts/with-engines go run ./test/bench, or leave restate out of -engine")
	}
	var err error
	s.driver, err = restate.New(restate.Config{Ingress: s.ingress, Admin: s.admin, HTTPClient: hc})
	return s, err
}

// invocationOf is the Restate invocation id of a Ref of taskgate's Restate driver, which ends
// with it ("SERVICE/HANDLER/TASK-KEY/INVOCATION-ID").
func invocationOf(r adapters.Ref) string { return r.ID[strings.LastIndexByte(r.ID, '/')+1:] }

func isRestate(r adapters.Ref) bool { return strings.Contains(r.ID, "/inv_") }

// post sends one request and decodes a JSON answer into out (nil: the answer is dropped).
func (b *bench) post(ctx context.Context, method, url string, body any, header http.Header, out any) error {
	var rd io.Reader
	if body != nil {
		payload, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	req.Header = header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := b.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, url, resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// describeRestate is one query of the admin API for an invocation's status, what a client that
// follows an invocation sends.
func (b *bench) describeRestate(ctx context.Context, invocation string) (string, error) {
	var row struct {
		Status string `json:"status"`
	}
	err := b.queryInvocation(ctx, invocation, "status", &row)
	return row.Status, err
}

// restateCompletedAt is when an invocation completed, as the admin API says; zero while it runs.
func (b *bench) restateCompletedAt(ctx context.Context, invocation string) (time.Time, error) {
	var row struct {
		Completed *time.Time `json:"completed_at"`
	}
	if err := b.queryInvocation(ctx, invocation, "completed_at", &row); err != nil {
		return time.Time{}, fmt.Errorf("reading when %s ended: %w", invocation, err)
	}
	if row.Completed == nil {
		return time.Time{}, nil
	}
	return *row.Completed, nil
}

// queryInvocation reads columns of an invocation from the admin API's sys_invocation into row,
// in the fastest form found, with ORDER BY ... LIMIT 1 (without it, the same point read took 5 to
// 45 ms here: Restate's query engine then waits for its scans to end).
func (b *bench) queryInvocation(ctx context.Context, invocation, columns string, row any) error {
	var out struct {
		Rows []json.RawMessage `json:"rows"`
	}
	q := map[string]string{"query": "SELECT " + columns + " FROM sys_invocation WHERE id = '" + invocation + "' ORDER BY created_at DESC LIMIT 1"}
	if err := b.post(ctx, http.MethodPost, b.restate.admin+"/query", q, nil, &out); err != nil {
		return err
	}
	if len(out.Rows) != 1 {
		return fmt.Errorf("the admin API has no invocation %s", invocation)
	}
	return json.Unmarshal(out.Rows[0], row)
}

// describeLikeTaskgate is the read of a running task that taskgate's Restate driver makes (its one
// query, of the invocation's columns and its questions and progress), made by the driver itself
// from the bench process: what the query costs without taskgate's server around it.
func (b *bench) describeLikeTaskgate(ctx context.Context, r adapters.Ref) (string, error) {
	st, err := b.restate.driver.Describe(ctx, restate.Handler("WaitAndEcho", "run", restate.Cancel), r)
	return st.Native, err
}

// sendRestate is one send of the example WaitAndEcho through the ingress.
func (b *bench) sendRestate(ctx context.Context, input string) (adapters.Ref, error) {
	var out struct {
		InvocationID string `json:"invocationId"`
	}
	if err := b.post(ctx, http.MethodPost, b.restate.ingress+"/WaitAndEcho/run/send", json.RawMessage(input), nil, &out); err != nil {
		return adapters.Ref{}, err
	}
	ref := adapters.Ref{ID: "WaitAndEcho/run/direct/" + out.InvocationID}
	b.remember(ref)
	return ref, nil
}

// killRestate ends an invocation the bench started (one that already ended answers an error,
// which is ignored).
func (b *bench) killRestate(ctx context.Context, invocation string) {
	_ = b.post(ctx, http.MethodPatch, b.restate.admin+"/invocations/"+invocation+"/kill", nil, nil, nil)
}
