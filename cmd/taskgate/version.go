package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskgate/taskgate/mcpserver"
)

// version is set when taskgate is built for a release: go build -ldflags "-X main.version=v1.2.3".
// Else init takes the module's version from the build information.
var version = "dev"

// The servers report the same version to MCP clients (serverInfo).
func init() {
	bi, _ := debug.ReadBuildInfo()
	version = moduleVersion(version, bi)
	mcpserver.Version = version
}

// moduleVersion is the version stamped with -X, else the main module's version that the build
// recorded (a go install of module@v1.2.3; since Go 1.24, a go build in a Git checkout records a
// pseudo-version), else "dev" (go run, or no version recorded).
func moduleVersion(stamped string, bi *debug.BuildInfo) string {
	if stamped != "dev" || bi == nil || bi.Main.Version == "" || bi.Main.Version == "(devel)" {
		return stamped
	}
	return bi.Main.Version
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print taskgate's version, the Go version and the source revision it was built from",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, _ := debug.ReadBuildInfo()
			fmt.Fprint(cmd.OutOrStdout(), versionText(bi))
			return nil
		},
	}
}

// versionText is the version, and what the build information knows: the Go version, and the
// revision when the build recorded it (go build inside a Git checkout, without -buildvcs=false).
func versionText(bi *debug.BuildInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "taskgate %s\n", version)
	if bi == nil {
		return b.String()
	}
	fmt.Fprintf(&b, "%s\n", bi.GoVersion)
	vcs := map[string]string{}
	for _, s := range bi.Settings {
		vcs[s.Key] = s.Value
	}
	if rev := vcs["vcs.revision"]; rev != "" {
		fmt.Fprintf(&b, "revision %s", rev)
		if t := vcs["vcs.time"]; t != "" {
			fmt.Fprintf(&b, " (%s)", t)
		}
		if vcs["vcs.modified"] == "true" {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteString("\n")
	}
	return b.String()
}
