// Package htmltext renders an HTML page as Markdown or text (the fetch
// tool's formats). It runs in hitl-ext (package ext): golang.org/x/net/html
// builds its entity table at every start of a program that links it.
package htmltext

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// Render renders an HTML page as Markdown (markdown true) or plain text, in
// one pass over its tokens (no tree, no recursion, so no nesting depth can
// exhaust the stack). cagent uses html-to-markdown and html2text for this;
// hitl keeps a small renderer over golang.org/x/net/html's tokenizer:
// headings, paragraphs, line breaks, lists, links, images, emphasis, code
// and preformatted blocks; script, style and the head are dropped.
func Render(page string, markdown bool) string {
	z := html.NewTokenizer(strings.NewReader(page))
	w := &mdWriter{markdown: markdown}
	skip := 0 // inside script, style, head, ... (their text is not content)
	pre := 0
	var lists []int // per open list: 0 unordered, else the next number
	deeper := 0     // lists open past the 32 kept
	href := ""
	inLink := false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return strings.TrimSpace(w.b.String()) + "\n"
		case html.TextToken:
			if skip > 0 {
				continue
			}
			if pre > 0 {
				w.raw(string(z.Text()))
			} else {
				w.text(string(z.Text()))
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			var attrs map[string]string
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				switch string(k) {
				case "href", "src", "alt":
					if attrs == nil {
						attrs = map[string]string{}
					}
					attrs[string(k)] = string(v)
				}
			}
			end := tt == html.EndTagToken
			switch tag {
			case "script", "style", "head", "noscript", "template", "svg", "iframe", "object":
				if tt == html.StartTagToken {
					skip++
				} else if end && skip > 0 {
					skip--
				}
				continue
			}
			if skip > 0 {
				continue
			}
			switch tag {
			case "h1", "h2", "h3", "h4", "h5", "h6":
				w.block()
				if !end && markdown {
					w.raw(strings.Repeat("#", int(tag[1]-'0')) + " ")
				}
			case "p", "div", "section", "article", "header", "footer", "main", "nav", "aside",
				"table", "tr", "blockquote", "dl", "dt", "dd", "figure", "form", "fieldset", "address":
				w.block()
				if !end && tag == "blockquote" && markdown {
					w.raw("> ")
				}
			case "br":
				w.lineBreak()
			case "hr":
				w.block()
				if markdown {
					w.raw("---")
					w.block()
				}
			case "ul", "ol":
				if len(lists) > 1 || (len(lists) == 1 && !end) {
					w.newline() // a list inside a list item
				} else {
					w.block()
				}
				if end {
					if deeper > 0 {
						deeper--
					} else if len(lists) > 0 {
						lists = lists[:len(lists)-1]
					}
				} else if len(lists) == 32 {
					deeper++
				} else {
					n := 0
					if tag == "ol" {
						n = 1
					}
					lists = append(lists, n)
				}
			case "li":
				if end {
					w.newline()
					continue
				}
				w.newline()
				indent := strings.Repeat("  ", max(len(lists)-1, 0))
				marker := "- "
				if k := len(lists) - 1; k >= 0 && lists[k] > 0 {
					marker = itoa(lists[k]) + ". "
					lists[k]++
				}
				w.raw(indent + marker)
			case "td", "th":
				if !end {
					w.text(" ")
				}
			case "pre":
				if end {
					pre = max(pre-1, 0)
					if markdown {
						w.newline()
						w.raw("```")
					}
					w.block()
				} else {
					w.block()
					pre++
					if markdown {
						w.raw("```\n")
					}
				}
			case "code", "kbd", "samp":
				if pre == 0 && markdown {
					w.raw("`")
				}
			case "strong", "b":
				if markdown {
					w.raw("**")
				}
			case "em", "i":
				if markdown {
					w.raw("_")
				}
			case "a":
				if !markdown {
					continue
				}
				if end {
					if inLink {
						w.raw("](" + href + ")")
						inLink = false
					}
				} else if h := attrs["href"]; h != "" && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(h)), "javascript:") {
					if inLink {
						w.raw("](" + href + ")")
					}
					w.raw("[")
					href, inLink = h, true
				}
			case "img":
				if markdown && attrs["src"] != "" {
					w.raw("![" + attrs["alt"] + "](" + attrs["src"] + ")")
				} else if alt := attrs["alt"]; alt != "" {
					w.text(alt)
				}
			}
		}
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// mdWriter collapses whitespace outside preformatted text and keeps at
// most one blank line between blocks.
type mdWriter struct {
	b        bytes.Buffer
	markdown bool
	nl       int  // newlines at the end of b
	space    bool // a space is due before the next word
}

func (w *mdWriter) raw(s string) {
	if s == "" {
		return
	}
	if w.space && w.nl == 0 && w.b.Len() > 0 {
		w.b.WriteByte(' ')
	}
	w.space = false
	w.b.WriteString(s)
	if t := len(s) - len(strings.TrimRight(s, "\n")); t == len(s) {
		w.nl += t
	} else {
		w.nl = t
	}
}

func (w *mdWriter) text(s string) {
	fields := strings.Fields(s)
	lead := s != "" && isSpace(s[0])
	trail := s != "" && isSpace(s[len(s)-1])
	if len(fields) == 0 {
		if s != "" {
			w.space = true
		}
		return
	}
	if lead {
		w.space = true
	}
	w.raw(strings.Join(fields, " "))
	w.space = trail
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }

// newline ends the line unless it is ended.
func (w *mdWriter) newline() {
	w.space = false
	if w.b.Len() > 0 && w.nl == 0 {
		w.b.WriteByte('\n')
		w.nl++
	}
}

// lineBreak is <br>: a new line, a blank one after another break.
func (w *mdWriter) lineBreak() {
	w.space = false
	if w.b.Len() > 0 && w.nl < 2 {
		w.b.WriteByte('\n')
		w.nl++
	}
}

func (w *mdWriter) block() {
	w.space = false
	if w.b.Len() == 0 {
		return
	}
	for w.nl < 2 {
		w.b.WriteByte('\n')
		w.nl++
	}
}
