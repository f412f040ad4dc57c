package permissions

import (
	"fmt"
	"path"
	"strings"
)

var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"ash": true, "fish": true, "csh": true, "tcsh": true, "yash": true, "posh": true,
}

// wrappers run the command given in their arguments.
var wrappers = map[string]bool{
	"exec": true, "command": true, "builtin": true, "env": true, "sudo": true, "doas": true,
	"nice": true, "nohup": true, "timeout": true, "stdbuf": true, "xargs": true, "time": true,
	"setsid": true, "ionice": true, "chroot": true, "busybox": true, "unbuffer": true,
	"flock": true, "watch": true, "strace": true, "ltrace": true, "taskset": true,
	"unshare": true, "runuser": true, "nsenter": true, "chrt": true, "prlimit": true,
	"systemd-run": true, "firejail": true, "catchsegv": true, "faketime": true,
}

// shellOptionRunners run their -c (--command) option's text in a shell:
// flock FILE -c CMD, script -c CMD, su -c, runuser -c, sg GROUP -c.
var shellOptionRunners = map[string]bool{"flock": true, "script": true, "su": true, "runuser": true, "sg": true}

// commandName is the lower-case base name of a command word.
func commandName(word string) string {
	return strings.ToLower(path.Base(word))
}

// nested says why words run shell text that no rule can see: eval, source,
// a shell with -c or reading commands from its input, su -c, and the same
// inside a wrapper. It returns "" otherwise.
func nested(words []string, depth int) string {
	if why := nestedDirect(words); why != "" || depth >= maxDepth {
		return why
	}
	for _, inner := range innerCommands(words) {
		why := ""
		if wrappers[commandName(inner[0])] {
			why = nestedDirect(inner) // its tails are tails of words
		} else {
			why = nested(inner, depth+1)
		}
		if why != "" {
			return why
		}
	}
	return ""
}

func nestedDirect(words []string) string {
	if len(words) == 0 {
		return ""
	}
	switch name := commandName(words[0]); {
	case name == "eval" || name == "source" || name == ".":
		return fmt.Sprintf("runs shell text through %s", name)
	case name == "env" && splitsString(words[1:]):
		return "runs a command line split from one string (env -S), which no rule reads as a shell would"
	case shellOptionRunners[name] && !shells[name]:
		for _, w := range words[1:] {
			if w == "-c" || w == "--command" || strings.HasPrefix(w, "--command=") ||
				(strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w[1:], "c")) {
				return fmt.Sprintf("runs a nested shell (%s -c)", name)
			}
		}
	case shells[name]:
		if _, ok := shellScript(words); ok {
			return fmt.Sprintf("runs a nested shell (%s -c)", name)
		}
		if !hasOperand(words[1:]) {
			return fmt.Sprintf("runs a nested shell reading commands from its input (%s)", name)
		}
	}
	return ""
}

// splitsString says whether env's arguments split a string into a command
// line: -S STRING, -SSTRING, --split-string[=STRING], or -S in a group of
// short options (-iS).
func splitsString(args []string) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case strings.HasPrefix(a, "--split-string"):
			return true
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a[1:], "S"):
			return true
		case !strings.HasPrefix(a, "-") && !strings.Contains(a, "="):
			return false // the command: env's options end here
		}
	}
	return false
}

// shellScript returns the command string of sh -c STRING (any shell, su, or
// a combined flag such as -ec), or eval's arguments.
func shellScript(words []string) (string, bool) {
	if len(words) == 0 {
		return "", false
	}
	name := commandName(words[0])
	if name == "eval" {
		return strings.Join(words[1:], " "), len(words) > 1
	}
	if !shells[name] && name != "su" {
		return "", false
	}
	for i := 1; i < len(words); i++ {
		wd := words[i]
		if wd == "--" || !strings.HasPrefix(wd, "-") && !strings.HasPrefix(wd, "+") {
			break
		}
		if takesArgument(wd) {
			i++
			continue
		}
		if wd == "--command" || !strings.HasPrefix(wd, "--") && strings.Contains(wd[1:], "c") {
			if i+1 < len(words) {
				return words[i+1], true
			}
			return "", true
		}
	}
	return "", false
}

// hasOperand reports whether a shell's arguments name a script to run
// (a word that is not an option); without one it reads commands from its
// input.
func hasOperand(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return i+1 < len(args)
		case a == "-s":
			return false
		case takesArgument(a):
			i++
		case !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+"):
			return true
		}
	}
	return false
}

// takesArgument: shell options whose value is the next word (set -o NAME,
// shopt -O NAME, --rcfile FILE).
func takesArgument(opt string) bool {
	switch opt {
	case "-o", "+o", "-O", "+O", "--rcfile", "--init-file":
		return true
	}
	return false
}

// innerCommands returns the commands that words may run on their behalf:
// for a wrapper every tail that starts with a word that is not an option
// (sudo -u root rm ...: "root ...", "rm ..."; a tail too many is harmless
// for deny rules), for find the -exec commands.
func innerCommands(words []string) [][]string {
	if len(words) < 2 {
		return nil
	}
	name := commandName(words[0])
	var out [][]string
	switch {
	case wrappers[name]:
		for i := 1; i < len(words); i++ {
			if !strings.HasPrefix(words[i], "-") && !strings.Contains(words[i], "=") {
				out = append(out, words[i:])
			}
		}
	case name == "find":
		for i := 1; i < len(words); i++ {
			switch words[i] {
			case "-exec", "-execdir", "-ok", "-okdir":
				j := i + 1
				for j < len(words) && words[j] != ";" && words[j] != "+" {
					j++
				}
				if j > i+1 {
					out = append(out, words[i+1:j])
				}
				i = j
			}
		}
	}
	return out
}
