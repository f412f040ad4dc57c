package filesystem

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// quotePath makes every $path (or ${path}) of a post_edit command that
// stands outside double quotes a quoted word part (DESIGN §12): the path
// reaches the command only through that variable, and unquoted, a file
// named `src/*.go` or `a b.go` would be split and globbed into other files.
func quotePath(line string) (string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(line), "")
	if err != nil {
		return "", fmt.Errorf("the post_edit command does not parse: %v", err)
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		w, ok := n.(*syntax.Word)
		if !ok {
			return true
		}
		for i, part := range w.Parts {
			if pe, ok := part.(*syntax.ParamExp); ok && pe.Param != nil && pe.Param.Value == "path" {
				w.Parts[i] = &syntax.DblQuoted{Parts: []syntax.WordPart{pe}}
			}
		}
		return true // words inside double quotes are not Words' direct parts
	})
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, f); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
