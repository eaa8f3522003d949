package httpapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// gzipMinSize is the smallest JSON answer worth compressing: below it the
// gzip header and the CPU cost more than the bytes saved.
const gzipMinSize = 1024

// gzipWriter marks the response of a request that accepts gzip; writeJSON
// compresses through it. Only JSON answers are compressed: files keep
// their bytes (their ETag is their digest) and event streams their
// flushes.
type gzipWriter struct {
	http.ResponseWriter
	pool *sync.Pool
}

func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// acceptGzip hands handlers a gzipWriter when the client asks for gzip.
func (s *Server) acceptGzip(next http.Handler) http.Handler {
	pool := &sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed); return w }}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			w = &gzipWriter{ResponseWriter: w, pool: pool}
		}
		next.ServeHTTP(w, r)
	})
}

// acceptsGzip reads Accept-Encoding: gzip (or *) without q=0.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "gzip" && name != "*" {
			continue
		}
		if q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				continue
			}
		}
		return true
	}
	return false
}

// kept is a result that keeps its encodings while it stands (a skill list
// page from the service's cache): it is encoded and compressed once, not
// for every request it answers.
type kept interface {
	Encoded(name string, encode func() ([]byte, error)) ([]byte, error)
}

// writeBody writes an encoded answer, compressed when w accepts gzip and
// the body is worth it; k, when not nil, is the result body encodes,
// which keeps the compressed bytes too.
func writeBody(w http.ResponseWriter, status int, body []byte, k kept) {
	w.Header().Add("Vary", "Accept-Encoding")
	g, ok := w.(*gzipWriter)
	if !ok || len(body) < gzipMinSize {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		w.Write(body)
		return
	}
	w.Header().Set("Content-Encoding", "gzip")
	if k != nil {
		gz, _ := k.Encoded("json+gzip", func() ([]byte, error) {
			var buf bytes.Buffer
			g.compress(&buf, body)
			return buf.Bytes(), nil
		})
		w.Header().Set("Content-Length", strconv.Itoa(len(gz)))
		w.WriteHeader(status)
		w.Write(gz)
		return
	}
	w.WriteHeader(status)
	g.compress(g.ResponseWriter, body)
}

// compress writes body to dst through a pooled gzip writer.
func (g *gzipWriter) compress(dst io.Writer, body []byte) {
	zw := g.pool.Get().(*gzip.Writer)
	zw.Reset(dst)
	zw.Write(body)
	zw.Close()
	g.pool.Put(zw)
}
