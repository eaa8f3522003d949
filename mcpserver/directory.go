package mcpserver

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilld/skilld"
)

// methodDirectoryRead lists a directory resource's direct children (the
// Skills extension's optional method, declared as directoryRead).
const methodDirectoryRead = "resources/directory/read"

// mimeDirectory is the MIME type of a directory resource.
const mimeDirectory = "inode/directory"

// directoryPageSize is how many children one page carries. A skill holds
// at most a thousand files, so most directories fit one page.
const directoryPageSize = 100

type directoryReadParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

type directoryReadResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

// directoryRead serves resources/directory/read on a skill's directories:
// skill://<name> (the skill's root) and skill://<name>/<folder>. Files are
// listed with the metadata resources/list gives them, folders as
// inode/directory resources. Only the one skill asked for is read, now.
func (s *Server) directoryRead(ctx context.Context, _ *mcp.ServerSession, p *directoryReadParams) (*directoryReadResult, error) {
	var uri, cursor string
	if p != nil {
		uri, cursor = p.URI, p.Cursor
	}
	name, dir, err := parseDirURI(uri)
	if err != nil {
		return nil, s.protocolError(err)
	}
	start, err := parseCursor(cursor)
	if err != nil {
		return nil, err
	}
	sk, err := s.skill(ctx, name)
	if skilld.ErrorCode(err) == skilld.ENOTFOUND {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no directory at %s: no skill %q is served here", uri, name)}
	}
	if err != nil {
		return nil, s.protocolError(err)
	}
	list, err := s.files(ctx, sk)
	if err != nil {
		return nil, s.protocolError(err)
	}
	children, err := directoryChildren(list.Files, dir)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s %s", uri, skilld.ErrorMessage(err))}
	}
	res := &directoryReadResult{ResultType: "complete", Resources: []*mcp.Resource{}}
	end := min(start+directoryPageSize, len(children))
	for _, c := range children[min(start, end):end] {
		if c.dir {
			res.Resources = append(res.Resources, &mcp.Resource{URI: fileURI(sk.Name, c.path), Name: c.name, MIMEType: mimeDirectory})
			continue
		}
		f, err := s.served(ctx, sk, list, c.file)
		if err != nil {
			return nil, s.protocolError(err)
		}
		res.Resources = append(res.Resources, fileResource(sk, list.Version, f))
	}
	if end < len(children) {
		res.NextCursor = strconv.Itoa(end)
	}
	return res, nil
}

// child is one entry of a directory: a file, or a folder holding files.
type child struct {
	name, path string
	dir        bool
	file       skilld.PackageFile
}

// directoryChildren returns the direct children of folder dir ("" for the
// skill's root) among a skill's files, sorted by name. A package holds
// files only, so a folder exists while a file lies below it.
func directoryChildren(files []skilld.PackageFile, dir string) ([]child, error) {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	var out []child
	seen := map[string]bool{}
	for _, f := range files {
		if f.Path == dir {
			return nil, skilld.Errorf(skilld.EINVALID, "is a file, not a directory resource: read it with resources/read")
		}
		rest, ok := strings.CutPrefix(f.Path, prefix)
		if !ok {
			continue
		}
		if sub, _, nested := strings.Cut(rest, "/"); nested {
			if !seen[sub] {
				seen[sub] = true
				out = append(out, child{name: sub, path: prefix + sub, dir: true})
			}
			continue
		}
		out = append(out, child{name: rest, path: f.Path, file: f})
	}
	if len(out) == 0 {
		return nil, skilld.Errorf(skilld.ENOTFOUND, "is not a directory of the skill")
	}
	slices.SortFunc(out, func(a, b child) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// parseDirURI splits a directory URI into skill name and folder ("" for
// the skill's root). Directory URIs have no trailing slash.
func parseDirURI(uri string) (skill, dir string, err error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != uriScheme || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" ||
		u.Path != "" && !strings.HasPrefix(u.Path, "/") {
		return "", "", skilld.Errorf(skilld.EINVALID, "%q is not a skill directory URI: use skill://<skill name> or skill://<skill name>/<folder>", uri)
	}
	if strings.HasSuffix(u.Path, "/") {
		return "", "", skilld.Errorf(skilld.EINVALID, "%q ends with '/': directory URIs are written without a trailing slash", uri)
	}
	return u.Host, strings.TrimPrefix(u.Path, "/"), nil
}

// parseCursor reads a cursor this server gave out: an offset.
func parseCursor(cursor string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(cursor)
	if err != nil || n < 0 {
		return 0, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid cursor %q: pass back a nextCursor this server returned", cursor)}
	}
	return n, nil
}
