package sandbox

import (
	osexec "os/exec"
	"path/filepath"
	"strings"
)

// defaultPath is the search path when env has no PATH.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// LookPath finds file as execvp would with env's PATH, a name holding a
// slash relative to dir. Only absolute PATH entries are searched: an empty
// entry (PATH=/usr/bin:, a common slip) or a relative one would find a
// program planted in the working directory, so they are skipped, as Go's
// exec.LookPath refuses them (ErrDot).
func LookPath(file, dir string, env []string) (string, error) { return lookPath(file, dir, env) }

func lookPath(file, dir string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		p := file
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", &osexec.Error{Name: file, Err: err}
		}
		return filepath.Abs(p)
	}
	for _, d := range searchPath(env) {
		p := filepath.Join(d, file)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", &osexec.Error{Name: file, Err: osexec.ErrNotFound}
}

// searchPath is env's PATH (the last one set wins, else defaultPath)
// without its empty and relative entries.
func searchPath(env []string) []string {
	pathVar := defaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	var dirs []string
	for _, d := range filepath.SplitList(pathVar) {
		if filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}
