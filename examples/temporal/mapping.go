package temporalexamples

import _ "embed"

// Mapping is tools.yaml: the example tools served by `taskgate dev`.
//
//go:embed tools.yaml
var Mapping []byte
