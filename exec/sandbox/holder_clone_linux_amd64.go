package sandbox

// canCloneHolder: the holder is a clone of the init that shares its
// memory and runs cloneHolder's few system calls (holder_linux_amd64.s).
const canCloneHolder = true

// cloneHolder starts the holder on stack (its top), keeping only the
// descriptor lifeline: the holder's pid, or the errno of the clone.
//
//go:noescape
func cloneHolder(stack uintptr, lifeline int32) (pid int64, errno int64)
