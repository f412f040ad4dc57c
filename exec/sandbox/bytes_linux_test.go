package sandbox

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// Argv and environment bytes that are not UTF-8 reach the command
// as given (what a rule checked is what runs).
func TestArgvAndEnvironmentBytesReachTheCommand(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		var out bytes.Buffer
		c := sb.Command(context.Background(), Spec{Path: "/usr/bin/printf", Args: []string{"%s|%s", "a\xffb"}, Env: []string{"X=c\xfed"}, Dir: dir, Class: ClassAuto, Writable: []string{dir}, Stdout: &out})
		if err := c.Run(); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != "a\xffb|" {
			t.Errorf("argv reached the command as %q, want %q", got, "a\xffb|")
		}
		out.Reset()
		c = sb.Command(context.Background(), Spec{Path: "/usr/bin/env", Env: []string{"X=c\xfed"}, Dir: dir, Class: ClassAuto, Writable: []string{dir}, Stdout: &out})
		if err := c.Run(); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != "X=c\xfed\n" {
			t.Errorf("env reached the command as %q", got)
		}
	})
}

// A program path that is not UTF-8 names that program, not another.
func TestProgramPathBytesNameTheProgram(t *testing.T) {
	eachPerRun(t, func(t *testing.T, sb *Sandbox) {
		dir := t.TempDir()
		if err := os.WriteFile(dir+"/a\xffb", []byte("#!/bin/sh\necho the-program-named\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir+"/a\uFFFDb", []byte("#!/bin/sh\necho ANOTHER-PROGRAM\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		c := sb.Command(context.Background(), Spec{Path: dir + "/a\xffb", Dir: dir, Class: ClassAuto, Writable: []string{dir}, Stdout: &out})
		if err := c.Run(); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != "the-program-named\n" {
			t.Errorf("running %q ran another program: %q", dir+"/a\xffb", got)
		}
	})
}
