// Command mcptest-server is the MCP test server over stdio.
//
//	mcptest-server [-legacy] [-stderr TEXT] [-fail] [-hang] [-pidfile FILE] [-ignoreterm] [-count FILE] [-forgetful] [-deleted FILE] [-prefix P] [-tools A,B]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hitl-dev/hitl/exec/tools/mcp/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	legacy := flag.Bool("legacy", false, "speak protocol 2025-11-25 (elicitation/create during a call)")
	say := flag.String("stderr", "", "write this line to stderr at start")
	fail := flag.Bool("fail", false, "write to stderr and exit 3 before the handshake")
	hang := flag.Bool("hang", false, "never answer the handshake")
	ignoreTerm := flag.Bool("ignoreterm", false, "ignore SIGTERM (to test that SIGKILL follows)")
	pidfile := flag.String("pidfile", "", "write the server's pid to this file at start (tests check it is gone after)")
	countFile := flag.String("count", "", "append a line to this file each time a multi-round tool starts a call afresh")
	deletedLog := flag.String("deleted", "", "append the id of each item delete_item deletes to this file")
	forgetful := flag.Bool("forgetful", false, "refuse the request states an earlier run of the server gave (as one keeping them in memory)")
	prefix := flag.String("prefix", "", "put this before every tool's name")
	extra := flag.String("tools", "", "comma-separated names of more tools, each answering with its arguments")
	flag.Parse()
	if *pidfile != "" {
		if err := os.WriteFile(*pidfile, []byte(fmt.Sprintln(os.Getpid())), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "mcptest:", err)
			os.Exit(1)
		}
	}
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if *say != "" {
		fmt.Fprintln(os.Stderr, *say)
	}
	if *fail {
		fmt.Fprintln(os.Stderr, "mcptest: cannot open the database: permission denied")
		os.Exit(3)
	}
	if *hang {
		select {}
	}
	s := mcptest.NewServer(mcptest.Options{Legacy: *legacy, Crash: func() { os.Exit(2) }, CountFile: *countFile, Forgetful: *forgetful, DeletedLog: *deletedLog, Prefix: *prefix, Extra: splitNames(*extra)})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		os.Exit(1)
	}
}

func splitNames(s string) []string {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}
