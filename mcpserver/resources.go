package mcpserver

import (
	"context"
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
