//go:build !linux

package agentrun

import osexec "os/exec"

func prepare(cmd *osexec.Cmd) {}

func start(cmd *osexec.Cmd) (<-chan error, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	return waited, nil
}
