package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// blankEnviron moves the process's environment into memory of its own
// and overwrites the block the kernel set up at exec, which is what
// /proc/<pid>/environ reads, with zeros. The Go strings of the
// environment point into that block until they are copied, and so does
// the C library's environ under cgo: every variable is cleared and set
// again from a copy first (os.Setenv sets C's too). It checks the block
// reads as zeros afterwards; an error leaves the caller to hide the
// environment another way.
func blankEnviron() error {
	start, end, err := environBlock()
	if err != nil {
		return err
	}
	kept := os.Environ()
	for i, kv := range kept {
		kept[i] = strings.Clone(kv)
	}
	os.Clearenv()
	for _, kv := range kept {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			if err := os.Setenv(k, v); err != nil {
				return fmt.Errorf("setting %s again: %w", k, err)
			}
		}
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	zeros := make([]byte, min(end-start, 64<<10))
	for at := start; at < end && err == nil; at += uint64(len(zeros)) {
		_, err = mem.WriteAt(zeros[:min(uint64(len(zeros)), end-at)], int64(at))
	}
	if cerr := mem.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("overwriting the environment block: %w", err)
	}
	left, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return err
	}
	if len(bytes.Trim(left, "\x00")) != 0 {
		return errors.New("the environment block still reads as text")
	}
	return nil
}

// environBlock is where the environment block is in this process's
// memory: fields 50 and 51 of /proc/self/stat (proc(5)), counted after
// the command name, which may hold spaces and parentheses.
func environBlock() (start, end uint64, err error) {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, err
	}
	fields, err := statFields(data)
	if err != nil {
		return 0, 0, err
	}
	const envStart, envEnd = 50 - 3, 51 - 3
	if len(fields) <= envEnd {
		return 0, 0, fmt.Errorf("/proc/self/stat: %d fields, no environment block", len(fields)+2)
	}
	if start, err = strconv.ParseUint(fields[envStart], 10, 64); err == nil {
		end, err = strconv.ParseUint(fields[envEnd], 10, 64)
	}
	if err != nil || start == 0 || end < start || end-start > maxEnviron {
		return 0, 0, fmt.Errorf("/proc/self/stat: no environment block (%v)", err)
	}
	return start, end, nil
}
