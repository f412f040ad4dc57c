package htmltext

import (
	"strings"
	"testing"
	"time"
)

func TestHTMLTo(t *testing.T) {
	cases := []struct {
		name, in, md, text string
	}{
		{"entities", `<p>a &amp; b &lt;c&gt;</p>`, "a & b <c>\n", "a & b <c>\n"},
		{"headings", `<h2>Sub</h2><p>x</p><h6>Tiny</h6>`, "## Sub\n\nx\n\n###### Tiny\n", "Sub\n\nx\n\nTiny\n"},
		{"ordered nested", `<ol><li>a<ul><li>b</li></ul></li><li>c</li></ol>`, "1. a\n  - b\n2. c\n", "1. a\n  - b\n2. c\n"},
		{"javascript link dropped", `<a href="javascript:alert(1)">x</a> <a href="https://e/">y</a>`, "x [y](https://e/)\n", "x y\n"},
		{"image", `<img src="/i.png" alt="pic">`, "![pic](/i.png)\n", "pic\n"},
		{"script and style hidden", `<script>var x = "<p>no</p>";</script><style>.a{}</style><p>yes</p>`, "yes\n", "yes\n"},
		{"br and hr", `a<br>b<br><br><br>c<hr>d`, "a\nb\n\nc\n\n---\n\nd\n", "a\nb\n\nc\n\nd\n"},
		{"inline code", `<p>run <code>make</code> now</p>`, "run `make` now\n", "run make now\n"},
		{"unclosed", `<p>one<p>two <b>bold`, "one\n\ntwo **bold\n", "one\n\ntwo bold\n"},
		{"whitespace", "<p>  lots \n\t of   space </p>", "lots of space\n", "lots of space\n"},
		{"table", `<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>`, "a b\n\nc\n", "a b\n\nc\n"},
	}
	for _, c := range cases {
		if got := Render(c.in, true); got != c.md {
			t.Errorf("%s markdown:\n got %q\nwant %q", c.name, got, c.md)
		}
		if got := Render(c.in, false); got != c.text {
			t.Errorf("%s text:\n got %q\nwant %q", c.name, got, c.text)
		}
	}
}

// A hostile page (deep nesting, a million open lists) is rendered in
// bounded time and stack.
func TestHTMLHostile(t *testing.T) {
	start := time.Now()
	deep := strings.Repeat("<div><ul><li>", 100000) + "x"
	if got := Render(deep, true); !strings.HasSuffix(got, "x\n") {
		t.Errorf("deep: %q", got[max(len(got)-50, 0):])
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}
