package importer_test

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/importer"
	"github.com/skilld/skilld/internal/testnet"
)

// An unreachable GitHub is EUNAVAILABLE with the cause named in the
// message: DNS, a refused connection, a timeout, or TLS and how it failed.
// Each case is a real failure of a real connection.
func TestUnreachableNamesTheCause(t *testing.T) {
	t.Parallel()
	refusedAddr := testnet.RefusingAddr(t)
	refusedURL := "http://" + refusedAddr

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() }) // accepted, never answered
		}
	}()

	untrusted := httptest.NewUnstartedServer(http.NotFoundHandler())
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	untrusted.StartTLS()
	t.Cleanup(untrusted.Close)
	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)

	src, err := importer.ParseGitHubURL("https://github.com/o/r")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, url string
		client    *http.Client
		want      string
	}{
		{"dns", "http://skilld-test.invalid", nil, "(DNS: "},
		{"refused", refusedURL, nil, "(connection refused by " + refusedAddr + ")"},
		{"timeout", "http://" + silent.Addr().String(), &http.Client{Timeout: 100 * time.Millisecond}, "(timed out)"},
		{"unknown authority", untrusted.URL, nil, "(TLS: the server's certificate is signed by an unknown authority)"},
		{"not tls", "https://" + plain.Listener.Addr().String(), nil, "(TLS: the server answered in plain HTTP, not TLS)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g := &importer.GitHub{APIURL: c.url, HTTPClient: c.client}
			importer.SetBackoff(g, time.Millisecond)
			_, _, err := g.Fetch(context.Background(), src)
			wantErr(t, err, skilld.EUNAVAILABLE, nil, "GitHub could not be reached "+c.want, "o/r")
		})
	}
}
