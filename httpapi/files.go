package httpapi

import (
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/skilld/skilld/service"
)

// contentTypes maps file extensions to content types. It is a fixed table
// rather than mime.TypeByExtension, whose answers depend on the host's mime
// files. Types a browser would render actively (HTML, SVG) are left out on
// purpose: they fall back to application/octet-stream.
var contentTypes = map[string]string{
	".md":       "text/markdown; charset=utf-8",
	".markdown": "text/markdown; charset=utf-8",
	".txt":      "text/plain; charset=utf-8",
	".sh":       "text/x-shellscript",
	".bash":     "text/x-shellscript",
	".py":       "text/x-python",
	".js":       "text/javascript; charset=utf-8",
	".mjs":      "text/javascript; charset=utf-8",
	".ts":       "text/plain; charset=utf-8",
	".go":       "text/plain; charset=utf-8",
	".rb":       "text/plain; charset=utf-8",
	".csv":      "text/csv; charset=utf-8",
	".json":     "application/json",
	".yaml":     "application/yaml",
	".yml":      "application/yaml",
	".toml":     "application/toml",
	".xml":      "application/xml",
	".pdf":      "application/pdf",
	".png":      "image/png",
	".jpg":      "image/jpeg",
	".jpeg":     "image/jpeg",
	".gif":      "image/gif",
	".webp":     "image/webp",
}

func contentType(p string) string {
	if ct, ok := contentTypes[strings.ToLower(path.Ext(p))]; ok {
		return ct
	}
	return "application/octet-stream"
}

// fileReply writes a package file (skills.get_file) as its bytes.
func fileReply(s *Server, f *service.SkillFile) Responder {
	return responderFunc(func(w http.ResponseWriter, r *http.Request) error {
		s.serveFile(w, r, f)
		return nil
	})
}

// serveFile sends one package file. Its digest is a strong ETag (the bytes
// of a digest never change), so a client holding the file gets 304. The
// service verified the bytes against the digest before handing them over:
// a damaged stored copy is an integrity error before the first byte.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, f *service.SkillFile) {
	defer f.Body.Close()
	etag := `"` + f.Digest + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "private, no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	// Package files are user content: if a browser ever renders one, it
	// runs nothing and loads nothing.
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	if f.Exec {
		h.Set("X-Skilld-Exec", "true")
	}
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", contentType(f.Path))
	s.stream(w, r, f.Body, f.Size, "file download failed", "path", f.Path, "digest", f.Digest)
}

// stream answers 200 with size bytes from body (headers only for HEAD).
// A copy that fails after the status was sent is logged with attrs, and
// the connection is cut so the client cannot take a short body for a
// whole one.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, body io.Reader, size int64, failed string, attrs ...any) {
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(w, body); err != nil && r.Context().Err() == nil {
		s.logger().ErrorContext(r.Context(), failed, append([]any{"request_id", requestID(r)}, append(attrs, "error", err.Error())...)...)
		panic(http.ErrAbortHandler)
	}
}

// etagMatches implements If-None-Match's weak comparison over a list.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}
