package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// probeCacheFile is the file in the state dir that says bwrap ran on this
// machine as it is now (bwrapKey), so that a run does not start bwrap once
// more to find out (DESIGN §15: a run's start-up). Only hitl writes the
// state dir: no child can.
const probeCacheFile = "bwrap-works"

// bwrapKey names what decides whether bwrap at path can run: the binary
// (device, inode, size, change time), the kernel, the user, and the
// settings that allow user namespaces. "" when any of it cannot be read.
func bwrapKey(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	var st unix.Stat_t
	if err := unix.Stat(real, &st); err != nil {
		return ""
	}
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "bwrap %s %d:%d %d %d.%d\n", real, st.Dev, st.Ino, st.Size, st.Ctim.Sec, st.Ctim.Nsec)
	fmt.Fprintf(&b, "kernel %s %s\n", unix.ByteSliceToString(uts.Release[:]), unix.ByteSliceToString(uts.Version[:]))
	fmt.Fprintf(&b, "uid %d\n", os.Geteuid())
	for _, f := range []string{
		"/proc/sys/kernel/unprivileged_userns_clone",
		"/proc/sys/user/max_user_namespaces",
		"/proc/sys/user/max_mnt_namespaces",
		"/proc/sys/user/max_pid_namespaces",
		"/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
	} {
		data, _ := os.ReadFile(f)
		fmt.Fprintf(&b, "%s %s\n", f, bytes.TrimSpace(data))
	}
	return b.String()
}

// cachedProbe is probe (probeBwrap) that trusts, and keeps, the state
// dir's word that bwrap ran here as things are now.
func cachedProbe(stateDir string, probe func() (string, string)) func() (string, string) {
	return func() (string, string) {
		path, err := exec.LookPath("bwrap")
		if err != nil || stateDir == "" {
			return probe()
		}
		key := bwrapKey(path)
		file := filepath.Join(stateDir, probeCacheFile)
		if key != "" {
			if data, err := os.ReadFile(file); err == nil && string(data) == key {
				return path, ""
			}
		}
		path, why := probe()
		if why == "" && key != "" {
			tmp := file + ".tmp"
			if err := os.WriteFile(tmp, []byte(key), 0o600); err == nil {
				_ = os.Rename(tmp, file)
			}
		}
		return path, why
	}
}

// forgetBwrapWorks removes the state dir's word that bwrap runs (it did
// not, after all).
func forgetBwrapWorks(stateDir string) {
	if stateDir != "" {
		_ = os.Remove(filepath.Join(stateDir, probeCacheFile))
	}
}
