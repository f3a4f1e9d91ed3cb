package demo

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
)

// TestDemo runs `make demo`'s scripts against the built binaries: every
// expectation in every script must hold, with no wire violation.
func TestDemo(t *testing.T) {
	for _, sc := range Scripts() {
		binaries.Path(t, sc.Binary) // build what is missing
	}
	binDir := filepath.Dir(binaries.Path(t, Scripts()[0].Binary))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := Run(ctx, binDir, &out, Options{Sessions: true}) // the story has its own test
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	for _, want := range []string{"✓ exited by itself with code 0", "PLUGIN", "animus-example"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "✗") {
		t.Errorf("demo output reports a failed expectation:\n%s", out.String())
	}
}
