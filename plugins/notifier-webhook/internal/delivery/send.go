package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/webhooksig"
)

// Outcome classifies one attempt.
type Outcome int

// The outcomes.
const (
	Delivered     Outcome = iota // 2xx
	Transient                    // retry later
	Permanent                    // the receiver refused it; dead-letter
	Misconfigured                // cannot be sent as configured; dead-letter
)

func (o Outcome) String() string {
	return [...]string{"delivered", "transient", "permanent", "misconfigured"}[o]
}

// Result is what one attempt produced. Err has been through Send's redact.
type Result struct {
	Outcome    Outcome
	StatusCode int
	RetryAfter time.Duration // > 0 when a 429/503 carried Retry-After
	Err        string
}

// Request is one attempt to send.
type Request struct {
	DeliveryID string
	EventID    string
	Attempt    int
	Body       []byte
	Connector  *config.Connector
	Target     *config.Target
}

// Header names the plugin sets besides the signatures.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderEventID        = "X-Animus-Event-Id"
	HeaderAttempt        = "X-Animus-Delivery-Attempt"
	HeaderTimestamp      = "X-Animus-Timestamp"
)

// Response bodies are read up to this much (so the connection can be
// reused) and quoted in errors up to snippetLen bytes.
const (
	maxResponseRead = 64 << 10
	snippetLen      = 160
	maxRedirects    = 3
)

// Sender performs attempts. It is safe for concurrent use.
type Sender struct {
	transport http.RoundTripper
	userAgent string
	now       func() time.Time
}

// NewSender returns a Sender with a pooled transport. version goes into
// the User-Agent.
func NewSender(version string, now func() time.Time) *Sender {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 32
	tr.IdleConnTimeout = 90 * time.Second
	if now == nil {
		now = time.Now
	}
	return &Sender{transport: tr, userAgent: "animus-notifier-webhook/" + version, now: now}
}

var (
	errCrossHost     = errors.New("redirect to another host refused: the request carries a signature or credentials")
	errTooManyHops   = fmt.Errorf("more than %d redirects", maxRedirects)
	errRedirectProto = errors.New("redirect to a non-http(s) URL refused")
)

// Send makes one attempt under ctx (which carries the attempt's deadline).
// Every error text passes through redact before it reaches the Result: the
// caller's scrubbing of secrets (and whatever else it wants of a stored
// text), which this package cannot do alone, because a receiver may echo a
// secret back in its response.
func (s *Sender) Send(ctx context.Context, r Request, redact func(string) string) Result {
	req, err := s.build(ctx, r)
	if err != nil {
		return Result{Outcome: Misconfigured, Err: redact(err.Error())}
	}
	sensitive := r.Target.SigningSecret != "" || r.Target.BearerToken != "" || len(r.Target.Headers) > 0
	client := &http.Client{Transport: s.transport, CheckRedirect: func(next *http.Request, via []*http.Request) error {
		switch {
		case len(via) >= maxRedirects:
			return errTooManyHops
		case next.URL.Scheme != "http" && next.URL.Scheme != "https":
			return errRedirectProto
		case sensitive && (next.URL.Host != via[0].URL.Host || next.URL.Scheme != via[0].URL.Scheme):
			return errCrossHost
		}
		return nil
	}}
	resp, err := client.Do(req)
	if err != nil {
		return classifyError(ctx, err, redact)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseRead))
	return classifyResponse(resp, body, s.now(), redact)
}

func (s *Sender) build(ctx context.Context, r Request) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.Target.URL.String(), bytes.NewReader(r.Body))
	if err != nil {
		return nil, &config.Misconfigured{Msg: "cannot build the request for connector " + strconv.Quote(r.Connector.ID)}
	}
	// Operator headers first, so the plugin's own cannot be overridden.
	for k, vs := range r.Target.Headers {
		req.Header[k] = append([]string(nil), vs...)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", s.userAgent)
	h.Set(HeaderIdempotencyKey, r.DeliveryID)
	h.Set(HeaderEventID, r.EventID)
	h.Set(HeaderAttempt, strconv.Itoa(r.Attempt))
	if r.Target.BearerToken != "" {
		h.Set("Authorization", "Bearer "+r.Target.BearerToken)
	}
	if r.Target.SigningSecret != "" {
		if err := sign(h, r, s.now().Unix()); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// sign adds the connector's signature headers over the exact body bytes.
func sign(h http.Header, r Request, ts int64) error {
	bad := func(err error) error {
		return &config.Misconfigured{Msg: fmt.Sprintf("connector %q: signing secret in %s: %v", r.Connector.ID, r.Connector.SigningSecretEnv, err)}
	}
	switch r.Connector.Signature {
	case config.SignatureGitHub:
		keys, err := webhooksig.RawKeys(r.Target.SigningSecret)
		if err != nil {
			return bad(err)
		}
		h.Set(webhooksig.HeaderGitHub, webhooksig.SignGitHub(keys, r.Body))
		h.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	case config.SignatureStripe:
		keys, err := webhooksig.RawKeys(r.Target.SigningSecret)
		if err != nil {
			return bad(err)
		}
		name := r.Connector.SignatureHeader
		if name == "" {
			name = webhooksig.DefaultStripeHeader
		}
		h.Set(name, webhooksig.SignStripe(keys, ts, r.Body))
	default:
		keys, err := webhooksig.StandardKeys(r.Target.SigningSecret)
		if err != nil {
			return bad(err)
		}
		h[webhooksig.HeaderID] = []string{r.DeliveryID}
		h[webhooksig.HeaderTimestamp] = []string{strconv.FormatInt(ts, 10)}
		h[webhooksig.HeaderSignature] = []string{webhooksig.SignStandard(keys, r.DeliveryID, ts, r.Body)}
	}
	return nil
}

func classifyResponse(resp *http.Response, body []byte, now time.Time, redact func(string) string) Result {
	code := resp.StatusCode
	res := Result{StatusCode: code}
	switch {
	case code >= 200 && code < 300:
		res.Outcome = Delivered
		return res
	case code == 408 || code == 425 || code == 429 || code >= 500:
		res.Outcome = Transient
		if code == 429 || code == 503 {
			res.RetryAfter, _ = ParseRetryAfter(resp.Header.Get("Retry-After"), now)
		}
	default: // other 4xx, and 3xx left unfollowed
		res.Outcome = Permanent
	}
	msg := "HTTP " + strconv.Itoa(code)
	if t := http.StatusText(code); t != "" {
		msg += " " + t
	}
	if snip := strings.TrimSpace(string(body[:min(len(body), snippetLen)])); snip != "" {
		msg += ": " + snip
	}
	res.Err = redact(msg)
	return res
}

func classifyError(ctx context.Context, err error, redact func(string) string) Result {
	switch {
	case errors.Is(err, errCrossHost), errors.Is(err, errTooManyHops), errors.Is(err, errRedirectProto):
		return Result{Outcome: Permanent, Err: redact(errors.Unwrap(err).Error())}
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return Result{Outcome: Transient, Err: "request timed out or was cancelled before a response"}
	}
	// url.Error prints the whole URL, which may be a credential (a Slack
	// webhook URL is one); keep only the operation and the cause.
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = ue.Op + ": " + ue.Err.Error()
	}
	return Result{Outcome: Transient, Err: redact(msg)}
}
