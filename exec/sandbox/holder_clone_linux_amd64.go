package sandbox

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The assembly reads msg_controllen at 40, and the spawnBlock must fit in
// its page.
var (
	_ = [1]struct{}{}[unsafe.Offsetof(unix.Msghdr{}.Controllen)-40]
	_ = [1]struct{}{}[unsafe.Sizeof(spawnBlock{})/holderStack]
)

// canCloneHolder: the holder is a clone of the init that shares its
// memory and runs cloneHolder's few system calls (holder_linux_amd64.s).
const canCloneHolder = true

// holderSpawns: a cloned holder can start its worker's commands itself
// (spawnBlock).
const holderSpawns = true

// cloneHolder starts the holder on stack (its top), keeping only the
// descriptor lifeline: the holder's pid, or the errno of the clone. With
// blk (a *spawnBlock) not 0, it starts the commands blk describes.
//
//go:noescape
func cloneHolder(stack uintptr, lifeline int32, blk uintptr) (pid int64, errno int64)
