package webhooksig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
)

// Standard Webhooks header names (lower case, as the specification writes
// them; net/http canonicalises them on the wire, which receivers ignore).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
	// HeaderGitHub is the GitHub-style signature header.
	HeaderGitHub = "X-Hub-Signature-256"
	// DefaultStripeHeader is the Stripe-style header name used when a
	// connector does not choose one.
	DefaultStripeHeader = "Animus-Signature"
)

// standardPrefix marks a base64 Standard Webhooks secret.
const standardPrefix = "whsec_"

// ErrEmptySecret is returned for a secret value with no key in it.
var ErrEmptySecret = errors.New("webhooksig: the signing secret is empty")

// StandardKeys turns a secret value into HMAC keys for Standard Webhooks.
// The value holds one or more whitespace-separated secrets; each is either
// "whsec_<base64>" (the key is the decoded bytes, as the specification
// says) or any other string (the key is its bytes).
func StandardKeys(secret string) ([][]byte, error) {
	fields := strings.Fields(secret)
	if len(fields) == 0 {
		return nil, ErrEmptySecret
	}
	keys := make([][]byte, 0, len(fields))
	for _, f := range fields {
		if rest, ok := strings.CutPrefix(f, standardPrefix); ok {
			k, err := base64.StdEncoding.DecodeString(rest)
			if err != nil || len(k) == 0 {
				// The error text must not echo the secret.
				return nil, errors.New("webhooksig: a whsec_ secret is not valid base64")
			}
			keys = append(keys, k)
			continue
		}
		keys = append(keys, []byte(f))
	}
	return keys, nil
}

// RawKeys turns a secret value into HMAC keys for the GitHub and Stripe
// styles, which use the secret string itself as the key (a Stripe secret
// keeps its "whsec_" prefix).
func RawKeys(secret string) ([][]byte, error) {
	fields := strings.Fields(secret)
	if len(fields) == 0 {
		return nil, ErrEmptySecret
	}
	keys := make([][]byte, len(fields))
	for i, f := range fields {
		keys[i] = []byte(f)
	}
	return keys, nil
}

func mac(key []byte, parts ...[]byte) []byte {
	h := hmac.New(sha256.New, key)
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

var dot = []byte(".")

// standardMAC is HMAC-SHA256(key, id + "." + ts + "." + body).
func standardMAC(key []byte, id string, ts int64, body []byte) []byte {
	return mac(key, []byte(id), dot, []byte(strconv.FormatInt(ts, 10)), dot, body)
}

// SignStandard returns the webhook-signature value: one "v1,<base64>" per
// key, separated by spaces.
func SignStandard(keys [][]byte, id string, ts int64, body []byte) string {
	sigs := make([]string, len(keys))
	for i, k := range keys {
		sigs[i] = "v1," + base64.StdEncoding.EncodeToString(standardMAC(k, id, ts, body))
	}
	return strings.Join(sigs, " ")
}

// SignGitHub returns the X-Hub-Signature-256 value for the first key
// ("sha256=<hex>"). GitHub's format carries one signature only.
func SignGitHub(keys [][]byte, body []byte) string {
	return "sha256=" + hex.EncodeToString(mac(keys[0], body))
}

// SignStripe returns the Stripe-style value "t=<ts>,v1=<hex>[,v1=<hex>…]".
func SignStripe(keys [][]byte, ts int64, body []byte) string {
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(strconv.FormatInt(ts, 10))
	for _, k := range keys {
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(mac(k, []byte(strconv.FormatInt(ts, 10)), dot, body)))
	}
	return b.String()
}
