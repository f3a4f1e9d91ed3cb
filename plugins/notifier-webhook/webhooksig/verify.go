package webhooksig

import (
	"crypto/hmac"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultTolerance is how far a signed timestamp may be from the
// receiver's clock. Five minutes is what Standard Webhooks, Stripe and
// most providers use.
const DefaultTolerance = 5 * time.Minute

// Verification errors. They say what is wrong without echoing secrets.
var (
	ErrMissingHeader = errors.New("webhooksig: signature headers missing")
	ErrTimestamp     = errors.New("webhooksig: timestamp outside the tolerance window")
	ErrNoMatch       = errors.New("webhooksig: no signature matches")
)

// VerifyStandard checks a Standard Webhooks delivery: the three headers are
// present, the timestamp is within tolerance of now (DefaultTolerance when
// tolerance is 0), and at least one "v1," signature in webhook-signature
// equals HMAC-SHA256 over id.timestamp.body under one of secret's keys.
// Every comparison is constant time.
func VerifyStandard(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return ErrMissingHeader
	}
	ts, err := checkTimestamp(tsText, now, tolerance)
	if err != nil {
		return err
	}
	keys, err := StandardKeys(secret)
	if err != nil {
		return err
	}
	var got [][]byte
	for _, s := range strings.Fields(sigs) {
		if b64, ok := strings.CutPrefix(s, "v1,"); ok {
			if raw, err := base64.StdEncoding.DecodeString(b64); err == nil {
				got = append(got, raw)
			}
		}
	}
	for _, k := range keys {
		if anyEqual(got, standardMAC(k, id, ts, body)) {
			return nil
		}
	}
	return ErrNoMatch
}

// VerifyGitHub checks an X-Hub-Signature-256 value ("sha256=<hex>") over
// body under any of secret's keys. The style signs no timestamp; pair it
// with your own replay protection.
func VerifyGitHub(secret, header string, body []byte) error {
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return ErrMissingHeader
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return ErrNoMatch
	}
	keys, err := RawKeys(secret)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if hmac.Equal(got, mac(k, body)) {
			return nil
		}
	}
	return ErrNoMatch
}

// VerifyStripe checks a Stripe-style value "t=<unix>,v1=<hex>[,v1=…]":
// the timestamp within tolerance and one v1 equal to HMAC-SHA256 over
// t + "." + body under one of secret's keys.
func VerifyStripe(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var tsText string
	var got [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			tsText = v
		case "v1":
			if raw, err := hex.DecodeString(v); err == nil {
				got = append(got, raw)
			}
		}
	}
	if tsText == "" || len(got) == 0 {
		return ErrMissingHeader
	}
	if _, err := checkTimestamp(tsText, now, tolerance); err != nil {
		return err
	}
	keys, err := RawKeys(secret)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if anyEqual(got, mac(k, []byte(tsText), dot, body)) {
			return nil
		}
	}
	return ErrNoMatch
}

func checkTimestamp(text string, now time.Time, tolerance time.Duration) (int64, error) {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	ts, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, ErrTimestamp
	}
	d := now.Sub(time.Unix(ts, 0))
	if d > tolerance || d < -tolerance {
		return 0, ErrTimestamp
	}
	return ts, nil
}

// anyEqual compares want against every candidate without stopping early,
// so the time taken does not reveal which candidate (if any) matched.
func anyEqual(candidates [][]byte, want []byte) bool {
	ok := false
	for _, c := range candidates {
		if hmac.Equal(c, want) {
			ok = true
		}
	}
	return ok
}
