//go:build linux

package cmd_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// containAttacks are the attack program's channels that DESIGN §15 closes
// (containment by construction), each printing what it managed:
//
//	attack fifo PATH TEXT        write TEXT into a named pipe
//	attack unix PATH TEXT        connect to a unix socket and send TEXT
//	attack tcp ADDRFILE          connect to the loopback address in ADDRFILE
//	attack rename OLD NEW        rename a directory (a parent of the state dir)
//	attack handle DIR            read DIR/session.key through DIR's inode, under what is mounted on it
//	attack linger FILE           leave a setsid child behind, marked by FILE
//
// and the test's own helpers, run outside any sandbox:
//
//	attack serve-unix PATH OUT   accept unix connections, append what comes to OUT (10 s)
//	attack serve-tcp ADDRFILE OUT  the same on loopback TCP, its address in ADDRFILE
//	attack alive FILE            say whether the child FILE marks still runs (2 s grace)
//	attack read-fifo-make PATH   make a named pipe
//	attack read-fifo PATH OUT    read a named pipe for 10 s, appending to OUT
var containAttacks = map[string]func(args []string){
	"fifo": func(a []string) { tryWrite("fifo "+a[0], a[0], a[1]+"\n") },
	"unix": func(a []string) {
		c, err := net.DialTimeout("unix", a[0], 2*time.Second)
		if err != nil {
			fmt.Printf("unix socket %s: refused: %v\n", a[0], err)
			return
		}
		defer c.Close()
		_, _ = c.Write([]byte(a[1] + "\n"))
		fmt.Printf("unix socket %s: CONNECTED\n", a[0])
	},
	"tcp": func(a []string) {
		addr, err := os.ReadFile(a[0])
		if err != nil {
			fmt.Printf("tcp: no address: %v\n", err)
			return
		}
		c, err := net.DialTimeout("tcp", strings.TrimSpace(string(addr)), 2*time.Second)
		if err != nil {
			fmt.Printf("tcp %s: refused: %v\n", strings.TrimSpace(string(addr)), err)
			return
		}
		defer c.Close()
		_, _ = c.Write([]byte("tcp\n"))
		fmt.Printf("tcp %s: CONNECTED\n", strings.TrimSpace(string(addr)))
	},
	"rename": func(a []string) {
		if err := os.Rename(a[0], a[1]); err != nil {
			fmt.Printf("rename %s: refused: %v\n", a[0], err)
			return
		}
		fmt.Printf("rename %s: RENAMED\n", a[0])
	},
	"linger": func(a []string) {
		// The child is found again by its marker (its pid inside a PID
		// namespace is not the machine's).
		marker := markerOf(a[0])
		self, _ := os.Executable()
		cmd := exec.Command(self, "sleep", marker)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Printf("linger: %v\n", err)
			return
		}
		_ = os.WriteFile(a[0], []byte(marker), 0o644)
		fmt.Printf("linger: left %s behind\n", marker)
	},
	"sleep":  func([]string) { time.Sleep(30 * time.Second) },
	"handle": func(a []string) { fmt.Println(readByHandle(a[0])) },
	"serve-unix": func(a []string) {
		_ = os.Remove(a[0])
		l, err := net.Listen("unix", a[0])
		if err != nil {
			fmt.Println(err)
			return
		}
		serve(l, a[1])
	},
	"serve-tcp": func(a []string) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Println(err)
			return
		}
		_ = os.WriteFile(a[0], []byte(l.Addr().String()), 0o644)
		serve(l, a[1])
	},
	"alive": func(a []string) {
		marker := markerOf(a[0])
		for i := 0; i < 200; i++ {
			pids := pidsWithArg(marker)
			live := 0
			for _, pid := range pids {
				if running(pid) {
					live = pid
				}
			}
			if live == 0 {
				fmt.Printf("%s: gone\n", marker)
				return
			}
			if i == 199 {
				fmt.Printf("%s: SURVIVED as %d\n", marker, live)
				_ = syscall.Kill(live, syscall.SIGKILL)
			}
			time.Sleep(10 * time.Millisecond)
		}
	},
	"read-fifo-make": func(a []string) {
		if err := syscall.Mkfifo(a[0], 0o666); err != nil {
			fmt.Println(err)
		}
	},
	"read-fifo": func(a []string) {
		f, err := os.OpenFile(a[0], os.O_RDWR, 0) // never blocks, never sees EOF
		if err != nil {
			fmt.Println(err)
			return
		}
		go func() {
			buf := make([]byte, 4096)
			for {
				n, err := f.Read(buf)
				if n > 0 {
					appendTo(a[1], buf[:n])
				}
				if err != nil {
					return
				}
			}
		}()
		time.Sleep(10 * time.Second)
	},
}

// markerOf is the argument that names a lingering child of the attack
// program: the absolute path of its file, unique to a script.
func markerOf(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	return "linger:" + abs
}

// running says whether pid runs (a zombie does not).
func running(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(data), ')')
	return i > 0 && i+2 < len(data) && data[i+2] != 'Z'
}

func serve(l net.Listener, out string) {
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			n, _ := c.Read(buf)
			appendTo(out, buf[:n])
			c.Close()
		}
	}()
	time.Sleep(10 * time.Second)
	l.Close()
}

func appendTo(path string, data []byte) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(data)
}

// readByHandle finds dir's inode in its parent's listing (the directory
// beneath whatever is mounted on it), opens it by a handle
// (open_by_handle_at, ext4's and tmpfs's inode-and-generation kind with
// generation 0, which they do not check) and reads its session.key.
func readByHandle(dir string) string {
	refused := func(err error) string { return fmt.Sprintf("handle %s: refused: %v", dir, err) }
	parent, err := os.Open(filepath.Dir(dir))
	if err != nil {
		return refused(err)
	}
	defer parent.Close()
	var ino uint64
	buf := make([]byte, 64<<10)
	for ino == 0 {
		n, err := unix.Getdents(int(parent.Fd()), buf)
		if err != nil || n <= 0 {
			break
		}
		for off := 0; off+19 <= n; {
			reclen := int(binary.LittleEndian.Uint16(buf[off+16:]))
			name := buf[off+19 : off+reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if string(name) == filepath.Base(dir) {
				ino = binary.LittleEndian.Uint64(buf[off:])
			}
			off += reclen
		}
	}
	if ino == 0 {
		return refused(fmt.Errorf("not listed"))
	}
	var handle [8]byte
	binary.LittleEndian.PutUint32(handle[:], uint32(ino))
	fd, err := unix.OpenByHandleAt(int(parent.Fd()), unix.NewFileHandle(1, handle[:]), unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return refused(err)
	}
	defer unix.Close(fd)
	key, err := unix.Openat(fd, "session.key", unix.O_RDONLY, 0)
	if err != nil {
		return refused(err)
	}
	f := os.NewFile(uintptr(key), "session.key")
	defer f.Close()
	data := make([]byte, 256)
	n, _ := f.Read(data)
	return fmt.Sprintf("handle %s: READ %q", dir, bytes.TrimSpace(data[:n]))
}
