// Package skilltools is the agent-facing skills toolset: the skill
// operations of the service (list, get, create, import, edit, delete,
// files, install) as tools a model can call, acting for one actor. It is a
// thin adapter like the REST API: the tools are built from
// service.Operations, so their parameters are the service's own, and a
// contract test keeps the two surfaces in parity.
package skilltools

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/service"
)

// MaxFileRead caps the bytes skills_get_file returns to a model; larger
// files are read through the REST API or from the sandbox.
const MaxFileRead = 1 << 20

// New returns one tool per service operation that has a tool name, each
// running as actor.
func New(svc *service.Service, actor service.Actor) ([]*tool.Tool, error) {
	var tools []*tool.Tool
	for _, op := range service.Operations() {
		if op.Tool == "" {
			continue
		}
		t, err := tool.NewForType(op.Tool, op.Summary, op.Params, func(ctx context.Context, p any) (any, error) {
			out, err := op.Call(ctx, svc, actor, p)
			// A model spells a file as the skill's own text does, which
			// may differ in case from the file: the one file it can mean
			// is read instead, and the result names it.
			if actual, ok := service.CaseOnlyMatch(err); ok {
				if fp, ok := fileParams(p); ok {
					fp.Path = actual
					out, err = op.Call(ctx, svc, actor, fp)
				}
			}
			if err != nil {
				return nil, err
			}
			if f, ok := out.(*service.SkillFile); ok {
				return readFile(f)
			}
			if imp, ok := out.(*service.ImportResult); ok && len(imp.Items) == 1 {
				return imp.Items[0], nil
			}
			return out, nil
		})
		if err != nil {
			return nil, err
		}
		// A resumed task may run a read again; a write cut off mid-call
		// is reported to the model instead (it may have taken effect).
		_, verb, _ := strings.Cut(op.Name, ".")
		t.Idempotent = slices.Contains([]string{"list", "get", "list_files", "get_file"}, verb)
		tools = append(tools, t)
	}
	return tools, nil
}

// fileParams returns the parameters of skills_get_file, as decoded.
func fileParams(p any) (service.GetSkillFileParams, bool) {
	switch v := p.(type) {
	case service.GetSkillFileParams:
		return v, true
	case *service.GetSkillFileParams:
		return *v, true
	}
	return service.GetSkillFileParams{}, false
}

// FileContent is what skills_get_file returns: the file's metadata and its
// content, as text when it is UTF-8 and base64 otherwise.
type FileContent struct {
	skilld.PackageFile
	Encoding string `json:"encoding"` // "utf-8" or "base64"
	Content  string `json:"content"`
}

func readFile(f *service.SkillFile) (*FileContent, error) {
	defer f.Body.Close()
	if f.Size > MaxFileRead {
		return nil, skilld.Errorf(skilld.ETOOLARGE, "file %q is %d bytes; this tool reads at most %d (use the sandbox copy or the REST API)", f.Path, f.Size, MaxFileRead)
	}
	data, err := io.ReadAll(f.Body)
	if err != nil {
		return nil, fmt.Errorf("reading %q: %w", f.Path, err)
	}
	if utf8.Valid(data) {
		return &FileContent{PackageFile: f.PackageFile, Encoding: "utf-8", Content: string(data)}, nil
	}
	return &FileContent{PackageFile: f.PackageFile, Encoding: "base64", Content: base64.StdEncoding.EncodeToString(data)}, nil
}
