package exec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
)

// checkArgumentKeys refuses arguments that two readers could read
// differently (DESIGN §12): an object naming a key twice, or two keys that
// differ only in case ({"cwd": "/app", "CWD": "/evil"}: rules read one,
// Go's case-insensitive decoding another), and a top-level key that differs
// from one of the tool's parameters only in case.
func checkArgumentKeys(args json.RawMessage, params json.RawMessage) error {
	var declared struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(params, &declared)
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	return walkKeys(dec, "", declared.Properties, true)
}

// walkKeys reads one JSON value from dec, checking every object in it.
func walkKeys(dec *json.Decoder, where string, declared map[string]json.RawMessage, top bool) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]string{} // folded key → key as written
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key := kt.(string)
			folded := foldKey(key)
			if prev, ok := seen[folded]; ok {
				if prev == key {
					return fmt.Errorf("the key %q is given twice%s", key, at(where))
				}
				return fmt.Errorf("the keys %q and %q differ only in case%s: give one", prev, key, at(where))
			}
			seen[folded] = key
			if top {
				if _, ok := declared[key]; !ok {
					for p := range declared {
						if foldKey(p) == folded {
							return fmt.Errorf("the key %q differs only in case from the parameter %q: name it exactly", key, p)
						}
					}
				}
			}
			if err := walkKeys(dec, where+"/"+key, nil, false); err != nil {
				return err
			}
		}
		_, err = dec.Token() // }
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walkKeys(dec, fmt.Sprintf("%s/%d", where, i), nil, false); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ]
		return err
	}
	return nil
}

// foldKey is key with each letter replaced by the smallest of its case
// folding orbit: keys equal under Go's JSON matching (Unicode simple
// folding: "ſ" is "s", the Kelvin sign "k") have the same foldKey.
func foldKey(key string) string {
	var b strings.Builder
	for _, r := range key {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}

func at(where string) string {
	if where == "" {
		return ""
	}
	return " at " + where
}
