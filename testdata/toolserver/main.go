// Command toolserver is an example tool server for hitl's remote toolsets
// (see docs/remote-tools.md). Its write_file tool asks the user,
// through hitl, "Allow writing to the original directory?" and reports the
// choice; it never writes anything.
//
//	go run ./testdata/toolserver -addr 127.0.0.1:8383
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/hitl-dev/hitl/exec/tools/remote/remotetest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8383", "`HOST:PORT` to listen on")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "toolserver:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	tools := remotetest.New()
	defer tools.Close()
	srv := &http.Server{Handler: tools, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("toolserver: invocations at http://%s/invoke\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
