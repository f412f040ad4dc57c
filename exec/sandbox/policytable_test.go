package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The policy table (testdata/policy.table) is the sandbox's policy as data
// (DESIGN §15): for each channel a child could use to reach past its class,
// under each mechanism, for each class of child, whether the probe
// (internal/sandboxprobe) reaches it. TestPolicyTable checks it from
// inside; docs/security.md shows it (TestPolicyTableInDocs).

const policyTableFile = "testdata/policy.table"

// policyMechanisms and policyClasses are the table's columns, in order.
var (
	policyMechanisms = []string{"bwrap+landlock", "landlock", "bwrap", "none"}
	policyClasses    = []string{"auto", "approved", "script", "hook", "approver", "mcp"}
)

// The outcomes a cell may expect.
const (
	expectOK     = "ok"     // the probe reaches it, as root and as an unprivileged user
	expectDenied = "denied" // the probe never reaches it
	expectRoot   = "root"   // only as root: the OS itself refuses an unprivileged user
	expectAny    = "any"    // depends on the machine (the table's comment says why)
	// only as an unprivileged user: hitl's own limit there (the table's
	// comment says why)
	expectUser = "user"
)

var policyOutcomes = []string{expectOK, expectDenied, expectRoot, expectAny, expectUser}

// policyRow is one line of the table: a channel under a mechanism, the
// expected outcome per class (policyClasses' order).
type policyRow struct {
	channel, mechanism string
	want               []string
	line               int
}

// policyTable is the parsed table: rows in the file's order.
type policyTable struct {
	rows []policyRow
}

// channels are the table's channels in the order they first appear.
func (pt policyTable) channels() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range pt.rows {
		if !seen[r.channel] {
			seen[r.channel] = true
			out = append(out, r.channel)
		}
	}
	return out
}

// want is the expected outcome of a cell, "" when the table has no row.
func (pt policyTable) want(channel, mechanism, class string) string {
	for _, r := range pt.rows {
		if r.channel == channel && r.mechanism == mechanism {
			for i, c := range policyClasses {
				if c == class {
					return r.want[i]
				}
			}
		}
	}
	return ""
}

// parsePolicyTable reads the table. Lines: '#' comments (also after the
// cells), blank lines, one header "channel mechanism CLASS..." naming
// policyClasses in order, then "CHANNEL MECHANISM OUTCOME..." rows; every
// channel has a row for every mechanism, once. Errors say FILE:LINE:COL.
func parsePolicyTable(name string, data []byte) (policyTable, error) {
	var pt policyTable
	header := false
	seen := map[[2]string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields, cols := fieldsAt(line)
		if len(fields) == 0 {
			continue
		}
		errAt := func(i int, format string, args ...any) error {
			return fmt.Errorf("%s:%d:%d: %s", name, n, cols[i], fmt.Sprintf(format, args...))
		}
		if !header {
			want := append([]string{"channel", "mechanism"}, policyClasses...)
			for i, w := range want {
				if i >= len(fields) {
					return pt, fmt.Errorf("%s:%d:%d: the header ends early: want %q", name, n, len(line)+1, strings.Join(want, " "))
				}
				if fields[i] != w {
					return pt, errAt(i, "header column %d is %q, want %q (the header is %q)", i+1, fields[i], w, strings.Join(want, " "))
				}
			}
			if len(fields) > len(want) {
				return pt, errAt(len(want), "the header has an extra column %q", fields[len(want)])
			}
			header = true
			continue
		}
		if len(fields) != 2+len(policyClasses) {
			return pt, errAt(0, "a row is CHANNEL MECHANISM and %d outcomes (%s), got %d fields",
				len(policyClasses), strings.Join(policyClasses, " "), len(fields))
		}
		if !contains(policyMechanisms, fields[1]) {
			return pt, errAt(1, "unknown mechanism %q: want one of %s", fields[1], strings.Join(policyMechanisms, ", "))
		}
		key := [2]string{fields[0], fields[1]}
		if prev, dup := seen[key]; dup {
			return pt, errAt(0, "%s under %s again (first on line %d)", fields[0], fields[1], prev)
		}
		seen[key] = n
		for i, o := range fields[2:] {
			if !contains(policyOutcomes, o) {
				return pt, errAt(2+i, "unknown outcome %q for %s: want one of %s", o, policyClasses[i], strings.Join(policyOutcomes, ", "))
			}
		}
		pt.rows = append(pt.rows, policyRow{channel: fields[0], mechanism: fields[1], want: fields[2:], line: n})
	}
	if err := sc.Err(); err != nil {
		return pt, fmt.Errorf("%s: %w", name, err)
	}
	if !header {
		return pt, fmt.Errorf("%s:1:1: no header line %q", name, "channel mechanism "+strings.Join(policyClasses, " "))
	}
	for _, ch := range pt.channels() {
		for _, m := range policyMechanisms {
			if _, ok := seen[[2]string{ch, m}]; !ok {
				return pt, fmt.Errorf("%s: channel %s has no row for mechanism %s", name, ch, m)
			}
		}
	}
	return pt, nil
}

// fieldsAt splits line at spaces and tabs, with each field's column
// (1-based, in bytes).
func fieldsAt(line string) (fields []string, cols []int) {
	start := -1
	for i := 0; i <= len(line); i++ {
		if i == len(line) || line[i] == ' ' || line[i] == '\t' {
			if start >= 0 {
				fields = append(fields, line[start:i])
				cols = append(cols, start+1)
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return fields, cols
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func readPolicyTable(t *testing.T) policyTable {
	t.Helper()
	data, err := os.ReadFile(policyTableFile)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := parsePolicyTable(policyTableFile, data)
	if err != nil {
		t.Fatal(err)
	}
	return pt
}

// policyClassTitles are the classes as docs/security.md names them.
var policyClassTitles = map[string]string{
	"auto": "auto-allowed", "approved": "approved", "script": "script tool",
	"hook": "hook", "approver": "approver", "mcp": "MCP server",
}

// policyChannelTitles say what each channel is, for docs/security.md.
var policyChannelTitles = map[string]string{
	"write-workdir":       "write in the run's working directory",
	"write-outside":       "write outside it",
	"write-via-cwd":       "write outside it, started there (`cwd`)",
	"write-proc-sys":      "open `/proc/sys/kernel/msgmax` for writing",
	"write-sys":           "open a `/sys` file for writing",
	"write-cgroup":        "open a cgroup file for writing",
	"fifo-write":          "write into a named pipe outside",
	"unix-connect":        "connect to a unix socket outside",
	"rename-state-parent": "rename the state dir's parent",
	"read-state":          "read the state dir (`session.key`)",
	"read-ssh":            "read `~/.ssh/id_ed25519`",
	"read-netrc":          "read `~/.netrc`",
	"read-deny":           "read a `deny_read` path",
	"read-hitl-fd":        "open hitl's `/proc/PID/fd/0`",
	"read-hitl-mem":       "open hitl's `/proc/PID/mem`",
	"signal-hitl":         "signal hitl (`SIGCONT`)",
	"ptrace-hitl":         "ptrace hitl",
	"open-dev-tty":        "open `/dev/tty`",
	"open-dev-pts":        "open the person's `/dev/pts/N`",
	"tiocsti":             "push input into the person's terminal (`TIOCSTI`)",
	"connect-loopback":    "connect to a loopback listener outside",
	"mknod":               "make a device node",
	"mount":               "mount a tmpfs",
	"unshare":             "unshare a user and mount namespace",
	"setsid-survive":      "a `setsid` child outlives its owner",
	"signal-init":         "signal the run's sandbox's init (every way: process, thread, pidfd)",
	"read-init-fd":        "list the init's descriptors or read its environment",
	"signal-sibling":      "signal another command of the same class and run",
}

// policyMechanismTitles are the mechanisms as docs/security.md names them.
var policyMechanismTitles = map[string]string{
	"bwrap+landlock": "bwrap + Landlock",
	"landlock":       "Landlock only",
	"bwrap":          "bwrap only (nothing is auto-allowed)",
	"none":           "none (`--no-sandbox`)",
}

// policyOutcomeWords are the outcomes as docs/security.md writes them.
var policyOutcomeWords = map[string]string{
	expectOK: "yes", expectDenied: "no", expectRoot: "root only", expectAny: "varies", expectUser: "not root",
}

// policyMarkdown is the table as docs/security.md shows it: a row per channel, a
// column per mechanism; a cell says the outcome when every class has the
// same one, else the outcome of each group of classes.
func policyMarkdown(pt policyTable) string {
	var b strings.Builder
	b.WriteString("Can a child reach it? Checked from inside by `exec/sandbox`'s policy table test (a probe run as each class\n")
	b.WriteString("of child under each mechanism, as root and as an unprivileged user), generated from\n")
	b.WriteString("[`exec/sandbox/testdata/policy.table`](../exec/sandbox/testdata/policy.table).\n")
	b.WriteString("\"root only\": the OS itself refuses an unprivileged user; \"varies\": depends on the machine; \"not root\": only without root, where Landlock alone cannot make a PID namespace (see the table's comments).\n\n")
	b.WriteString("| channel |")
	for _, m := range policyMechanisms {
		fmt.Fprintf(&b, " %s |", policyMechanismTitles[m])
	}
	b.WriteString("\n|---|")
	for range policyMechanisms {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, ch := range pt.channels() {
		title := policyChannelTitles[ch]
		if title == "" {
			title = ch
		}
		fmt.Fprintf(&b, "| %s |", title)
		for _, m := range policyMechanisms {
			var want []string
			for _, r := range pt.rows {
				if r.channel == ch && r.mechanism == m {
					want = r.want
				}
			}
			fmt.Fprintf(&b, " %s |", policyCell(want))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// policyCell groups the classes by outcome: "no" when all agree, else
// "auto-allowed: no; others: yes" when one class differs, else every group.
func policyCell(want []string) string {
	var order []string
	groups := map[string][]string{}
	for i, o := range want {
		if _, ok := groups[o]; !ok {
			order = append(order, o)
		}
		groups[o] = append(groups[o], policyClassTitles[policyClasses[i]])
	}
	if len(order) == 1 {
		return policyOutcomeWords[order[0]]
	}
	if len(order) == 2 {
		for i, o := range order {
			if len(groups[o]) == 1 {
				rest := order[1-i]
				return fmt.Sprintf("%s: %s; others: %s", groups[o][0], policyOutcomeWords[o], policyOutcomeWords[rest])
			}
		}
	}
	parts := make([]string, len(order))
	for i, o := range order {
		parts[i] = strings.Join(groups[o], ", ") + ": " + policyOutcomeWords[o]
	}
	return strings.Join(parts, "; ")
}

const (
	policyBegin = "<!-- policy-table -->"
	policyEnd   = "<!-- /policy-table -->"
	// policyUpdateEnv rewrites docs/security.md's block from the table.
	policyUpdateEnv = "HITL_UPDATE_POLICY_TABLE"
)

// docs/security.md shows the policy table as generated from
// testdata/policy.table, between the markers.
func TestPolicyTableInDocs(t *testing.T) {
	readme := filepath.Join("..", "..", "docs", "security.md")
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	begin := strings.Index(text, policyBegin)
	if begin < 0 {
		t.Skipf("docs/security.md has no %s block yet: put the lines %s and %s in it, then run %s=1 go test ./exec/sandbox -run TestPolicyTableInDocs",
			policyBegin, policyBegin, policyEnd, policyUpdateEnv)
	}
	rel := strings.Index(text[begin:], policyEnd)
	if rel < 0 {
		t.Fatalf("docs/security.md has %s but no %s after it", policyBegin, policyEnd)
	}
	end := begin + rel
	want := policyBegin + "\n" + policyMarkdown(readPolicyTable(t))
	got := text[begin:end]
	if got == want {
		return
	}
	if os.Getenv(policyUpdateEnv) != "" {
		if err := os.WriteFile(readme, []byte(text[:begin]+want+text[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the policy table in %s", readme)
		return
	}
	t.Errorf("docs/security.md's policy table differs from %s; run %s=1 go test ./exec/sandbox -run TestPolicyTableInDocs to rewrite it\n--- docs/security.md\n%s\n--- generated\n%s",
		policyTableFile, policyUpdateEnv, got, want)
}

// Every channel docs/security.md names has a title, and the table is well
// formed.
func TestPolicyTableParses(t *testing.T) {
	pt := readPolicyTable(t)
	for _, ch := range pt.channels() {
		if policyChannelTitles[ch] == "" {
			t.Errorf("channel %s has no title for docs/security.md (policyChannelTitles)", ch)
		}
	}
}

func TestParsePolicyTableErrors(t *testing.T) {
	head := "channel mechanism auto approved script hook approver mcp\n"
	row := func(ch, m string) string { return ch + " " + m + " ok ok ok ok ok ok\n" }
	all := func(ch string) string {
		var s string
		for _, m := range policyMechanisms {
			s += row(ch, m)
		}
		return s
	}
	tests := []struct {
		name, data, want string
	}{
		{"no header", "", "t:1:1: no header line"},
		{"wrong header", "channel mechanism auto seen\n", "t:1:24: header column 4 is \"seen\", want \"approved\""},
		{"unknown outcome", head + "x none ok ok yes ok ok ok\n", "t:2:14: unknown outcome \"yes\" for script"},
		{"unknown mechanism", head + "x seatbelt ok ok ok ok ok ok\n", "t:2:3: unknown mechanism \"seatbelt\""},
		{"short row", head + "x none ok ok\n", "t:2:1: a row is CHANNEL MECHANISM and 6 outcomes"},
		{"twice", head + all("x") + row("x", "none"), "t:6:1: x under none again (first on line 5)"},
		{"missing mechanism", head + row("x", "none"), "t: channel x has no row for mechanism bwrap+landlock"},
		{"comment after the cells", head + strings.ReplaceAll(all("x"), "\n", " # why\n"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parsePolicyTable("t", []byte(tt.data))
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
