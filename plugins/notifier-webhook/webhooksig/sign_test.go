package webhooksig

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Standard Webhooks reference test vector (the specification's
// libraries all test against it).
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTS     = 1614265330
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestStandardVector(t *testing.T) {
	keys, err := StandardKeys(vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got := SignStandard(keys, vectorID, vectorTS, []byte(vectorBody)); got != vectorSig {
		t.Fatalf("signature = %s, want %s", got, vectorSig)
	}
	h := http.Header{}
	h.Set(HeaderID, vectorID)
	h.Set(HeaderTimestamp, strconv.Itoa(vectorTS))
	h.Set(HeaderSignature, vectorSig)
	if err := VerifyStandard(vectorSecret, h, []byte(vectorBody), time.Unix(vectorTS+10, 0), 0); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

func standardHeaders(t *testing.T, secret, id string, ts int64, body string) http.Header {
	t.Helper()
	keys, err := StandardKeys(secret)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	h.Set(HeaderSignature, SignStandard(keys, id, ts, []byte(body)))
	return h
}

func TestVerifyStandard(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	const body = `{"schema":"animus.daemon.notification-delivery.v1"}`
	cases := []struct {
		name    string
		headers func() http.Header
		secret  string
		body    string
		want    error
	}{
		{"valid", func() http.Header { return standardHeaders(t, "s3cret-key", "d-1", now.Unix(), body) }, "s3cret-key", body, nil},
		{"tampered body", func() http.Header { return standardHeaders(t, "s3cret-key", "d-1", now.Unix(), body) }, "s3cret-key", body + " ", ErrNoMatch},
		{"wrong secret", func() http.Header { return standardHeaders(t, "s3cret-key", "d-1", now.Unix(), body) }, "other-key", body, ErrNoMatch},
		{"id swapped", func() http.Header {
			h := standardHeaders(t, "s3cret-key", "d-1", now.Unix(), body)
			h.Set(HeaderID, "d-2")
			return h
		}, "s3cret-key", body, ErrNoMatch},
		{"too old", func() http.Header {
			return standardHeaders(t, "s3cret-key", "d-1", now.Add(-6*time.Minute).Unix(), body)
		}, "s3cret-key", body, ErrTimestamp},
		{"from the future", func() http.Header {
			return standardHeaders(t, "s3cret-key", "d-1", now.Add(6*time.Minute).Unix(), body)
		}, "s3cret-key", body, ErrTimestamp},
		{"missing signature", func() http.Header {
			h := standardHeaders(t, "s3cret-key", "d-1", now.Unix(), body)
			h.Del(HeaderSignature)
			return h
		}, "s3cret-key", body, ErrMissingHeader},
		{"rotation: receiver has the new key", func() http.Header {
			return standardHeaders(t, "old-key-1 new-key-2", "d-1", now.Unix(), body)
		}, "new-key-2", body, nil},
		{"rotation: receiver has both keys", func() http.Header { return standardHeaders(t, "old-key-1", "d-1", now.Unix(), body) }, "new-key-2 old-key-1", body, nil},
		{"whsec secret", func() http.Header {
			return standardHeaders(t, "whsec_"+base64.StdEncoding.EncodeToString([]byte("raw key bytes")), "d-1", now.Unix(), body)
		}, "whsec_" + base64.StdEncoding.EncodeToString([]byte("raw key bytes")), body, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := VerifyStandard(c.secret, c.headers(), []byte(c.body), now, 0)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestKeysRejectBadSecrets(t *testing.T) {
	for _, s := range []string{"", "   ", "whsec_***not-base64***"} {
		if _, err := StandardKeys(s); err == nil {
			t.Errorf("StandardKeys(%q) accepted", s)
		} else if s != "" && strings.Contains(err.Error(), strings.TrimSpace(s)) && strings.TrimSpace(s) != "" {
			t.Errorf("error %q echoes the secret", err)
		}
	}
	if _, err := RawKeys(" \t"); !errors.Is(err, ErrEmptySecret) {
		t.Errorf("RawKeys(blank) = %v", err)
	}
}

func TestGitHubAndStripe(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"a":1}`)
	keys, _ := RawKeys("gh-secret")
	sig := SignGitHub(keys, body)
	if !strings.HasPrefix(sig, "sha256=") || len(sig) != len("sha256=")+64 {
		t.Fatalf("github signature %q", sig)
	}
	if err := VerifyGitHub("gh-secret", sig, body); err != nil {
		t.Errorf("github verify: %v", err)
	}
	if err := VerifyGitHub("gh-secret", sig, []byte(`{"a":2}`)); !errors.Is(err, ErrNoMatch) {
		t.Errorf("github tampered: %v", err)
	}
	if err := VerifyGitHub("gh-secret", "sha1=abc", body); !errors.Is(err, ErrMissingHeader) {
		t.Errorf("github wrong prefix: %v", err)
	}

	// A Stripe secret keeps its whsec_ prefix as part of the key.
	skeys, _ := RawKeys("whsec_stripe_like")
	v := SignStripe(skeys, now.Unix(), body)
	if !strings.HasPrefix(v, "t="+strconv.FormatInt(now.Unix(), 10)+",v1=") {
		t.Fatalf("stripe header %q", v)
	}
	if err := VerifyStripe("whsec_stripe_like", v, body, now, 0); err != nil {
		t.Errorf("stripe verify: %v", err)
	}
	if err := VerifyStripe("whsec_stripe_like", v, body, now.Add(10*time.Minute), 0); !errors.Is(err, ErrTimestamp) {
		t.Errorf("stripe stale: %v", err)
	}
	if err := VerifyStripe("other", v, body, now, 0); !errors.Is(err, ErrNoMatch) {
		t.Errorf("stripe wrong key: %v", err)
	}
}
