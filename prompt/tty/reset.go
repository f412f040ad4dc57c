package tty

// resetState undoes what a program could have left on the terminal before
// a question is drawn (DESIGN §4), so the question shows as hitl draws it:
// the alternate screen, a scroll region and origin mode, character
// attributes and a hidden cursor. Resetting the margins moves the cursor
// home, so the cursor is saved before and restored after (with the whole
// screen as the region, origin mode, if the restore brings it back, is the
// same as none).
const resetState = "\x1b[?1049h\x1b[?1049l" + // the normal screen (entering the alternate one first leaves it in every terminal)
	"\x1b7" + // save the cursor
	"\x1b[?6l" + // origin mode off
	"\x1b[r" + // scroll region: the whole screen
	"\x1b8" + // the cursor back where it was
	"\x1b[0m" + // attributes
	"\x1b[?25h" // cursor visible

// resetTerminal writes resetState.
func resetTerminal(w fdWriter) {
	_, _ = w.Write([]byte(resetState))
}
