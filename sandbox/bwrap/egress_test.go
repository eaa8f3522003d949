package bwrap_test

import (
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// TestEgress: with the network allowed, a command still has only its own
// loopback; its HTTP and HTTPS (CONNECT) requests reach the hosts of its
// allowlist through the proxy, and nothing else: a host not listed, an
// address not listed and a direct socket to the host are refused, each
// reported. (A name that resolves to loopback is refused too: the egress
// package's tests give the proxy such a name.)
func TestEgress(t *testing.T) {
	p, _ := bwraptest.New(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hello from %s%s", r.Host, r.URL.Path) })
	plain := httptest.NewServer(hello)
	defer plain.Close()
	secure := httptest.NewTLSServer(hello)
	defer secure.Close()
	_, plainPort, _ := net.SplitHostPort(plain.Listener.Addr().String())
	_, securePort, _ := net.SplitHostPort(secure.Listener.Addr().String())

	sb, err := p.Create(t.Context(), sandbox.CreateParams{ID: "net", Network: true, Allow: []string{"127.0.0.1:" + plainPort, "127.0.0.1:" + securePort}})
	if os.Geteuid() != 0 {
		// The proxy listens in each command's network, which takes root.
		if skilld.ErrorCode(err) != skilld.EUNAVAILABLE || !strings.Contains(err.Error(), "not root") {
			t.Errorf("the network on a server that is not root: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Destroy(t.Context())
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: secure.Certificate().Raw})
	if err := sb.WriteFile(t.Context(), "ca.pem", ca); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`curl -s http://127.0.0.1:%[1]s/plain; echo
curl -s --cacert ca.pem https://127.0.0.1:%[2]s/secure; echo
curl -s -o /dev/null -w 'other:%%{http_code}\n' http://example.invalid/
curl -s -o /dev/null -w 'unlisted:%%{http_code}\n' http://127.0.0.1:1/
curl -s --noproxy '*' -o /dev/null -w 'direct:%%{http_code}\n' http://127.0.0.1:%[1]s/ || echo direct:refused
grep -c : /proc/net/dev`, plainPort, securePort)
	res, err := sb.Exec(t.Context(), sandbox.ExecParams{Command: script})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("hello from 127.0.0.1:%s/plain\nhello from 127.0.0.1:%s/secure\nother:403\nunlisted:403\ndirect:000\ndirect:refused\n1\n", plainPort, securePort)
	if got := string(res.Output); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	var allowed, refused []string
	for _, e := range res.Egress {
		if e.Allowed {
			allowed = append(allowed, fmt.Sprintf("%s:%d", e.Host, e.Port))
			if e.BytesDown == 0 || e.BytesUp == 0 {
				t.Errorf("an allowed connection without bytes: %+v", e)
			}
		} else {
			refused = append(refused, fmt.Sprintf("%s:%d", e.Host, e.Port))
		}
	}
	if strings.Join(allowed, " ") != "127.0.0.1:"+plainPort+" 127.0.0.1:"+securePort || strings.Join(refused, " ") != "example.invalid:80 127.0.0.1:1" {
		t.Errorf("events: allowed %q, refused %q\n%+v", allowed, refused, res.Egress)
	}

	// Hosts to allow without the network are a mistake, and so is a bad
	// entry.
	for _, c := range []sandbox.CreateParams{{ID: "x1", Allow: []string{"example.com"}}, {ID: "x2", Network: true, Allow: []string{"https://example.com/"}}} {
		if _, err := p.Create(t.Context(), c); skilld.ErrorCode(err) != skilld.EINVALID {
			t.Errorf("Create(%+v): %v", c, err)
		}
	}
}
