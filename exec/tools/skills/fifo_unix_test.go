//go:build unix

package skills

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A SKILL.md that is a FIFO is skipped, never waited on; read_skill of a
// skill whose file became one fails at once.
func TestFIFO(t *testing.T) {
	base := t.TempDir()
	tree(t, base, map[string]string{"work/.agents/skills/b/SKILL.md": skillMD("b", "d"), "work/.agents/skills/a/": ""})
	dir := filepath.Join(base, "work", ".agents", "skills")
	if err := syscall.Mkfifo(filepath.Join(dir, "a", "SKILL.md"), 0o644); err != nil {
		t.Skip(err)
	}
	set := Discover("", filepath.Join(base, "work"))
	if len(set.Skills) != 1 || len(set.Notes) != 1 || !strings.Contains(set.Notes[0].Msg, "not a regular file") {
		t.Fatalf("skills %v, notes %v", set.Skills, set.Notes)
	}
	p := filepath.Join(dir, "b", "SKILL.md")
	if err := syscall.Unlink(p); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := call(t, NewTool(set), `{"name":"b"}`); !res.IsError || !strings.Contains(res.Text, "not a regular file") {
		t.Errorf("b: %+v", res)
	}
}
