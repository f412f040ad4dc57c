package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on what a person can be shown of a request: a part past them is
// not sent unseen, the call is refused.
const (
	MaxShownURL    = 16 << 10
	MaxShownHeader = 4 << 10
	MaxShownBody   = 64 << 10
)

// Request is one HTTP call as it is sent: every part the model set is
// shown in the approval (Show) and judged by rules (Args, Parts) exactly
// as it goes on the wire.
type Request struct {
	Method, URL string
	// Header are the headers the model set (canonical names, values as
	// sent), Cookies its cookies (one Cookie header), in order.
	Header  [][2]string
	Cookies [][2]string
	Body    []byte
	// PathSet, QuerySet: the model's arguments are in the URL's path, its
	// query.
	PathSet, QuerySet bool
}

// reserved are headers a request's own fields or the transport write: a
// value the model gave them would not be the one sent.
var reserved = map[string]bool{
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true,
	"Content-Type": true, "Accept": true, "Cookie": true, "Trailer": true, "Te": true, "Upgrade": true,
}

// AddHeader adds a header the model set: its value as sent (trimmed of
// surrounding blanks, as net/http sends it) or an error when it cannot be
// shown as sent (a control character, invalid UTF-8, past MaxShownHeader)
// or would not be sent as given (a reserved or author-set header).
func (r *Request) AddHeader(name, value string, author map[string]string) error {
	canon := http.CanonicalHeaderKey(name)
	if reserved[canon] {
		return fmt.Errorf("header %s is written by hitl or the HTTP client, not from the call's arguments", canon)
	}
	for k := range author {
		if http.CanonicalHeaderKey(k) == canon {
			return fmt.Errorf("header %s is set by the agent file; the call cannot set it", canon)
		}
	}
	value = strings.Trim(value, " \t")
	if err := showable(value, MaxShownHeader); err != nil {
		return fmt.Errorf("header %s %w", canon, err)
	}
	r.Header = append(r.Header, [2]string{canon, value})
	return nil
}

// AddCookie adds a cookie the model set; its value must be cookie text
// (RFC 6265 cookie-octets), which is sent as given. Where the agent file's
// headers (author) set a Cookie header, the model sets no cookie: one of
// the two would not be sent as written.
func (r *Request) AddCookie(name, value string, author map[string]string) error {
	for k := range author {
		if http.CanonicalHeaderKey(k) == "Cookie" {
			return fmt.Errorf("cookie %s: the agent file's headers set Cookie; the call cannot add a cookie", name)
		}
	}
	if err := showable(value, MaxShownHeader); err != nil {
		return fmt.Errorf("cookie %s %w", name, err)
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; c <= ' ' || c == '"' || c == ',' || c == ';' || c == '\\' || c >= 0x7f {
			return fmt.Errorf("cookie %s holds %q, which a cookie value cannot carry as given", name, c)
		}
	}
	r.Cookies = append(r.Cookies, [2]string{name, value})
	return nil
}

// showable reports why s cannot be shown as sent: invalid UTF-8 or a
// control or format character (binary), or more than max bytes.
func showable(s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("is %d bytes, more than the %d a person is shown: the call is refused, not sent unseen", len(s), max)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("is not UTF-8 text (binary): the call is refused, not sent unseen")
	}
	for _, c := range s {
		if c != ' ' && !unicode.IsGraphic(c) || unicode.Is(unicode.Cf, c) {
			return fmt.Errorf("holds the character %U, which cannot be shown as sent: the call is refused, not sent unseen", c)
		}
	}
	return nil
}

// Check reports a part that cannot be shown: a URL or body past its
// bound, a body that is not text.
func (r *Request) Check() error {
	if len(r.URL) > MaxShownURL {
		return fmt.Errorf("the URL is %d bytes, more than the %d a person is shown: the call is refused, not sent unseen", len(r.URL), MaxShownURL)
	}
	if len(r.Body) > MaxShownBody {
		return fmt.Errorf("the body is %d bytes, more than the %d a person is shown: the call is refused, not sent unseen", len(r.Body), MaxShownBody)
	}
	if !utf8.Valid(r.Body) {
		return fmt.Errorf("the body is not UTF-8 text (binary): the call is refused, not sent unseen")
	}
	return nil
}

func (r *Request) cookieHeader() string {
	parts := make([]string, len(r.Cookies))
	for i, c := range r.Cookies {
		parts[i] = c[0] + "=" + c[1]
	}
	return strings.Join(parts, "; ")
}

// Show is the request as a person approves it: the method and URL, the
// headers and cookie the model set as they are sent, then the body.
func (r *Request) Show() string {
	var b strings.Builder
	b.WriteString(r.Method + " " + r.URL)
	for _, h := range r.Header {
		b.WriteString("\n" + h[0] + ": " + h[1])
	}
	if len(r.Cookies) > 0 {
		b.WriteString("\nCookie: " + r.cookieHeader())
	}
	if r.Body != nil {
		b.WriteString("\n\n" + string(r.Body))
	}
	return b.String()
}

// Args are the request's parts as rules name them: method, url, path,
// query, header.NAME, cookie.NAME, body.
func (r *Request) Args() map[string]any {
	args := map[string]any{"method": r.Method, "url": r.URL}
	if u, err := url.Parse(r.URL); err == nil {
		args["path"] = u.EscapedPath()
		args["query"] = u.RawQuery
	}
	for _, h := range r.Header {
		args["header."+h[0]] = h[1]
	}
	for _, c := range r.Cookies {
		args["cookie."+c[0]] = c[1]
	}
	if r.Body != nil {
		args["body"] = string(r.Body)
	}
	return args
}

// Parts are the parts the model set, which an allow rule must judge.
func (r *Request) Parts() []string {
	var parts []string
	if r.PathSet {
		parts = append(parts, "path")
	}
	if r.QuerySet {
		parts = append(parts, "query")
	}
	for _, h := range r.Header {
		parts = append(parts, "header."+h[0])
	}
	for _, c := range r.Cookies {
		parts = append(parts, "cookie."+c[0])
	}
	if r.Body != nil {
		parts = append(parts, "body")
	}
	return parts
}

// HTTP is the request to send: author holds the agent file's headers
// (never shown: they may hold secrets), then the model's.
func (r *Request) HTTP(ctx context.Context, author map[string]string) (*http.Request, error) {
	var body io.Reader = http.NoBody
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, body)
	if err != nil {
		return nil, err
	}
	for k, v := range author {
		req.Header.Set(k, v)
	}
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range r.Header {
		req.Header.Add(h[0], h[1])
	}
	if len(r.Cookies) > 0 {
		req.Header.Set("Cookie", r.cookieHeader())
	}
	return req, nil
}
