// Package s3test gives tests a real S3 server: the one SKILLD_TEST_S3_URL
// names, or a versitygw (posix backend) it starts on a free local port.
// Without either, tests skip with the reason, except under CI=true, where a
// missing server is a failure so that CI can never pass by skipping.
//
// Use it from TestMain: srv := s3test.Start(); code := m.Run(); srv.Stop().
package s3test

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Credentials and bucket of a server this package starts itself; the same
// as scripts/s3server uses.
const (
	AccessKey = "skilld"
	SecretKey = "skilld-secret"
	Bucket    = "skilld-test"
)

// Server is an S3 endpoint for tests.
type Server struct {
	Endpoint             string // "http://127.0.0.1:PORT"
	Region               string
	Bucket               string
	Prefix               string // key prefix under which tests make their own
	AccessKey, SecretKey string

	unavailable string // why there is no server ("" when there is one)
	cmd         *exec.Cmd
	exited      chan struct{}
	dir         string
}

// Start finds or starts a server. It never fails: problems are recorded and
// reported by Require, so that only tests that need S3 are affected.
func Start() *Server {
	if raw := os.Getenv("SKILLD_TEST_S3_URL"); raw != "" {
		return fromURL(raw)
	}
	bin, err := findVersitygw()
	if err != nil {
		return &Server{unavailable: err.Error()}
	}
	s, err := startVersitygw(bin)
	if err != nil {
		return &Server{unavailable: fmt.Sprintf("starting %s: %v", bin, err)}
	}
	return s
}

// Require returns s, or ends t: a skip, or a failure when CI=true.
func (s *Server) Require(t testing.TB) *Server {
	t.Helper()
	if s.unavailable == "" {
		return s
	}
	msg := "no S3 server for this test: " + s.unavailable +
		" (set SKILLD_TEST_S3_URL and AWS credentials, or run: scripts/s3server install)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return nil
}

// FreshPrefix returns a key prefix no other test uses, so that each test
// starts with an empty store even on a shared server.
func (s *Server) FreshPrefix(t testing.TB) string {
	var b [6]byte
	rand.Read(b[:])
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, t.Name())
	return strings.TrimPrefix(s.Prefix+"/"+name+"-"+hex.EncodeToString(b[:]), "/")
}

// URL is the s3:// URL of prefix on this server.
func (s *Server) URL(prefix string) string {
	q := url.Values{"endpoint": {s.Endpoint}, "region": {s.Region}}
	return "s3://" + s.Bucket + "/" + prefix + "?" + q.Encode()
}

// Stop stops a server Start started (and removes its data); a server from
// SKILLD_TEST_S3_URL is left alone.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	os.RemoveAll(s.dir)
}

// fromURL reads a server from SKILLD_TEST_S3_URL and the AWS credentials.
func fromURL(raw string) *Server {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return &Server{unavailable: fmt.Sprintf("SKILLD_TEST_S3_URL %q is not an s3://BUCKET/PREFIX URL", raw)}
	}
	s := &Server{
		Endpoint:  u.Query().Get("endpoint"),
		Region:    u.Query().Get("region"),
		Bucket:    u.Host,
		Prefix:    strings.Trim(u.Path, "/"),
		AccessKey: os.Getenv("AWS_ACCESS_KEY_ID"),
		SecretKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
	}
	if s.Region == "" {
		s.Region = "us-east-1"
	}
	if s.Endpoint == "" || s.AccessKey == "" || s.SecretKey == "" {
		s.unavailable = "SKILLD_TEST_S3_URL needs ?endpoint= and AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY"
	}
	return s
}

// findVersitygw looks on PATH, then where go install puts binaries.
func findVersitygw() (string, error) {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var dirs []string
	goBin := "go"
	if _, err := exec.LookPath(goBin); err != nil {
		goBin = "/usr/local/go/bin/go"
	}
	if out, err := exec.Command(goBin, "env", "GOBIN", "GOPATH").Output(); err == nil {
		// Two lines, GOBIN first; it is usually empty, so no TrimSpace.
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if len(lines) == 2 {
			if lines[0] != "" {
				dirs = append(dirs, lines[0])
			}
			for _, gp := range filepath.SplitList(lines[1]) {
				dirs = append(dirs, filepath.Join(gp, "bin"))
			}
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("versitygw not found on PATH or in " + strings.Join(dirs, ", "))
}

// startVersitygw runs bin on a free port with a temp posix root holding the
// test bucket (in that backend a bucket is a directory), and waits until it
// accepts connections.
func startVersitygw(bin string) (*Server, error) {
	dir, err := os.MkdirTemp("", "skilld-versitygw-*")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(filepath.Join(data, Bucket), 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	var lastErr error
	// The port is free when we pick it but could be taken before versitygw
	// binds it; try a few.
	for range 3 {
		addr, err := freeAddr()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s := &Server{
			Endpoint: "http://" + addr, Region: "us-east-1", Bucket: Bucket,
			AccessKey: AccessKey, SecretKey: SecretKey, dir: dir, exited: make(chan struct{}),
		}
		log, err := os.Create(filepath.Join(dir, "versitygw.log"))
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.cmd = exec.Command(bin, "--access", AccessKey, "--secret", SecretKey, "--port", addr, "posix", data)
		s.cmd.Stdout, s.cmd.Stderr = log, log
		s.cmd.SysProcAttr = childAttr() // dies with the test binary
		if err := s.cmd.Start(); err != nil {
			log.Close()
			os.RemoveAll(dir)
			return nil, err
		}
		go func() { s.cmd.Wait(); log.Close(); close(s.exited) }()
		if lastErr = waitListening(addr, s.exited, 30*time.Second); lastErr == nil {
			return s, nil
		}
		s.cmd.Process.Kill()
		<-s.exited
		if b, err := os.ReadFile(filepath.Join(dir, "versitygw.log")); err == nil && len(b) > 0 {
			lastErr = fmt.Errorf("%v; log: %s", lastErr, strings.TrimSpace(string(b)))
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitListening(addr string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("exited before listening on " + addr)
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not listening on %s after %v", addr, timeout)
}

// Main is the TestMain of a package whose tests need S3: it starts a
// server into *srv, runs the tests, stops the server and exits.
func Main(m *testing.M, srv **Server) {
	*srv = Start()
	code := m.Run()
	(*srv).Stop()
	os.Exit(code)
}
