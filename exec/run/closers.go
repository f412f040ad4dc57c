package run

import "sync"

// closers are what ends with something (the run, its team), closed last
// added first.
type closers struct {
	mu sync.Mutex
	fs []func()
}

func (c *closers) add(f func()) {
	c.mu.Lock()
	c.fs = append(c.fs, f)
	c.mu.Unlock()
}

func (c *closers) closeAll() {
	c.mu.Lock()
	fs := c.fs
	c.fs = nil
	c.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
