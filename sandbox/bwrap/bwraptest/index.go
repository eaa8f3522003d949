package bwraptest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skilld/skilld/sandbox/sandboxtest"
)

// PackageIndex serves a Python simple index with probe-pkg 1.0 and an npm
// registry with probe-node 1.0.0, counting what they send.
type PackageIndex struct {
	*httptest.Server
	wheel, tarball []byte
	files          atomic.Int32
	held           atomic.Pointer[chan struct{}]
}

// Hold makes downloads of the wheel wait until release is called: an
// install that takes as long as the test wants.
func (ix *PackageIndex) Hold() (release func()) {
	ch := make(chan struct{})
	ix.held.Store(&ch)
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// Downloads counts the packages the index sent.
func (ix *PackageIndex) Downloads() int32 { return ix.files.Load() }

// NewPackageIndex starts one, closed at the end of the test.
func NewPackageIndex(t testing.TB) *PackageIndex {
	ix := &PackageIndex{wheel: sandboxtest.Wheel(t), tarball: npmTarball(t)}
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/probe-pkg/", func(w http.ResponseWriter, r *http.Request) {
		sum := sha256.Sum256(ix.wheel)
		fmt.Fprintf(w, `<html><body><a href="/files/probe_pkg-1.0-py3-none-any.whl#sha256=%s">probe_pkg-1.0-py3-none-any.whl</a></body></html>`, hex.EncodeToString(sum[:]))
	})
	mux.HandleFunc("/files/probe_pkg-1.0-py3-none-any.whl", func(w http.ResponseWriter, r *http.Request) {
		if ch := ix.held.Load(); ch != nil {
			select {
			case <-*ch:
			case <-r.Context().Done():
				return
			}
		}
		ix.files.Add(1)
		w.Write(ix.wheel)
	})
	mux.HandleFunc("/probe-node/-/probe-node-1.0.0.tgz", func(w http.ResponseWriter, r *http.Request) {
		ix.files.Add(1)
		w.Write(ix.tarball)
	})
	ix.Server = httptest.NewServer(mux)
	t.Cleanup(ix.Close)
	return ix
}

// npmTarball is the package probe-node 1.0.0 (module.exports = 42).
func npmTarball(t testing.TB) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{"package/package.json": `{"name": "probe-node", "version": "1.0.0", "main": "index.js"}`, "package/index.js": "module.exports = 42;\n"} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	if tw.Close() != nil || gz.Close() != nil {
		t.Fatal("tarball")
	}
	return buf.Bytes()
}

// Lockfile is a package-lock.json that pins probe-node to the index's
// tarball.
func (ix *PackageIndex) Lockfile() string {
	sum := sha512.Sum512(ix.tarball)
	b, _ := json.Marshal(map[string]any{"name": "skill", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": map[string]any{
		"":                        map[string]any{"name": "skill", "version": "1.0.0", "dependencies": map[string]string{"probe-node": "1.0.0"}},
		"node_modules/probe-node": map[string]any{"version": "1.0.0", "resolved": ix.URL + "/probe-node/-/probe-node-1.0.0.tgz", "integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:])},
	}})
	return string(b)
}
