package cmd

import "github.com/spf13/cobra"

// newHelpAnswers is the "hitl help answers" topic.
func newHelpAnswers() *cobra.Command {
	return &cobra.Command{
		Use:   "answers",
		Short: "How to answer questions from a script (JSONL on stdin, answers files)",
		Long: `When no terminal is attached (or with --prompt jsonl, or --json), hitl reads
one answer per question from stdin, one JSON value per line, in the order the
questions are asked. With --json each question is first written to stdout as
a prompt.request event, so a program can read it and answer it.

  {"prompt_id":"p2","action":"accept","content":"staging"}   full form
  {"action":"decline"}                                        the pending question
  {"text":"use the blue one"}                                 free text
  "staging"                                                   any other JSON value: accept with that content

An object is the full form when all its keys are among prompt_id, action,
content and text; any other object is the content (a form's answer).

A choice's content is the option id, matched exactly; a number is an index
(0-based) unless some option id is numeric; a multiple choice takes an array.
Free text is only taken from "text". A line hitl cannot use (not JSON, an
unknown prompt_id, content that breaks the question's schema, free text where
none is allowed) stops the run with exit 2, naming the line and the reason.
Blank lines are skipped; a trailing \r and a leading byte-order mark are
dropped; lines are UTF-8, at most 1 MiB.

At end of input, a pending question is unanswered and --unanswered decides:
stop (exit 4, resumable with hitl resume), cancel, or default (the question's
default, except for consent questions, which are never defaulted).

Answers files (--answers FILE: YAML, or JSONL when the name ends in .jsonl or
.json) are consulted first: a list of entries {match: REGEX, tool: NAME,
action, content, text, repeat}. The first fitting entry in file order answers
a question; an entry with match fits a question whose message, title or
header matches; one without match fits the next question. Entries are used
once unless repeat: true.

Consent questions (shell and tool approvals, remote user_choice,
ask_confirmation, hitl ask --confirm, and any yes/no question) are answered
only by an entry that names the tool (tool: shell, tool: user_prompt,
tool: ask, ...) and whose match covers the whole text being approved (the
command line, or the question's message), and never by an index:

  - tool: shell
    match: 'make test'        # never "make test; rm -rf x"
    content: once`,
	}
}
