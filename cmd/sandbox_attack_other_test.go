//go:build !linux

package cmd_test

import "fmt"

// attackMain: the sandbox attacks are Linux's (no sandbox elsewhere yet).
func attackMain() int {
	fmt.Println("no hitl process visible")
	return 0
}

// sandboxCondition: no mechanism outside Linux yet.
func sandboxCondition(string) (bool, error) { return false, nil }
