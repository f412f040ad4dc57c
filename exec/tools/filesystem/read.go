package filesystem

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/hitl-dev/hitl/exec"
)

type readFileArgs struct {
	Path string `json:"path"`
}

type readMultipleArgs struct {
	Paths []string `json:"paths"`
	JSON  bool     `json:"json"`
}

// fileText is one file read for the model.
type fileText struct {
	text string // the content, or why there is none
	err  bool   // text says why nothing was read
}

func (t *Toolset) readFile(ctx context.Context, raw json.RawMessage) (exec.Result, error) {
	var a readFileArgs
	if err := decode(raw, &a); err != nil {
		return errorResult("%v", err), nil
	}
	if a.Path == "" {
		return errorResult("path is empty: give the file to read"), nil
	}
	ft := t.readText(a.Path, MaxFileSize)
	return exec.Result{Text: ft.text, IsError: ft.err}, nil
}

func (t *Toolset) readMultipleFiles(ctx context.Context, raw json.RawMessage) (exec.Result, error) {
	var a readMultipleArgs
	if err := decode(raw, &a); err != nil {
		return errorResult("%v", err), nil
	}
	if len(a.Paths) == 0 {
		return errorResult("paths is empty: give the files to read"), nil
	}
	if len(a.Paths) > maxPaths {
		return errorResult("paths names %d files; read at most %d in one call", len(a.Paths), maxPaths), nil
	}
	type pathContent struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	var out []pathContent
	left := MaxFileSize
	for _, p := range a.Paths {
		if err := ctx.Err(); err != nil {
			return exec.Result{}, err
		}
		var ft fileText
		if left <= 0 {
			ft.text = fmt.Sprintf("(not read: this result reached its %s bound; read the file on its own)", sizeText(MaxFileSize))
		} else {
			ft = t.readText(p, left)
			left -= len(ft.text)
		}
		out = append(out, pathContent{Path: p, Content: ft.text})
	}
	if a.JSON {
		b, err := json.Marshal(out)
		if err != nil {
			return errorResult("cannot format the result as JSON: %v", err), nil
		}
		return exec.Result{Text: string(b)}, nil
	}
	var b strings.Builder
	for _, pc := range out {
		fmt.Fprintf(&b, "=== %s ===\n%s\n\n", pc.Path, pc.Content)
	}
	return exec.Result{Text: b.String()}, nil
}

// readText reads the file p names, at most limit bytes of it, as text for
// the model: a longer file is cut with a note, a binary one is described.
func (t *Toolset) readText(p string, limit int) fileText {
	tg, err := t.resolve(p)
	if err != nil {
		return fileText{text: err.Error(), err: true}
	}
	data, size, err := tg.readRegular(limit)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fileText{text: "not found", err: true}
		}
		return fileText{text: err.Error(), err: true}
	}
	if isBinary(data) {
		return fileText{text: fmt.Sprintf("(binary file, %d bytes, not shown)", size)}
	}
	if int64(len(data)) < size {
		cut := len(data)
		for i := 0; i < utf8.UTFMax && cut > 0; i++ { // drop a character cut in two
			if r, n := utf8.DecodeLastRune(data[:cut]); r != utf8.RuneError || n != 1 {
				break
			}
			cut--
		}
		return fileText{text: string(data[:cut]) + fmt.Sprintf("\n\n[cut: the file is %d bytes; the first %d are shown]", size, cut)}
	}
	return fileText{text: string(data)}
}

// readRegular reads at most limit bytes of the regular file tg names and
// returns them with the file's size. The file is opened through the root
// (no escape by a symlink swapped in) without blocking, and anything but a
// regular file (a directory, a FIFO, a device) is refused.
func (tg target) readRegular(limit int) ([]byte, int64, error) {
	if err := tg.notSymlink(); err != nil {
		return nil, 0, err
	}
	f, err := tg.root.os.OpenFile(tg.rel, os.O_RDONLY|syscall.O_NONBLOCK|oNoFollow, 0)
	if err != nil {
		return nil, 0, tg.opError(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if st.IsDir() {
		return nil, 0, fmt.Errorf("%s is a directory: use list_directory or directory_tree", tg.given)
	}
	if !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is not a regular file (%s): not read", tg.given, st.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)))
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", tg.given, err)
	}
	return data, st.Size(), nil
}

// notSymlink refuses a checked path that ends in a symlink: resolve
// followed every symlink that leads somewhere, so one left leads nowhere
// (or was swapped in after the check). It is never followed.
func (tg target) notSymlink() error {
	if st, err := tg.root.os.Lstat(tg.rel); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symlink that leads nowhere inside the working directory: not followed", tg.given)
	}
	return nil
}

// opError words an error of the root's file operation: an escape found
// at the moment of use (a symlink swapped in after the check) is said so.
func (tg target) opError(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if errors.Is(err, syscall.ELOOP) {
		// The checked path ends in a symlink only when it leads nowhere or
		// was swapped in after the check: never followed.
		return fmt.Errorf("%s is a symlink that leads nowhere inside the working directory: not followed", tg.given)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes") {
		return fmt.Errorf("path %q is %w (a symlink leads out of it)", tg.given, errOutside)
	}
	return fmt.Errorf("%s: %w", tg.given, err)
}

// isBinary: a NUL byte in the first 8 KiB, or text there that is not UTF-8.
func isBinary(data []byte) bool {
	head := data
	if len(head) > 8<<10 {
		head = head[:8<<10]
		// Allow a character cut at the end of head.
		for i := 0; i < utf8.UTFMax-1 && len(head) > 0 && !utf8.FullRune(head[lastStart(head):]); i++ {
			head = head[:len(head)-1]
		}
	}
	return bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(head)
}

// lastStart is the index of the last byte of b that can start a character.
func lastStart(b []byte) int {
	i := len(b) - 1
	for i > 0 && !utf8.RuneStart(b[i]) {
		i--
	}
	return i
}

func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
