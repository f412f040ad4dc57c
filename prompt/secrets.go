package prompt

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Secrets holds the values of secret answers. The model, events, logs and
// sessions only ever see their placeholders, $HITL_SECRET_<n>.
type Secrets struct {
	mu     sync.Mutex
	values []string
	// lost is how many numbers, from 1, belong to secrets whose values
	// this process does not have (a resumed run): values[i] is number
	// lost+i+1.
	lost int
}

// Add stores a secret value and returns its placeholder.
func (s *Secrets) Add(value string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values = append(s.values, value)
	return fmt.Sprintf("$HITL_SECRET_%d", s.lost+len(s.values))
}

// Reserve keeps the placeholders up to $HITL_SECRET_<n> for secrets whose
// values are gone: a resumed run's conversation holds them, but a session
// never keeps secret values. A secret asked afterwards gets a new number,
// so a command the model wrote for an old secret never receives a
// different one. Call it before any Add.
func (s *Secrets) Reserve(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.values) == 0 && n > s.lost {
		s.lost = n
	}
}

// MaxPlaceholder returns the highest placeholder number in text, 0 when it
// holds none.
func MaxPlaceholder(text string) int {
	n := 0
	for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
		if k, err := strconv.Atoi(m[1]); err == nil && k > n {
			n = k
		}
	}
	return n
}

// Env returns HITL_SECRET_<n>=value for each secret, for shell commands.
func (s *Secrets) Env() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	env := make([]string, len(s.values))
	for i, v := range s.values {
		env[i] = fmt.Sprintf("HITL_SECRET_%d=%s", s.lost+i+1, v)
	}
	return env
}

var placeholder = regexp.MustCompile(`\$\{?HITL_SECRET_([0-9]+)\}?`)

// Expand replaces placeholders ($HITL_SECRET_1 or ${HITL_SECRET_1}) in text
// with their values, for remote tool arguments. Unknown placeholders stay.
func (s *Secrets) Expand(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		n, _ := strconv.Atoi(placeholder.FindStringSubmatch(m)[1])
		i := n - s.lost - 1
		if i < 0 || i >= len(s.values) {
			return m
		}
		return s.values[i]
	})
}

// Mask replaces every secret value in text by ***, for text that must not
// carry them (command output shown to the model, logs).
func (s *Secrets) Mask(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.values {
		if len(v) >= 4 {
			text = strings.ReplaceAll(text, v, "***")
			// also as it appears inside a JSON string (a remote tool's
			// result echoing its arguments)
			if q, _ := json.Marshal(v); string(q[1:len(q)-1]) != v {
				text = strings.ReplaceAll(text, string(q[1:len(q)-1]), "***")
			}
		}
	}
	return text
}
