package cmd

import "syscall"

const sigPIPE = syscall.SIGPIPE
