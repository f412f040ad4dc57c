package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is set at build time with -ldflags "-X github.com/hitl-dev/hitl/cmd.Version=v1.2.3".
var Version = ""

// NewCmdVersion prints the version. It reads nothing but the build info
// compiled into the binary.
func NewCmdVersion(ios *IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print hitl's version",
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			fmt.Fprintf(ios.Out, "hitl %s (%s, %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

func version() string {
	if Version != "" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}
