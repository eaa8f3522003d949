package egress_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/skilld/skilld/sandbox/egress"
)

func ExampleParseAllowlist() {
	a, err := egress.ParseAllowlist([]string{"API.example.com", "*.example.org", "example.com:8443", "[::1]:8080"})
	fmt.Println(a.Entries(), err)
	_, err = egress.ParseAllowlist([]string{"https://example.com"})
	fmt.Println(err)
	// Output:
	// [api.example.com *.example.org example.com:8443 [::1]:8080] <nil>
	// egress allowlist entry "https://example.com": give a host, not a URL (no scheme)
}

// A task's proxy on a unix socket (in production, its listener is in the
// command's network namespace), and a request for a host not on the list.
func ExampleNew() {
	allow, _ := egress.ParseAllowlist([]string{"api.example.com"})
	events := make(chan egress.Event, 1)
	p, err := egress.New(egress.Config{Allow: allow, OnEvent: func(e egress.Event) { events <- e }})
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "egress")
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "proxy.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		panic(err)
	}
	go p.Serve(ln)
	defer p.Close()

	c, err := net.Dial("unix", sock)
	if err != nil {
		panic(err)
	}
	fmt.Fprint(c, "CONNECT evil.example.net:443 HTTP/1.1\r\nHost: evil.example.net:443\r\n\r\n")
	resp, _ := http.ReadResponse(bufio.NewReader(c), nil)
	body, _ := io.ReadAll(resp.Body)
	c.Close()
	fmt.Print(resp.Status, "\n", string(body))
	e := <-events
	fmt.Println(e.Allowed, e.Method, e.Host, e.Port, e.Status)
	// Output:
	// 403 Forbidden
	// egress: evil.example.net:443 is refused: evil.example.net is not on the task's allowlist
	// false CONNECT evil.example.net 443 403
}
