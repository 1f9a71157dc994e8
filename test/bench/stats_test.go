package main

import (
	"encoding/json"
	"math"
	"testing"
)

// A row whose figure this build cannot make (NaN) is written with a null taskgate, and the rows
// around it as they are.
func TestRowJSON(t *testing.T) {
	direct := 0.0
	rows := []Row{
		{Name: "fleet: ends not notified", Unit: unitErrors, Direct: &direct, Taskgate: math.NaN()},
		{Name: "fleet: client errors", Unit: unitErrors, Direct: &direct, Taskgate: 3},
	}
	b, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"fleet: ends not notified","unit":"errors","direct":0,"ratio":null,"taskgate":null},` +
		`{"name":"fleet: client errors","unit":"errors","direct":0,"ratio":null,"taskgate":3}]`
	if string(b) != want {
		t.Errorf("rows as JSON:\n%s\nwant\n%s", b, want)
	}
}
