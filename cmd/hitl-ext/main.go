// Command hitl-ext is hitl's companion program: it holds the packages only
// some agent files need — the Gemini SDK (google.golang.org/genai), the
// OpenAPI parser (kin-openapi), the HTML tokenizer of fetch's markdown and
// text formats (golang.org/x/net/html) — so that hitl itself does not link them and
// every other run starts without initializing them. hitl starts it, in a
// sandbox that reaches nothing, when an agent file first needs it, and
// talks to it over its stdin and stdout (package ext); it is not meant to
// be run by hand.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/mattn/go-isatty"

	"github.com/hitl-dev/hitl/exec/ext"
	"github.com/hitl-dev/hitl/exec/model/remote/serve"
	"github.com/hitl-dev/hitl/exec/tools/fetch/htmltext"
	"github.com/hitl-dev/hitl/exec/tools/openapi/spec"
)

func main() { os.Exit(run(os.Stdin, os.Stdout)) }

func run(in io.Reader, out io.Writer) int {
	// It holds a provider's key: no other process of the user may read
	// its memory or attach to it.
	noDump()
	if f, ok := in.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		fmt.Fprintln(os.Stderr, "hitl-ext is started by hitl (it speaks a wire protocol on stdin and stdout); there is nothing to run by hand")
		return 2
	}
	conn := ext.NewConn(in, out)
	version := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
	}
	if err := conn.SendJSON(ext.THello, 0, ext.Hello{Proto: ext.Proto, Version: version}); err != nil {
		return 1
	}
	var model *serve.Model
	for {
		f, err := conn.Read()
		if err == io.EOF {
			return 0
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "hitl-ext:", err)
			return 1
		}
		switch f.Type {
		case ext.TOpenModel:
			var cfg ext.ModelConfig
			if err := json.Unmarshal(f.Data, &cfg); err != nil {
				fmt.Fprintln(os.Stderr, "hitl-ext: the model hitl opened:", err)
				return 1
			}
			if model, err = serve.Open(conn, cfg); err != nil {
				fmt.Fprintln(os.Stderr, "hitl-ext:", err)
				return 1
			}
		case ext.TOpenAPI:
			var doc ext.OpenAPIDoc
			var res ext.OpenAPIResult
			if err := json.Unmarshal(f.Data, &doc); err != nil {
				res.Error = "the document hitl sent: " + err.Error()
			} else {
				res = spec.Parse(doc.Spec, doc.Data)
			}
			if err := conn.SendJSON(ext.TOpenAPIOut, f.ID, res); err != nil {
				return 1
			}
		case ext.THTML:
			var page ext.HTMLPage
			if err := json.Unmarshal(f.Data, &page); err != nil {
				fmt.Fprintln(os.Stderr, "hitl-ext: the page hitl sent:", err)
				return 1
			}
			if err := conn.SendJSON(ext.THTMLOut, f.ID, ext.HTMLResult{Text: htmltext.Render(page.Page, page.Markdown)}); err != nil {
				return 1
			}
		default:
			if model == nil {
				fmt.Fprintf(os.Stderr, "hitl-ext: a frame of type %q before any model was opened\n", f.Type)
				return 1
			}
			model.Frame(f)
		}
	}
}
