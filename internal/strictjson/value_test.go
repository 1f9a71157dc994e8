package strictjson

import (
	"encoding/json"
	"reflect"
	"testing"
)

var valueSeeds = []string{
	`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`,
	`{}`, `[]`, `[1,-2.5e3,0,true,false,null,"x",{"a":[{}]}]`, `"a\u00e9\"\\"`, ` {"é":"\ud83d\ude00"} `,
	`1e400`, `-0`, `12345678901234567890`, `{"a":1,"A":2}`, `{"a":1}x`, "\"\xff\"", `{"a":"<>&"}`,
}

// TestValueDecodesAsEncodingJSON: what Value reads equals what json.Unmarshal reads into an any,
// and Value refuses what encoding/json refuses or what Check refuses.
func TestValueDecodesAsEncodingJSON(t *testing.T) {
	for _, s := range valueSeeds {
		compareValue(t, s)
	}
}

func FuzzValue(f *testing.F) {
	for _, s := range valueSeeds {
		f.Add(s)
	}
	f.Fuzz(compareValue)
}

func compareValue(t *testing.T, s string) {
	got, ok := Value([]byte(s))
	var want any
	wantOK := Check([]byte(s)) == nil && json.Unmarshal([]byte(s), &want) == nil
	if ok != wantOK || ok && !reflect.DeepEqual(got, want) {
		t.Errorf("Value(%q) = %#v, %v; encoding/json reads %#v, %v", s, got, ok, want, wantOK)
	}
}
