package schema

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// TestMain compiles from several goroutines at once before any other test,
// so the first Compile of the process runs concurrently: `go test -race`
// checks it, and each schema must still have its keyword values checked (a
// bad keyword value is refused).
func TestMain(m *testing.M) {
	if err := concurrentFirstCompile(8); err != nil {
		fmt.Fprintln(os.Stderr, "concurrent first Compile:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func concurrentFirstCompile(n int) error {
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			good := fmt.Sprintf(`{"type":"integer","minimum":%d}`, i)
			s, err := Compile([]byte(good))
			if err != nil {
				errs <- fmt.Errorf("%s: %v", good, err)
				return
			}
			if err := s.Validate([]byte(fmt.Sprint(i - 1))); err == nil {
				errs <- fmt.Errorf("%s accepted %d", good, i-1)
			}
			// Refused only by the metaschema: minimum must be a number.
			if _, err := Compile([]byte(`{"type":"integer","minimum":"x"}`)); err == nil {
				errs <- fmt.Errorf("a schema that breaks its metaschema compiled")
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	return <-errs
}
