package inbound

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// DefaultMaxBody caps an Events API request body. Slack's payloads are a
// few KiB; the cap keeps a hostile client from making us buffer much
// before the signature is checked.
const DefaultMaxBody = 1 << 20

// HTTP serves the Events API on one path.
type HTTP struct {
	Addr    string
	Path    string
	Secret  string
	MaxBody int64
	Logger  *slog.Logger
	Status  *Status
	Sink    Sink

	base context.Context // deliveries outlive their request
}

// Listen binds the address, so trigger/watch can report a port in use as
// an error instead of a stream that never delivers.
func (h *HTTP) Listen() (net.Listener, error) {
	return net.Listen("tcp", h.Addr)
}

// Serve answers requests on ln until ctx ends, then closes the listener
// and any open connection at once: exit must not wait on Slack's sockets.
func (h *HTTP) Serve(ctx context.Context, ln net.Listener) {
	if h.MaxBody <= 0 {
		h.MaxBody = DefaultMaxBody
	}
	h.base = ctx
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		ErrorLog:          log.New(logWriter{h.Logger}, "", 0),
	}
	h.Status.Set(PhaseListening, "")
	h.Logger.Info("events api listening", "addr", ln.Addr().String(), "path", h.Path)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		srv.Close()
		<-errc
		h.Status.Set(PhaseStopped, "")
	case err := <-errc:
		h.Status.Set(PhaseFailed, "events api listener: "+err.Error())
		h.Logger.Error("events api listener stopped", "error", err)
	}
}

// ServeHTTP verifies, answers, then delivers.
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != h.Path {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return
	}
	if reason := h.verify(r.Header, body); reason != "" {
		// Not an error of ours: log the reason, never the secret or body.
		h.Logger.Warn("events api request rejected", "reason", reason, "remote", r.RemoteAddr)
		http.Error(w, "invalid request signature", http.StatusUnauthorized)
		return
	}
	// The outer envelope is read by hand: slackevents.ParseEvent also
	// types the inner event and fails on types slack-go does not know,
	// which would turn a valid, signed event into a 400 that Slack retries.
	var outer struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
	}
	if err := json.Unmarshal(body, &outer); err != nil {
		http.Error(w, "body is not JSON", http.StatusBadRequest)
		return
	}
	switch outer.Type {
	case slackevents.URLVerification:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"challenge": outer.Challenge})
	case slackevents.CallbackEvent:
		// 200 first: Slack retries anything not answered within 3 s, and
		// the seen-set would only have to absorb the retry.
		w.WriteHeader(http.StatusOK)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		retry, _ := strconv.Atoi(r.Header.Get("X-Slack-Retry-Num"))
		_ = h.Sink(h.base, Delivery{
			Payload:     json.RawMessage(body),
			Transport:   "http",
			Retry:       retry,
			RetryReason: r.Header.Get("X-Slack-Retry-Reason"),
			Received:    time.Now(),
		})
	default:
		// app_rate_limited and future envelope types: acknowledged, unused.
		h.Logger.Debug("events api envelope ignored", "type", outer.Type)
		w.WriteHeader(http.StatusOK)
	}
}

// verify checks the v0 signature and the timestamp window. It returns ""
// when the request is Slack's.
func (h *HTTP) verify(header http.Header, body []byte) string {
	sv, err := slack.NewSecretsVerifier(header, h.Secret)
	if err != nil {
		return err.Error() // missing headers, stale timestamp, malformed signature
	}
	if _, err := sv.Write(body); err != nil {
		return err.Error()
	}
	if err := sv.Ensure(); err != nil { // hmac.Equal: constant time
		return err.Error()
	}
	return ""
}

// logWriter sends net/http's server log lines to the JSON stderr log.
type logWriter struct{ log *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Debug(strings.TrimSpace(string(p)), "source", "net/http")
	return len(p), nil
}
