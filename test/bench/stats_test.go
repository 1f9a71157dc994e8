package main

import (
	"encoding/json"
	"math"
	"testing"
)

// A row whose figure this build cannot make (NaN) has no ratio, is written with a null taskgate,
// and the rows around it as they are.
func TestRowJSON(t *testing.T) {
	res := newResults()
	res.add(7, "ends not notified", unitErrors, 0, math.NaN())
	res.add(7, "end to notified p95 (s)", "s", 10, math.NaN())
	res.add(7, "client errors", unitErrors, 0, 3)
	b, err := json.Marshal(res.rows())
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"fleet: ends not notified","unit":"errors","direct":0,"ratio":null,"taskgate":null},` +
		`{"name":"fleet: end to notified p95 (s)","unit":"s","direct":10,"ratio":null,"taskgate":null},` +
		`{"name":"fleet: client errors","unit":"errors","direct":0,"ratio":null,"taskgate":3}]`
	if string(b) != want {
		t.Errorf("rows as JSON:\n%s\nwant\n%s", b, want)
	}
}
