package unsafehost_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/sandbox/sandboxtest"
	"github.com/skilld/skilld/sandbox/unsafehost"
)

// The contract holds without isolation; the escape proofs do not apply
// (the provider says so in its Info).
func TestConformance(t *testing.T) {
	p, err := unsafehost.New(unsafehost.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if info := p.Info(); info.Isolated || !strings.Contains(info.Warning, "unsafe-host") {
		t.Errorf("Info %+v must say it isolates nothing", info)
	}
	sandboxtest.Run(t, sandboxtest.Options{Provider: p})
}
