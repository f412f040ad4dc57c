package cmd_test

import (
	"testing"

	"github.com/hitl-dev/hitl/config"
	"github.com/hitl-dev/hitl/exec/configcheck"
	"github.com/hitl-dev/hitl/exec/permissions"
)

// TestPreflightPermissions: the pre-push example lets a model read the
// commits unasked, and nothing more. Its allow globs (git log*, ...) also
// match options that write files, so its deny rules must stop those: a
// commit message could tell the model to write one.
func TestPreflightPermissions(t *testing.T) {
	cfg, err := config.Load("../agents/git-preflight.yaml", func(string) (string, bool) { return "", false }, configcheck.Checks())
	if err != nil {
		t.Fatal(err)
	}
	c, err := permissions.New(cfg.Permissions.Allow, cfg.Permissions.Ask, cfg.Permissions.Deny)
	if err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]permissions.Decision{
		"git log --stat --format='%h %an: %s' $PUSH_RANGE":                permissions.None,
		"git log --stat --format='%h %an: %s' --branches --not --remotes": permissions.Allow,
		"git log --{output=/home/me/.bashrc,stat}":                        permissions.Deny,
		"git show abc123": permissions.Allow,
		"git log --format=%B -1 --output=/home/me/.bashrc": permissions.Deny,
		"git log --output /home/me/.bashrc":                permissions.Deny,
		"git diff HEAD~1 --output=x":                       permissions.Deny,
		"git show --output=.git/hooks/pre-push abc123":     permissions.Deny,
		"git difftool -y -x 'touch x' HEAD":                permissions.None,
		"git log":                                          permissions.Allow,
		"git push origin main":                             permissions.Deny,
	} {
		if v := c.Shell("shell", line, map[string]any{"cmd": line}, permissions.DialectPOSIX); v.Decision != want {
			t.Errorf("%q: %s (%+v), want %s", line, v.Decision, v, want)
		}
	}
}
