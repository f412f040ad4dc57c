package sandbox

import "os"

// machineMounts are this process's mounts (nil when they cannot be read).
func machineMounts() []mountEntry {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	return parseMounts(f)
}
