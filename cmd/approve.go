package cmd

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/hitl-dev/hitl/exec/run"
	"github.com/hitl-dev/hitl/exec/sandbox"
	"github.com/hitl-dev/hitl/prompt/approver"
)

// ApproveOptions are the flags that carry questions away from the runner
// and record who answered (DESIGN §14); exec and resume share them.
type ApproveOptions struct {
	Approvers       []string
	ApproverTimeout time.Duration
	SignKey         string
}

func (o *ApproveOptions) addFlags(f *pflag.FlagSet) {
	f.StringArrayVar(&o.Approvers, "approver", nil, "ask `CMD|URL` after the answers file, before the front end: a program (JSON on stdin, an answer line on stdout; no shell) or a webhook (https, or http to loopback; signed with $HITL_APPROVER_SECRET); repeatable (env HITL_APPROVER)")
	f.DurationVar(&o.ApproverTimeout, "approver-timeout", approver.DefaultTimeout, "an approver not answering within `DURATION` answers nothing")
	f.StringVar(&o.SignKey, "sign-key", "", "sign each receipt with the SSH private key `FILE`, or ssh-agent: for the first key of $SSH_AUTH_SOCK (docs/approvers.md)")
}

// approvers checks --approver (and HITL_APPROVER): each must be an http(s)
// URL (with HITL_APPROVER_SECRET set) or an executable.
func (o *ApproveOptions) approvers(ios *IOStreams) ([]run.Approver, error) {
	specs := o.Approvers
	if len(specs) == 0 {
		if env := strings.TrimSpace(ios.Getenv("HITL_APPROVER")); env != "" {
			specs = []string{env}
		}
	}
	if len(specs) > 0 && o.ApproverTimeout <= 0 {
		return nil, usagef("--approver-timeout %s: must be more than 0", o.ApproverTimeout)
	}
	var out []run.Approver
	for _, s := range specs {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
			u, err := approver.CheckURL(s)
			if err != nil {
				return nil, usagef("--approver %v", err)
			}
			secret := ios.Getenv(approver.SecretEnv)
			if secret == "" {
				return nil, usagef("--approver %s: a webhook signs each question: set %s to its secret (whsec_…, base64)", u.Redacted(), approver.SecretEnv)
			}
			if _, err := approver.NewWebhook(u, secret, nil, approver.Options{}); err != nil {
				return nil, usagef("--approver %s: %v", u.Redacted(), err)
			}
			out = append(out, run.Approver{URL: u, Secret: secret})
			continue
		}
		argv := strings.Fields(s)
		if len(argv) == 0 {
			return nil, usagef("--approver: empty; give a program or an http(s) URL")
		}
		path, err := sandbox.LookPath(argv[0], "", os.Environ())
		if err != nil {
			return nil, usagef("--approver %q: neither an executable (%v) nor an http(s) URL", s, err)
		}
		// The program found here is the one run, whatever directory the
		// run's commands use (--working-dir).
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		out = append(out, run.Approver{Argv: append([]string{path}, argv[1:]...), Name: s})
	}
	return out, nil
}

// signer loads --sign-key: an SSH private key file (not encrypted: hitl
// asks no passphrase), or ssh-agent: for the agent's first key.
func (o *ApproveOptions) signer(ios *IOStreams) (ssh.Signer, error) {
	switch o.SignKey {
	case "":
		return nil, nil
	case "ssh-agent:":
		sock := ios.Getenv("SSH_AUTH_SOCK")
		if sock == "" {
			return nil, usagef("--sign-key ssh-agent:: SSH_AUTH_SOCK is not set")
		}
		conn, err := net.Dial("unix", sock)
		if err != nil {
			return nil, usagef("--sign-key ssh-agent:: %v", err)
		}
		signers, err := agent.NewClient(conn).Signers()
		if err != nil || len(signers) == 0 {
			return nil, usagef("--sign-key ssh-agent:: the agent holds no key (%v)", err)
		}
		return signers[0], nil
	}
	data, err := os.ReadFile(o.SignKey)
	if err != nil {
		return nil, usagef("--sign-key %s: %v", o.SignKey, err)
	}
	s, err := ssh.ParsePrivateKey(data)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) {
		return nil, usagef("--sign-key %s: the key is encrypted; load it into ssh-agent and pass --sign-key ssh-agent:", o.SignKey)
	}
	if err != nil {
		return nil, usagef("--sign-key %s: not an SSH private key: %v", o.SignKey, err)
	}
	return s, nil
}

func (o *ApproveOptions) apply(ios *IOStreams, p *run.Prompting) error {
	list, err := o.approvers(ios)
	if err != nil {
		return err
	}
	s, err := o.signer(ios)
	if err != nil {
		return err
	}
	p.Approvers, p.ApproverTimeout, p.SignKey = list, o.ApproverTimeout, s
	return nil
}
