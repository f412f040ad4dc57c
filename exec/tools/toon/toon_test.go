package toon

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	"github.com/alpkeskin/gotoon"
)

// cagent is what cagent gives the model for text: gotoon's encoding of the
// object it decodes, or the text.
func cagent(text string) string {
	var o map[string]any
	if err := json.Unmarshal([]byte(text), &o); err != nil {
		return text
	}
	out, _ := gotoon.Encode(o)
	return out
}

func TestConvert(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string // "" with keep: the text stays
		keep bool
	}{
		{name: "object", text: `{"b":true,"a":"x","n":null}`, want: "a: x\nb: true\nn: null"},
		{name: "table", text: `{"users":[{"id":1,"name":"Alice"},{"id":2,"name":"Bob"}]}`, want: "users[2]{id,name}:\n  1,Alice\n  2,Bob"},
		{name: "nested and quoted", text: ` {"a":{"b":[1,2,"x,y"],"c":""}}` + "\n", want: "a:\n  b[3]: 1,2,\"x,y\"\n  c: \"\""},
		{name: "numbers printed as written", text: `{"a":[0.1,-0,1e-7,1E3,2.50,123456789012345]}`, want: "a[6]: 0.1,0,0.0000001,1000,2.5,123456789012345"},
		{name: "empty object", text: `{}`, want: ""},
		{name: "list items", text: `{"a":[{"x":{"y":1}},{"z":2},3,[4]]}`, want: "a[4]:\n  - x:\n      y: 1\n  - z: 2\n  - 3\n  - [1]: 4"},
		{name: "array", text: `[{"a":1}]`, keep: true},
		{name: "string", text: `"{}"`, keep: true},
		{name: "number", text: `42`, keep: true},
		{name: "null", text: `null`, keep: true},
		{name: "not json", text: `{not json}`, keep: true},
		{name: "plain text", text: `status: ok`, keep: true},
		{name: "two values", text: `{"a":1}{"b":2}`, keep: true},
		{name: "trailing text", text: `{"a":1} and more`, keep: true},
		{name: "cut short", text: `{"a":[1,2`, keep: true},
		{name: "empty", text: ``, keep: true},
		{name: "big integer", text: `{"id":12345678901234567890}`, keep: true},
		{name: "2^63", text: `{"id":9223372036854775808}`, keep: true},
		{name: "more digits than float64", text: `{"x":0.10000000000000000001}`, keep: true},
		{name: "out of range", text: `{"x":1e400}`, keep: true},
		{name: "out of range under a key given twice", text: `{"":1e2121,"":-5}`, keep: true},
		{name: "10^21 spelled out", text: `{"x":1e21,"y":-1e-21}`, want: "x: 1000000000000000000000\ny: -0.000000000000000000001"},
		{name: "beyond 10^21", text: `{"x":1e22}`, keep: true},
		{name: "below 10^-21", text: `{"x":1.5e-22}`, keep: true},
		{name: "huge exponent underflows", text: `{"x":1e-1000000000}`, keep: true},
		{name: "array of arrays of objects", text: `{"a":[[{"x":1}],[1,2]]}`, keep: true},
		{name: "list item's array of arrays", text: `{"a":[{"b":[[{"c":1}]]}]}`, keep: true},
		{name: "array of arrays of arrays", text: `{"a":[[[1]]]}`, keep: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Convert(tt.text)
			if tt.keep {
				if ok {
					t.Fatalf("converted to %q, want the text kept", got)
				}
				return
			}
			if !ok || got != tt.want {
				t.Fatalf("got %q (ok %v), want %q", got, ok, tt.want)
			}
			if c := cagent(tt.text); got != c {
				t.Errorf("got %q, cagent gives %q", got, c)
			}
		})
	}
}

// A hostile result costs no more than itself: text over MaxInput, deep
// nesting (each level indents every line below it) and numbers TOON
// prints long (1e308: 309 digits) are kept, before gotoon builds anything.
func TestConvertBounded(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	long := `{"a":[` + strings.Repeat("1e308,", 20000) + `1]}`
	big := `{"a":"` + strings.Repeat("x", MaxInput) + `"}`
	for name, text := range map[string]string{"deep": deep, "long numbers": long, "over MaxInput": big} {
		t.Run(name, func(t *testing.T) {
			if out, ok := Convert(text); ok {
				t.Fatalf("converted %d bytes to %d", len(text), len(out))
			}
		})
	}
	// Within bounds, a large table converts, and is smaller.
	var b strings.Builder
	b.WriteString(`{"rows":[`)
	for i := range 4000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"user %d","active":true}`, i, i)
	}
	b.WriteString("]}")
	out, ok := Convert(b.String())
	if !ok || len(out) >= b.Len() || !strings.HasPrefix(out, "rows[4000]{active,id,name}:\n  true,0,user 0\n") {
		t.Fatalf("ok %v, %d bytes from %d: %.80q", ok, len(out), b.Len(), out)
	}
}

// What Convert allocates grows with the text, whatever its shape: at
// MaxInput, some 130 times its length at most, garbage included (some 60
// times is live at the peak: encoding/json's tree, gotoon's copy of it).
func TestConvertAllocations(t *testing.T) {
	fill := func(prefix, item, suffix string) string {
		n := (MaxInput - len(prefix) - len(suffix)) / len(item)
		return prefix + strings.Repeat(item, n-1) + strings.TrimSuffix(item, ",") + suffix
	}
	for name, text := range map[string]string{
		"numbers":       fill(`{"a":[`, "1,", `]}`),
		"long numbers":  fill(`{"a":[`, "1e300,", `]}`),
		"empty arrays":  fill(`{"a":[`, "[],", `]}`),
		"empty objects": fill(`{"a":[`, "{},", `]}`),
		"table":         fill(`{"a":[`, `{"x":1,"y":"ab"},`, `]}`),
		"deep":          strings.Repeat(`{"a":`, 9000) + "1" + strings.Repeat("}", 9000),
		"keys":          fill(`{`, `"k`+strings.Repeat("x", 10)+`":1,`, `}`),
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			Convert(text)
			runtime.ReadMemStats(&after)
			if got := after.TotalAlloc - before.TotalAlloc; got > 160*uint64(len(text)) {
				t.Errorf("%d bytes allocated for %d", got, len(text))
			}
		})
	}
}

// The meter's bound is never below gotoon's length, and what Convert gives
// is what cagent gives, on random objects of every shape gotoon lays out.
func TestMeterBoundsGotoon(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := range 3000 {
		obj := randObject(rng, 0)
		data, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		var decoded map[string]any
		if err := json.Unmarshal(data, &decoded); err != nil {
			t.Fatal(err)
		}
		var m meter
		m.object(decoded, 0)
		want, _ := gotoon.Encode(decoded)
		if m.bytes < int64(len(want)) {
			t.Fatalf("case %d: bound %d < %d for %s", i, m.bytes, len(want), data)
		}
		if got, ok := Convert(string(data)); ok && got != want {
			t.Fatalf("case %d: %s\ngot  %q\nwant %q", i, data, got, want)
		} else if !ok && !m.lossy && m.bytes <= MaxGrowth*int64(len(data))+Slack {
			t.Fatalf("case %d: kept %s", i, data)
		}
	}
}

var keys = []string{"a", "id", "name", "x y", "", "q\"k", "n\nl", "1", "-k", "é"}

func randObject(rng *rand.Rand, depth int) map[string]any {
	obj := map[string]any{}
	for range rng.Intn(4) {
		obj[keys[rng.Intn(len(keys))]] = randValue(rng, depth+1)
	}
	return obj
}

func randValue(rng *rand.Rand, depth int) any {
	n := 7
	if depth > 4 {
		n = 4 // primitives only
	}
	switch rng.Intn(n) {
	case 0:
		return nil
	case 1:
		return rng.Intn(2) == 0
	case 2:
		return []float64{0, 1, -3, 2.5, 1e21, 0.000001, 123456789}[rng.Intn(7)]
	case 3:
		return []string{"", "x", "true", "12", " pad", "a,b", "- d", "k: v", "[x]", "q\"\\", "t\tn\n"}[rng.Intn(11)]
	case 4:
		return randObject(rng, depth)
	case 5: // a table, or nearly one
		rows := make([]any, 1+rng.Intn(3))
		for i := range rows {
			row := map[string]any{"id": float64(i), "name": "n"}
			if rng.Intn(4) == 0 {
				row["extra"] = randValue(rng, depth+1)
			}
			rows[i] = row
		}
		return rows
	default:
		a := make([]any, rng.Intn(4))
		for i := range a {
			a[i] = randValue(rng, depth+1)
		}
		return a
	}
}

func TestCompile(t *testing.T) {
	tests := []struct {
		value   string
		match   []string
		nomatch []string
		err     string
	}{
		{value: "", nomatch: []string{"list_issues"}},
		{value: ".*", match: []string{"list_issues", "x"}},
		{value: "list_, get_issue$", match: []string{"list_issues", "my_list_x", "get_issue"}, nomatch: []string{"get_issues"}},
		{value: "^read", match: []string{"read_file"}, nomatch: []string{"unread"}},
		{value: "a,", match: []string{"anything", "b"}}, // an empty part matches every tool, as in cagent
		{value: "ok, (unclosed", err: `"(unclosed" is not a valid regular expression: missing closing ): ` + "`(unclosed`"},
		{value: "x{1001}", err: `"x{1001}" is not a valid regular expression: invalid repeat count`},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			m, err := Compile(tt.value)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range tt.match {
				if !m.Matches(n) {
					t.Errorf("%q does not match %s", tt.value, n)
				}
			}
			for _, n := range tt.nomatch {
				if m.Matches(n) {
					t.Errorf("%q matches %s", tt.value, n)
				}
			}
		})
	}
}

// FuzzConvert: any text is kept or converted, never a panic; converted, it
// is what cagent gives the model.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{`{"a":[{"x":1},{"x":2}]}`, `{"a":[[1],[{"b":2}]]}`, `{"n":1e21,"m":-0.5}`, `{"k\n":"v\t"}`, `{"":1e2121,"":-5}`, `{"s":"1e999 \"2e400\" \\","n":-1}`, `[1]`, `{}`, "{\"a\":\"\\u00e9\\ud800\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		out, ok := Convert(text)
		if ok && out != cagent(text) {
			t.Fatalf("%q: %q, cagent gives %q", text, out, cagent(text))
		}
	})
}
