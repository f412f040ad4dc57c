package schema

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
)

// formats are the format assertions hitl makes (DESIGN §4: formats
// asserted). Other format names are annotations, as the draft says.
var formats = map[string]func(string) error{
	"email":     checkEmail,
	"uri":       checkURI,
	"date":      checkDate,
	"time":      checkTime,
	"date-time": checkDateTime,
	"ipv4":      checkIPv4,
	"ipv6":      checkIPv6,
	"uuid":      checkUUID,
}

// checkFormats asserts the formats of n (and of the subschemas always
// applied with it) on v and its parts. Formats inside anyOf, oneOf, not and
// if/then/else stay annotations: which branch holds is the library's
// answer, and v already passed it.
func (sh *shape) checkFormats(n *node, v any, path string) error {
	for _, m := range sh.applied(n) {
		if m.m == nil {
			continue
		}
		if f, ok := m.m["format"].(string); ok {
			if s, isString := v.(string); isString && formats[f] != nil {
				if err := formats[f](s); err != nil {
					return fmt.Errorf("%s%s is not a valid %s: %v", at(path), show(s), f, err)
				}
			}
		}
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				for _, c := range sh.forProperty(m, k) {
					if err := sh.checkFormats(c, v[k], path+"/"+escape(k)); err != nil {
						return err
					}
				}
			}
		case []any:
			for i, e := range v {
				if c := sh.forItem(m, i); c != nil {
					if err := sh.checkFormats(c, e, fmt.Sprintf("%s/%d", path, i)); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// checkEmail accepts an RFC 5321 mailbox: a dot-atom or quoted local part,
// "@", and a host name or an address literal in brackets.
func checkEmail(s string) error {
	i := strings.LastIndexByte(s, '@')
	if i < 0 {
		return fmt.Errorf("missing @")
	}
	local, domain := s[:i], s[i+1:]
	switch {
	case local == "":
		return fmt.Errorf("nothing before @")
	case len(local) > 64:
		return fmt.Errorf("more than 64 characters before @")
	case strings.HasPrefix(local, `"`):
		if len(local) < 2 || !strings.HasSuffix(local, `"`) {
			return fmt.Errorf("unclosed quote before @")
		}
		for _, r := range local[1 : len(local)-1] {
			if r < 0x20 || r == 0x7f {
				return fmt.Errorf("a control character before @")
			}
		}
	default:
		for _, atom := range strings.Split(local, ".") {
			if atom == "" {
				return fmt.Errorf("an empty part between dots before @")
			}
			for _, r := range atom {
				if !(isAlnum(r) || strings.ContainsRune("!#$%&'*+/=?^_`{|}~-", r) || r > 0x7f) {
					return fmt.Errorf("%q is not allowed before @ without quotes", r)
				}
			}
		}
	}
	if strings.HasPrefix(domain, "[") && strings.HasSuffix(domain, "]") {
		lit := domain[1 : len(domain)-1]
		if v6, ok := strings.CutPrefix(lit, "IPv6:"); ok {
			return checkIPv6(v6)
		}
		return checkIPv4(lit)
	}
	if err := checkHostname(domain); err != nil {
		return fmt.Errorf("after @: %v", err)
	}
	return nil
}

func checkHostname(s string) error {
	if s == "" {
		return fmt.Errorf("empty host name")
	}
	if len(s) > 253 {
		return fmt.Errorf("host name longer than 253 characters")
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("host name part %q must have 1 to 63 characters", label)
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("host name part %q starts or ends with -", label)
		}
		for _, r := range label {
			if !isAlnum(r) && r != '-' && r <= 0x7f {
				return fmt.Errorf("%q is not allowed in a host name", r)
			}
		}
	}
	return nil
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// checkURI accepts an absolute URI (RFC 3986): a scheme, then no spaces,
// control characters or stray percent signs.
func checkURI(s string) error {
	for _, r := range s {
		if r <= 0x20 || r == 0x7f || r > 0x7e || strings.ContainsRune(`"<>\^`+"`{|}", r) {
			return fmt.Errorf("%q is not allowed in a URI", r)
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%v", strings.TrimPrefix(err.Error(), "parse "+fmt.Sprintf("%q", s)+": "))
	}
	if u.Scheme == "" {
		return fmt.Errorf("no scheme (such as https:)")
	}
	return nil
}

// checkDate accepts an RFC 3339 full-date: YYYY-MM-DD, a real day.
func checkDate(s string) error {
	if len(s) != 10 {
		return fmt.Errorf("want YYYY-MM-DD")
	}
	if _, err := time.Parse("2006-01-02", s); err != nil {
		return fmt.Errorf("want YYYY-MM-DD, a day that exists")
	}
	return nil
}

// checkTime accepts an RFC 3339 full-time: HH:MM:SS, an optional
// fraction, then Z or an offset; a leap second only at 23:59:60 UTC.
func checkTime(s string) error {
	const want = "want HH:MM:SS with Z or an offset such as +02:00"
	if len(s) < 9 || s[2] != ':' || s[5] != ':' {
		return fmt.Errorf("%s", want)
	}
	h, m, sec, ok1 := num2(s[0:2]), num2(s[3:5]), num2(s[6:8]), true
	rest := s[8:]
	if strings.HasPrefix(rest, ".") {
		j := 1
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		ok1 = j > 1
		rest = rest[j:]
	}
	if h < 0 || m < 0 || sec < 0 || !ok1 || h > 23 || m > 59 || sec > 60 {
		return fmt.Errorf("%s", want)
	}
	offset := 0
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, om := num2(rest[1:3]), num2(rest[4:6])
		if oh < 0 || om < 0 || oh > 23 || om > 59 {
			return fmt.Errorf("%s", want)
		}
		offset = oh*60 + om
		if rest[0] == '+' {
			offset = -offset
		}
	default:
		return fmt.Errorf("%s", want)
	}
	if sec == 60 {
		utc := ((h*60+m+offset)%1440 + 1440) % 1440
		if utc != 23*60+59 {
			return fmt.Errorf("a leap second is only at 23:59:60 UTC")
		}
	}
	return nil
}

func num2(s string) int {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return -1
	}
	return int(s[0]-'0')*10 + int(s[1]-'0')
}

// checkDateTime accepts an RFC 3339 date-time: a full-date, T, a full-time.
func checkDateTime(s string) error {
	i := strings.IndexAny(s, "Tt")
	if i < 0 {
		return fmt.Errorf("want YYYY-MM-DDTHH:MM:SS with Z or an offset")
	}
	if err := checkDate(s[:i]); err != nil {
		return err
	}
	return checkTime(s[i+1:])
}

// checkIPv4 accepts dotted-quad notation without leading zeros.
func checkIPv4(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return fmt.Errorf("want four numbers 0-255 with dots, such as 192.0.2.1")
	}
	return nil
}

// checkIPv6 accepts an RFC 4291 address, without a zone.
func checkIPv6(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return fmt.Errorf("want an IPv6 address such as 2001:db8::1")
	}
	return nil
}

// checkUUID accepts 8-4-4-4-12 hexadecimal digits.
func checkUUID(s string) error {
	if len(s) != 36 {
		return fmt.Errorf("want 8-4-4-4-12 hexadecimal digits")
	}
	for i, r := range s {
		dash := i == 8 || i == 13 || i == 18 || i == 23
		if dash != (r == '-') || !dash && !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return fmt.Errorf("want 8-4-4-4-12 hexadecimal digits")
		}
	}
	return nil
}
