package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hitl-dev/hitl/exec/receipt"
	"github.com/hitl-dev/hitl/exec/session"
	"github.com/hitl-dev/hitl/internal/termtext"
)

// ReceiptsOptions are the flags of hitl receipts.
type ReceiptsOptions struct {
	IO             *IOStreams
	Session        string
	JSON           bool
	Export         string
	AllowedSigners string
}

// NewCmdReceipts lists, exports and verifies the receipts of a session:
// who approved what (DESIGN §14).
func NewCmdReceipts(ios *IOStreams) *cobra.Command {
	opts := &ReceiptsOptions{IO: ios}
	c := &cobra.Command{
		Use:   "receipts SESSION",
		Short: "List who approved what in a session (its receipts)",
		Long: `List the receipts of a session: one per answer to a consent question (a
command or tool approval, a yes/no), saying what was approved (the tool, the
exact command or call, the directory, their SHA-256), the decision, where it
came from and who gave it, chained by hash. With --sign-key on hitl exec each
is signed (SSHSIG, namespace hitl-receipt).

--export DIR writes each receipt as DIR/receipt-N.json with its signature in
receipt-N.json.sig, which ssh-keygen checks:
  ssh-keygen -Y verify -f allowed_signers -I PRINCIPAL -n hitl-receipt \
    -s receipt-1.json.sig < receipt-1.json`,
		Example: "  hitl receipts deploy.jsonl\n  hitl receipts verify deploy.jsonl --allowed-signers ~/.config/git/allowed_signers",
		Args:    minArgs(1, "SESSION"),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("hitl receipts takes one SESSION, got %d arguments", len(args))
			}
			opts.Session = resolveSession(ios, args[0])
			return receiptsList(opts)
		},
	}
	c.Flags().BoolVar(&opts.JSON, "json", false, "print each receipt as one JSON line (with its signature)")
	c.Flags().StringVar(&opts.Export, "export", "", "write each receipt and its .sig into `DIR`")
	verify := &cobra.Command{
		Use:   "verify SESSION --allowed-signers FILE",
		Short: "Check every receipt's signature and the chain",
		Long: `Check every receipt of SESSION: it belongs to this session's run, the chain
of hashes is whole, and it is signed by a key of the allowed-signers FILE (the
format of ssh-keygen(1), the file git's SSH commit signing uses) for the
namespace hitl-receipt. Exit 0 when all hold, else 1 naming each that fails.`,
		Args: minArgs(1, "SESSION"),
		RunE: func(c *cobra.Command, args []string) error {
			if opts.AllowedSigners == "" {
				return usagef("hitl receipts verify needs --allowed-signers FILE")
			}
			opts.Session = resolveSession(ios, args[0])
			return receiptsVerify(opts)
		},
	}
	verify.Flags().StringVar(&opts.AllowedSigners, "allowed-signers", "", "the allowed signers `FILE`")
	c.AddCommand(verify)
	return c
}

// resolveSession takes a session path, or a run id of the state dir.
func resolveSession(ios *IOStreams, arg string) string {
	if _, err := os.Stat(arg); err == nil || strings.ContainsRune(arg, os.PathSeparator) {
		return arg
	}
	if dir, err := session.DefaultDir(ios.Getenv); err == nil {
		if p := filepath.Join(dir, arg+".jsonl"); fileExists(p) {
			return p
		}
	}
	return arg
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func loadReceipts(opts *ReceiptsOptions) (*session.Loaded, error) {
	key, err := session.LoadKey(opts.IO.Getenv)
	if err != nil {
		return nil, usagef("%v", err)
	}
	l, err := session.Read(opts.Session, key)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return l, nil
}

func receiptsList(opts *ReceiptsOptions) error {
	l, err := loadReceipts(opts)
	if err != nil {
		return err
	}
	if opts.Export != "" {
		if err := os.MkdirAll(opts.Export, 0o755); err != nil {
			return err
		}
	}
	for i, s := range l.Receipts {
		var r receipt.Receipt
		if err := json.Unmarshal(s.Raw, &r); err != nil {
			return fmt.Errorf("receipt %d: %v", i+1, err)
		}
		if opts.Export != "" {
			name := filepath.Join(opts.Export, fmt.Sprintf("receipt-%d.json", i+1))
			if err := os.WriteFile(name, s.Raw, 0o644); err != nil {
				return err
			}
			if s.Signature != "" {
				if err := os.WriteFile(name+".sig", []byte(s.Signature), 0o644); err != nil {
					return err
				}
			}
		}
		if opts.JSON {
			line, _ := json.Marshal(s)
			fmt.Fprintln(opts.IO.Out, string(line))
			continue
		}
		signed := "unsigned"
		if s.Signature != "" {
			signed = "signed"
		}
		decision := string(r.Action)
		if len(r.Content) > 0 {
			decision += " " + string(r.Content)
		}
		fmt.Fprintf(opts.IO.Out, "%d  %s  %s %s  %s: %s  by %s  (%s, %s)\n", r.Seq, r.Time, r.PromptID, termtext.Line(r.Tool),
			decision, termtext.Line(shortSubject(r.Subject)), termtext.Line(r.Who), r.Source, signed)
	}
	if len(l.Receipts) == 0 && !opts.JSON {
		fmt.Fprintln(opts.IO.ErrOut, "hitl: no receipts in this session: no consent question was answered")
	}
	return nil
}

func shortSubject(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) > 80 {
		return string([]rune(s)[:79]) + "…"
	}
	return s
}

func receiptsVerify(opts *ReceiptsOptions) error {
	l, err := loadReceipts(opts)
	if err != nil {
		return err
	}
	f, err := os.Open(opts.AllowedSigners)
	if err != nil {
		return usagef("--allowed-signers: %v", err)
	}
	allowed, err := receipt.ParseAllowedSigners(f)
	f.Close()
	if err != nil {
		return usagef("--allowed-signers %s: %v", opts.AllowedSigners, err)
	}
	if len(l.Receipts) == 0 {
		return &reportedError{fmt.Errorf("no receipts to verify")}
	}
	bad := 0
	for i, c := range receipt.Verify(l.Receipts, l.Header.RunID, allowed) {
		if c.Err != nil {
			bad++
			fmt.Fprintf(opts.IO.ErrOut, "receipt %d: refused: %v\n", i+1, c.Err)
			continue
		}
		fmt.Fprintf(opts.IO.Out, "receipt %d: good signature by %s\n", i+1, termtext.Line(c.Principal))
	}
	if bad > 0 {
		err := fmt.Errorf("%d of %d receipts failed verification", bad, len(l.Receipts))
		fmt.Fprintf(opts.IO.ErrOut, "hitl: %v\n", err)
		return &reportedError{err}
	}
	return nil
}
