package httpapi

import (
	"mime"
	"net/http"

	"github.com/skilld/skilld/service"
)

// Paths of Agent Skills discovery (https://agentskills.io/well-known-uri),
// under a workspace (/v1/workspaces/{ws}…, any token of the workspace) and,
// with Server.PublicDiscovery, at the root for the workspace "default".
// The index names each archive relative to itself, so both work alike.
const (
	DiscoveryIndexPath   = "/.well-known/agent-skills/index.json"
	DiscoveryArchivePath = "/.well-known/agent-skills/{id}/" + service.DiscoveryArchiveName
)

// publicDiscovery mounts the token-less discovery routes. They are not in
// the route table: they exist only when the operator turns them on, and
// they are the one place a caller without a token reads skills.
func (s *Server) publicDiscovery(mux *http.ServeMux) {
	mux.HandleFunc(http.MethodGet+" "+DiscoveryIndexPath, func(w http.ResponseWriter, r *http.Request) {
		idx, err := s.Service.PublicDiscoveryIndex(r.Context())
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", "*")
		writeJSON(w, http.StatusOK, idx)
	})
	mux.HandleFunc(http.MethodGet+" "+DiscoveryArchivePath, func(w http.ResponseWriter, r *http.Request) {
		a, err := s.Service.PublicSkillArchive(r.Context(), service.SkillArchiveParams{SkillRef: service.SkillRef{ID: r.PathValue("id")}})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", "*")
		s.writeArchive(w, r, a)
	})
}

// archiveReply writes a skill archive (discovery.archive) as its bytes.
func archiveReply(s *Server, a *service.SkillArchive) Responder {
	return responderFunc(func(w http.ResponseWriter, r *http.Request) error {
		s.writeArchive(w, r, a)
		return nil
	})
}

// writeArchive sends a skill archive as application/zip. Its digest is a
// strong ETag (the same package always zips to the same bytes), so a client
// holding the archive gets 304.
func (s *Server) writeArchive(w http.ResponseWriter, r *http.Request, a *service.SkillArchive) {
	defer a.Body.Close()
	etag := `"` + a.Digest + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "private, no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": a.Name + ".zip"}))
	s.stream(w, r, a.Body, a.Size, "archive download failed", "skill", a.Name, "digest", a.Digest)
}
