package sfnexamples

import _ "embed"

// Mapping is tools.yaml: the example tools served by `taskgate dev --sfn-endpoint`.
//
//go:embed tools.yaml
var Mapping []byte
