package approver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hitl-dev/hitl/prompt"
)

// SecretEnv holds the webhook signing secret (whsec_…).
const SecretEnv = "HITL_APPROVER_SECRET"

// Poll backoff for a webhook that answers later (202 with a Location).
var (
	FirstPoll = 2 * time.Second
	MaxPoll   = 30 * time.Second
)

// CheckURL says whether u may be a webhook approver: https, or http to a
// loopback host.
func CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("%q is not an http(s) URL", raw)
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return nil, fmt.Errorf("%s: http:// is allowed only to a loopback host (localhost, 127.0.0.1, ::1); use https://", raw)
	}
	return u, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// NewWebhook is the webhook approver at u, signing with secret (whsec_…)
// per Standard Webhooks. client may be nil.
func NewWebhook(u *url.URL, secret string, client *http.Client, o Options) (prompt.Answerer, error) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", SecretEnv, err)
	}
	c := http.Client{Timeout: 30 * time.Second}
	if client != nil {
		c = *client
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	h := &webhook{u: u, wh: wh, client: &c, run: o.Run}
	return o.source(u.Redacted(), h.ask), nil
}

type webhook struct {
	run    Run
	u      *url.URL
	wh     *standardwebhooks.Webhook
	client *http.Client
}

func (h *webhook) ask(ctx context.Context, q prompt.Question) (prompt.Answer, string, error) {
	nonce := NewNonce()
	body, err := Request(q, h.run, nonce)
	if err != nil {
		return prompt.Answer{}, "", err
	}
	resp, err := h.send(ctx, http.MethodPost, h.u, "msg_"+q.ID+"_"+nonce, body)
	if err != nil {
		return prompt.Answer{}, "", err
	}
	delay := FirstPoll
	var poll *url.URL // where the answer is polled for, after a 202
	for {
		switch resp.status {
		case http.StatusOK:
			return parseReply(resp.body, q, nonce, true)
		case http.StatusAccepted, http.StatusNoContent:
			if poll == nil {
				loc, err := h.u.Parse(resp.location)
				if resp.status != http.StatusAccepted || err != nil || resp.location == "" || loc.Host != h.u.Host || loc.Scheme != h.u.Scheme {
					return prompt.Answer{}, "", fmt.Errorf("HTTP %d without a Location on %s to poll (got %q)", resp.status, h.u.Host, resp.location)
				}
				poll = loc
			}
			// Still pending: poll again, each GET signed over an empty
			// body.
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return prompt.Answer{}, "", ctx.Err()
			}
			delay = min(2*delay, MaxPoll)
			if resp, err = h.send(ctx, http.MethodGet, poll, "msg_"+q.ID+"_"+nonce, nil); err != nil {
				return prompt.Answer{}, "", err
			}
		case http.StatusGone:
			return prompt.Answer{}, "", errors.New("the question was withdrawn (410 Gone)")
		default:
			return prompt.Answer{}, "", fmt.Errorf("HTTP %d", resp.status)
		}
	}
}

type reply struct {
	status   int
	location string
	body     []byte
}

// send makes one signed request; the reply body is capped at MaxReply.
func (h *webhook) send(ctx context.Context, method string, u *url.URL, id string, body []byte) (reply, error) {
	now := time.Now()
	sig, err := h.wh.Sign(id, now, body)
	if err != nil {
		return reply{}, err
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := h.client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxReply+1))
	if err != nil {
		return reply{}, err
	}
	if len(data) > MaxReply {
		return reply{}, fmt.Errorf("the reply is larger than %d bytes", MaxReply)
	}
	return reply{status: resp.StatusCode, location: resp.Header.Get("Location"), body: data}, nil
}
