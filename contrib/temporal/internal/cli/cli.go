// Package cli is hitl-temporal's command line: one Main mapping errors to
// exit codes (0 success, 1 runtime error, 2 usage or bad input, the
// answer refused included).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
)

// Factory is what every command is given.
type Factory struct {
	Out, Err io.Writer
	Getenv   func(string) string
	// Dial connects to Temporal with the root flags.
	// Dial connects to Temporal with the root flags; nil: no SDK logs.
	Dial func(log.Logger) (client.Client, error)
}

// UsageError is bad input: exit 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// Main runs the command line and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := &Factory{Out: stdout, Err: stderr, Getenv: os.Getenv}
	root := NewCmdRoot(f)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "hitl-temporal:", err)
	var ue *UsageError
	if errors.As(err, &ue) || isFlagError(err) {
		return 2
	}
	return 1
}

type flagError struct{ error }

func isFlagError(err error) bool {
	var fe flagError
	return errors.As(err, &fe)
}

// NewCmdRoot is hitl-temporal.
func NewCmdRoot(f *Factory) *cobra.Command {
	var address, namespace string
	root := &cobra.Command{
		Use:           "hitl-temporal",
		Short:         "Run hitl agents on Temporal: runs that wait for a person hold no process",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError{err} })
	root.PersistentFlags().StringVar(&address, "address", "", "Temporal frontend HOST:PORT (default $TEMPORAL_ADDRESS, else localhost:7233)")
	root.PersistentFlags().StringVar(&namespace, "namespace", "", "Temporal namespace (default $TEMPORAL_NAMESPACE, else default)")
	f.Dial = func(l log.Logger) (client.Client, error) {
		if l == nil {
			l = quietLogger{}
		}
		o := client.Options{HostPort: address, Namespace: namespace, Logger: l}
		if o.HostPort == "" {
			o.HostPort = f.Getenv("TEMPORAL_ADDRESS")
		}
		if o.HostPort == "" {
			o.HostPort = client.DefaultHostPort
		}
		if o.Namespace == "" {
			o.Namespace = f.Getenv("TEMPORAL_NAMESPACE")
		}
		c, err := client.Dial(o)
		if err != nil {
			return nil, fmt.Errorf("cannot reach Temporal at %s: %w", o.HostPort, err)
		}
		return c, nil
	}
	root.AddCommand(NewCmdWorker(f, nil), NewCmdStart(f, nil), NewCmdList(f, nil), NewCmdAnswer(f, nil), NewCmdResult(f, nil))
	return root
}

// quietLogger drops the SDK's logs (warnings only on stderr would mix with
// the command's output); errors reach the user as errors.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
