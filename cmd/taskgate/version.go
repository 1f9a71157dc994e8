package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskgate/taskgate/mcpserver"
)

// version is set when taskgate is built for a release: go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

// The servers report the same version to MCP clients (serverInfo).
func init() { mcpserver.Version = version }

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
