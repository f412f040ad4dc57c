package sandbox

import (
	"bytes"
	"fmt"
	"os"
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
				env := [][]byte{bytes.Repeat([]byte{byte('a' + s)}, (1<<20)*(i+1))}
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
		if len(req.Env) != 1 || !bytes.Equal(req.Env[0], bytes.Repeat([]byte{byte('a' + s)}, (1<<20)*(i+1))) {
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
