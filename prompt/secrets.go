package prompt

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Secrets holds the values of secret answers. The model, events, logs and
// sessions only ever see their placeholders, $HITL_SECRET_<n>.
type Secrets struct {
	mu     sync.Mutex
	values map[int]string // by placeholder number
	last   int            // the highest number given out or reserved
}

// Add stores a secret value under the next number and returns its
// placeholder.
func (s *Secrets) Add(value string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last++
	s.setLocked(s.last, value)
	return Placeholder(s.last)
}

// Set stores the value of placeholder number n: a secret asked again after
// a resume keeps the number the model already knows.
func (s *Secrets) Set(n int, value string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setLocked(n, value)
	s.last = max(s.last, n)
	return Placeholder(n)
}

func (s *Secrets) setLocked(n int, value string) {
	if s.values == nil {
		s.values = map[int]string{}
	}
	s.values[n] = value
}

// Reserve keeps the placeholders up to $HITL_SECRET_<n> from being given
// out again: a resumed run's conversation holds them, so a secret asked
// afterwards gets a new number and a command written for an old secret
// never receives a different one.
func (s *Secrets) Reserve(n int) {
	if n > maxSecrets {
		return // text the model controls, not a placeholder hitl gave out
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = max(s.last, n)
}

// maxSecrets bounds the placeholder numbers Reserve believes.
const maxSecrets = 1 << 20

// Placeholder is the name the model sees for secret number n.
func Placeholder(n int) string { return fmt.Sprintf("$HITL_SECRET_%d", n) }

// PlaceholderNumber reads "$HITL_SECRET_<n>"; 0 when text is not one.
func PlaceholderNumber(text string) int {
	m := placeholder().FindStringSubmatch(text)
	if m == nil || m[0] != text {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// MaxPlaceholder returns the highest placeholder number in text, 0 when it
// holds none.
func MaxPlaceholder(text string) int {
	n := 0
	for _, m := range placeholder().FindAllStringSubmatch(text, -1) {
		if k, err := strconv.Atoi(m[1]); err == nil && k > n {
			n = k
		}
	}
	return n
}

// HasPlaceholder reports whether text holds the placeholder of secret
// number n ($HITL_SECRET_1 is not in $HITL_SECRET_12).
func HasPlaceholder(text string, n int) bool {
	for _, m := range placeholder().FindAllStringSubmatch(text, -1) {
		if k, err := strconv.Atoi(m[1]); err == nil && k == n {
			return true
		}
	}
	return false
}

// Env returns HITL_SECRET_<n>=value for each secret, for shell commands.
func (s *Secrets) Env() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	nums := make([]int, 0, len(s.values))
	for n := range s.values {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	env := make([]string, len(nums))
	for i, n := range nums {
		env[i] = fmt.Sprintf("HITL_SECRET_%d=%s", n, s.values[n])
	}
	return env
}

// MentionsSecret reports whether text names a secret variable in any
// form ($HITL_SECRET_1, ${hitl_secret_1}, printenv HITL_SECRET_1): what
// names one hands it over.
func MentionsSecret(text string) bool {
	return strings.Contains(strings.ToUpper(text), "HITL_SECRET_")
}

var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{?HITL_SECRET_([0-9]+)\}?`) })

// Expand replaces placeholders ($HITL_SECRET_1 or ${HITL_SECRET_1}) in text
// with their values, for remote tool arguments. Unknown placeholders stay.
func (s *Secrets) Expand(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return placeholder().ReplaceAllStringFunc(text, func(m string) string {
		n, _ := strconv.Atoi(placeholder().FindStringSubmatch(m)[1])
		if v, ok := s.values[n]; ok {
			return v
		}
		return m
	})
}

// Mask hides every secret value in text (DESIGN §5: whole values, their
// parts of 4 characters or more, short values as whole tokens), for text
// that must not carry them (command output shown to the model, logs).
func (s *Secrets) Mask(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.values) == 0 {
		return text
	}
	vals := make([]string, 0, len(s.values))
	for _, v := range s.values {
		vals = append(vals, v)
	}
	return maskValues(text, vals)
}

// HoldsPlaceholder says whether a string value anywhere in v (decoded JSON
// arguments) holds a secret placeholder: what a tool would substitute
// before it sends them.
func HoldsPlaceholder(v any) bool {
	switch v := v.(type) {
	case string:
		return MaxPlaceholder(v) > 0
	case map[string]any:
		for _, x := range v {
			if HoldsPlaceholder(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if HoldsPlaceholder(x) {
				return true
			}
		}
	}
	return false
}
