package sandbox

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// Messages sent at once by many goroutines, each large (an environment of
// megabytes) and carrying descriptors, arrive whole, each with its own
// descriptors, however the non-blocking socket splits them.
func TestWireCarriesMessagesWhole(t *testing.T) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, err := newSock(pair[0])
	if err != nil {
		t.Fatal(err)
	}
	b, err := newSock(pair[1])
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	defer b.close()
	const senders, each = 6, 4
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, senders*each)
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r, w, err := os.Pipe()
				if err != nil {
					errs <- err
					return
				}
				id := uint64(s*each + i + 1)
				// The descriptor's pipe holds the message's id, to tell
				// whose descriptors came with it.
				fmt.Fprintf(w, "%d", id)
				w.Close()
				env := []string{strings.Repeat(string(rune('a'+s)), (1<<20)*(i+1))}
				mu.Lock()
				err = a.send(request{ID: id, Env: env}, []int{int(r.Fd()), int(r.Fd()), int(r.Fd())})
				mu.Unlock()
				r.Close()
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	for range senders * each {
		var req request
		files, err := b.recv(&req)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 3 {
			t.Fatalf("message %d came with %d descriptors", req.ID, len(files))
		}
		var got [32]byte
		n, _ := files[0].Read(got[:])
		closeAll(files)
		if string(got[:n]) != fmt.Sprint(req.ID) {
			t.Errorf("message %d came with message %q's descriptors", req.ID, got[:n])
		}
		s, i := int(req.ID-1)/each, int(req.ID-1)%each
		if len(req.Env) != 1 || req.Env[0] != strings.Repeat(string(rune('a'+s)), (1<<20)*(i+1)) {
			t.Errorf("message %d's environment did not arrive whole", req.ID)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A goroutine waiting for a message learns of the other end's shutdown
// and of its own end's: io.EOF, never a wait for ever.
func TestWireEndsWithShutdown(t *testing.T) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newSock(pair[0])
	b, _ := newSock(pair[1])
	defer a.close()
	defer b.close()
	done := make(chan error, 2)
	go func() { _, err := b.recv(&request{}); done <- err }()
	go func() { _, err := a.recv(&request{}); done <- err }()
	a.shutdown()
	for range 2 {
		if err := <-done; err == nil {
			t.Error("a receive after shutdown succeeded")
		}
	}
}

// A request arrives as it was sent, byte for byte: bytes that are not
// UTF-8, NULs, empty strings and lists, a long environment.
func TestRequestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  request
	}{
		{"empty", request{}},
		{"a command", request{ID: 7, Prog: "/bin/true", Argv: []string{"/bin/true"}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: "/tmp/w"}},
		{"odd bytes", request{ID: 1 << 63, Prog: "/x\xff\x00y", Argv: []string{"", "\xc3\x28", "a\x00b"}, Env: []string{"K=\xfe\xff"}, Dir: "/d\x80"}},
		{"empty entries", request{ID: 2, Argv: []string{"", ""}, Env: []string{""}}},
		{"a long environment", request{ID: 3, Env: []string{strings.Repeat("V=x", 1<<18), strings.Repeat("\xff", 300)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.req.encode()
			if err != nil {
				t.Fatal(err)
			}
			var got request
			if err := got.decode(b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(normal(got), normal(tc.req)) {
				t.Errorf("got %#v, want %#v", got, tc.req)
			}
		})
	}
}

// normal is r with nil lists empty (both encode alike).
func normal(r request) request {
	if r.Argv == nil {
		r.Argv = []string{}
	}
	if r.Env == nil {
		r.Env = []string{}
	}
	return r
}

// A request that is cut short, claims more than it holds, or runs on past
// its end is refused, saying so; never a panic, and no list longer than
// the bytes left could hold.
func TestRequestDecodeRefusesBadBytes(t *testing.T) {
	good, _ := request{ID: 9, Prog: "/bin/true", Argv: []string{"a", "b"}, Env: []string{"E=1"}, Dir: "/"}.encode()
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"nothing", nil, "no id"},
		{"an id cut short", good[:5], "no id"},
		{"no prog", good[:8], "the length of prog"},
		{"prog cut short", good[:10], "the length of prog"},
		{"a length past the end", append(append([]byte{}, good[:8]...), 0xff, 0xff, 0xff, 0xff, 0x0f), "the length of prog"},
		{"a count past the end", append(append([]byte{}, good[:8]...), 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f), "the length of argv"},
		{"a varint too long", append(append([]byte{}, good[:8]...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), "the length of prog"},
		{"env cut short", good[:len(good)-1], "the length of env"},
		{"bytes after the end", append(append([]byte{}, good...), 0), "1 bytes after its end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r request
			err := r.decode(tc.b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("decode = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// Whatever bytes come, decoding ends with a request that encodes back to
// them, or an error: never a panic.
func FuzzRequestDecode(f *testing.F) {
	for _, r := range []request{{}, {ID: 1, Prog: "/bin/sh", Argv: []string{"sh", "-c", "true"}, Env: []string{"A=\xff"}, Dir: "/tmp"}} {
		b, _ := r.encode()
		f.Add(b)
	}
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r request
		if r.decode(b) != nil {
			return
		}
		again, err := r.encode()
		if err != nil {
			t.Fatal(err)
		}
		var r2 request
		if err := r2.decode(again); err != nil || !reflect.DeepEqual(normal(r), normal(r2)) {
			t.Fatalf("a decoded request does not survive its own encoding: %v", err)
		}
	})
}
