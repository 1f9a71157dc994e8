// Package builtin registers the engine drivers that the taskgate command is built with, Temporal,
// Step Functions and Restate. Import it for its side effects:
//
//	import _ "github.com/taskgate/taskgate/adapters/builtin"
//
// The JSON Schema of mapping files for these engines, mapping/schema.json in the
// repository, is mapping.Schema() with them registered; a test of this package keeps it so.
package builtin

import (
	_ "github.com/taskgate/taskgate/adapters/restate"       // the "restate" engine kind
	_ "github.com/taskgate/taskgate/adapters/stepfunctions" // the "stepfunctions" engine kind
	_ "github.com/taskgate/taskgate/adapters/temporal"      // the "temporal" engine kind
)
