//go:build linux && !amd64

package sandbox

// canCloneHolder: no clone of the init runs the holder here; it is a fork
// of the init (forkHolder).
const canCloneHolder = false

// holderSpawns: the worker's thread starts the commands here.
const holderSpawns = false

func cloneHolder(uintptr, int32, uintptr) (int64, int64) {
	panic("sandbox: no cloneHolder on this architecture")
}
