package tty

import (
	"testing"
	"time"
)

// SetConsentHold makes consent questions take no key for d, for t: long
// enough that keys a test types "at once" fall inside it however loaded
// the machine is.
func SetConsentHold(t testing.TB, d time.Duration) {
	old := consentHold
	consentHold = d
	t.Cleanup(func() { consentHold = old })
}

// The hold is DESIGN §4's.
func TestConsentHoldIsTheDesigns(t *testing.T) {
	if consentHold != 300*time.Millisecond {
		t.Errorf("consent hold %s, DESIGN §4 says 300 ms", consentHold)
	}
}
