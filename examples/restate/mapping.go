package restateexamples

import _ "embed"

// Mapping is tools.yaml: the examples served as MCP tools, on the Restate server that
// RESTATE_INGRESS_URL and RESTATE_ADMIN_URL name.
//
//go:embed tools.yaml
var Mapping []byte
