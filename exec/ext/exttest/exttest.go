// Package exttest builds hitl-ext for tests.
package exttest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hitl-dev/hitl/exec/ext"
	"github.com/hitl-dev/hitl/exec/sandbox"
)

// BuildInto builds hitl-ext into dir and returns its path. The go command
// starts as every process of hitl does, through exec/sandbox (unconfined:
// it writes the build cache).
func BuildInto(dir string) (string, error) {
	path := filepath.Join(dir, ext.Program)
	sb, err := sandbox.New(sandbox.Off, "")
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	build := sb.Command(context.Background(), sandbox.Spec{
		Path: "go", Args: []string{"build", "-o", path, ext.Package},
		Env: os.Environ(), Stdout: &out, Stderr: &out, Class: sandbox.ClassHook,
	})
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", ext.Package, err, out.String())
	}
	return path, nil
}

// Install builds hitl-ext next to the running test binary, where Find
// looks whatever the environment (for a TestMain); it is removed with the
// test binary's directory.
func Install() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return BuildInto(filepath.Dir(self))
}

// Main is a TestMain for a package whose tests need hitl-ext (the google
// provider, the openapi toolset): it is installed next to the test binary
// first.
func Main(m interface{ Run() int }) {
	if _, err := Install(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// Frame is one frame's bytes as they go on the wire.
func Frame(t byte, id uint32, payload string) []byte {
	var h [9]byte
	binary.BigEndian.PutUint32(h[:4], uint32(len(payload)+5))
	h[4] = t
	binary.BigEndian.PutUint32(h[5:], id)
	return append(h[:], payload...)
}

// Hello is a hitl-ext's first frame, of this protocol.
var Hello = Frame(ext.THello, 0, fmt.Sprintf(`{"proto":%d,"version":"test"}`, ext.Proto))

// Fake writes a stand-in for hitl-ext into a new directory of t: a shell
// script that writes out (its first frames) and then runs rest.
func Fake(t testing.TB, out []byte, rest string) string {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "out.bin")
	if err := os.WriteFile(data, out, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ext.Program)
	if err := os.WriteFile(path, []byte("#!/bin/sh\ncat "+data+"\n"+rest+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
