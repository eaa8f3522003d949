package mcpserver

import (
	"context"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilld/skilld"
)

// readResource serves resources/read for skill:// URIs. It resolves the
// skill live, so a skill withheld or deleted since the list was sent is
// not found, and a file changed since is read as it is now (its digest in
// _meta says which content this is).
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	name, file, err := parseURI(uri)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	sk, err := s.skill(ctx, name)
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, s.protocolError(err)
	}
	data, f, err := s.readFile(ctx, sk, file, 0)
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, s.protocolError(err)
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: mimeType(file), Meta: mcp.Meta{metaDigest: f.Digest, metaVersion: sk.Version}}
	if utf8.Valid(data) {
		c.Text = string(data)
	} else {
		c.Blob = data
		if c.MIMEType == "text/plain" {
			c.MIMEType = "application/octet-stream"
		}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}, Cacheable: mcp.Cacheable{TTLMs: skillsTTL, CacheScope: cacheScope}}, nil
}

// resourcePageSkills is how many skills' files one resources/list page
// carries: a page lists each of its skills' files, so its cost follows
// the page, not the workspace.
const resourcePageSkills = 100

// listResources serves resources/list of view v a page at a time: the
// index first, then every file of the disclosed skills, skill by skill,
// the files of one skill always on one page. The cursor is the offset of the page's
// first skill in the view; a client that follows the cursors while the
// revision stands sees every resource exactly once.
func (s *Server) listResources(ctx context.Context, v *view, req *mcp.ListResourcesRequest) (*mcp.ListResourcesResult, error) {
	var cursor string
	if req.Params != nil {
		cursor = req.Params.Cursor
	}
	start, err := parseCursor(cursor)
	if err != nil {
		return nil, err
	}
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}, Cacheable: mcp.Cacheable{CacheScope: cacheScope}}
	if start == 0 {
		res.Resources = append(res.Resources, indexResource())
	}
	end := min(start+resourcePageSkills, len(v.skills))
	for _, sk := range v.skills[min(start, end):end] {
		list, err := s.files(ctx, sk)
		if err != nil {
			return nil, s.protocolError(err)
		}
		for _, f := range list.Files {
			if f, err = s.served(ctx, sk, list, f); err != nil {
				return nil, s.protocolError(err)
			}
			res.Resources = append(res.Resources, fileResource(sk, list.Version, f))
		}
	}
	if end < len(v.skills) {
		res.NextCursor = strconv.Itoa(end)
	}
	return res, nil
}
