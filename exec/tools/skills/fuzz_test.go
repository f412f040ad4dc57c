package skills

import (
	"strings"
	"testing"
)

// parse never panics, and what it accepts has a name and a description
// within the bounds.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "---", "---\n---", "---\r---\r", "---\nname: a\ndescription: d\n---\n", "--- \n\n---", "---\n[[[\n---", "---\nname: &a [*a]\n---"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, err := parse(data)
		if err != nil {
			return
		}
		if strings.TrimSpace(fm.Name) == "" || strings.TrimSpace(fm.Description) == "" || len(fm.Name) > MaxName || len(fm.Description) > MaxDescription {
			t.Fatalf("accepted %+v", fm)
		}
	})
}
