package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/skilltools"
)

// The REST API and the agent toolset are two adapters over the same service
// operations. These tests keep them in parity: every operation has a route,
// every agent-facing operation has a tool, both accept the same
// parameters, and the same inputs lead to the same outcomes.

func routeFor(op string) (httpapi.Route, int) {
	var found httpapi.Route
	n := 0
	for _, r := range httpapi.Routes() {
		if r.Op.Name == op {
			found, n = r, n+1
		}
	}
	return found, n
}

// toolset returns the agent toolset acting for the holder of token, by
// tool name, and how many tools it has.
func (e *testEnv) toolset(t *testing.T, token string) (map[string]*tool.Tool, int) {
	t.Helper()
	actor, err := e.svc.Authenticate(t.Context(), token)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := skilltools.New(e.svc, actor)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*tool.Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	return byName, len(tools)
}

func TestParityContract(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	byName, count := e.toolset(t, e.admin)
	ops := map[string]bool{}
	for _, op := range service.Operations() {
		ops[op.Name] = true
		rt, n := routeFor(op.Name)
		if n != 1 {
			t.Errorf("operation %s has %d REST routes, want 1", op.Name, n)
			continue
		}
		if op.Tool == "" {
			continue
		}
		tl := byName[op.Tool]
		if tl == nil {
			t.Errorf("operation %s has no tool %q", op.Name, op.Tool)
			continue
		}
		rest := rt.ParamNames(op.Params)
		var fromTool []string
		for name := range tl.Schema.Properties {
			fromTool = append(fromTool, name)
		}
		var fromType []string
		for _, f := range reflect.VisibleFields(op.Params) {
			if name, ok := jsonFieldName(f); ok {
				fromType = append(fromType, name)
			}
		}
		slices.Sort(rest)
		slices.Sort(fromTool)
		slices.Sort(fromType)
		if !slices.Equal(rest, fromTool) || !slices.Equal(rest, fromType) {
			t.Errorf("operation %s: REST %s %s takes %v, tool %s takes %v, the service %v", op.Name, rt.Method, rt.Pattern, rest, op.Tool, fromTool, fromType)
		}
	}
	for _, r := range httpapi.Routes() {
		if r.Op.Name != "" && !ops[r.Op.Name] {
			t.Errorf("route %s %s calls unknown operation %s", r.Method, r.Pattern, r.Op.Name)
		}
	}
	if len(byName) != count {
		t.Error("two tools share a name")
	}
}

// jsonFieldName is the JSON name of a promoted field, false for embedded
// structs and skipped fields.
func jsonFieldName(f reflect.StructField) (string, bool) {
	if f.Anonymous || !f.IsExported() {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, true
}

// parityCase is one input run through both adapters.
type parityCase struct {
	name string
	tool string
	args map[string]any
	// want is the error code both must give; "" means both succeed.
	want string
}

func TestParityCases(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		member := e.token("default", "parity", "member")
		byName, _ := e.toolset(t, member)
		md := func(name string) string {
			return "---\nname: " + name + "\ndescription: Parity case " + name + "\n---\nBody\n"
		}
		// Each case runs twice, through REST then the toolset, on its own
		// names, so the second run meets the same state as the first.
		cases := func(suffix string) []parityCase {
			n := func(s string) string { return s + suffix }
			return []parityCase{
				{"create", "skills_create", map[string]any{"files": map[string]string{"SKILL.md": md(n("parity"))}}, ""},
				{"create again", "skills_create", map[string]any{"files": map[string]string{"SKILL.md": md(n("parity"))}}, skilld.ECONFLICT},
				{"create without SKILL.md", "skills_create", map[string]any{"files": map[string]string{"README.md": "x"}}, skilld.EINVALID},
				{"create with a bad name", "skills_create", map[string]any{"files": map[string]string{"SKILL.md": md("Bad_Name")}}, skilld.EINVALID},
				{"create with an unsafe path", "skills_create", map[string]any{"files": map[string]string{"SKILL.md": md(n("unsafe")), "../x": "y"}}, skilld.EINVALID},
				{"create with an unknown argument", "skills_create", map[string]any{"files": map[string]string{"SKILL.md": md(n("x"))}, "color": "red"}, skilld.EINVALID},
				{"create with a wrong type", "skills_create", map[string]any{"files": "SKILL.md"}, skilld.EINVALID},
				{"get", "skills_get", map[string]any{"id": n("parity")}, ""},
				{"get missing", "skills_get", map[string]any{"id": "no-such-skill"}, skilld.ENOTFOUND},
				{"list", "skills_list", map[string]any{"search": "parity", "page_size": 10}, ""},
				{"list too large a page", "skills_list", map[string]any{"page_size": 1000}, skilld.EINVALID},
				{"list a bad source type", "skills_list", map[string]any{"source_type": "ftp"}, skilld.EINVALID},
				{"rename invalid", "skills_edit_metadata", map[string]any{"id": n("parity"), "name": "Not Valid"}, skilld.EINVALID},
				{"describe", "skills_edit_metadata", map[string]any{"id": n("parity"), "description": "Changed"}, ""},
				{"edit content on a stale version", "skills_edit_content", map[string]any{"id": n("parity"), "files": map[string]string{"SKILL.md": md(n("parity"))}, "expected_version": 7}, skilld.ECONFLICT},
				{"edit content", "skills_edit_content", map[string]any{"id": n("parity"), "files": map[string]string{"SKILL.md": md(n("parity")), "more.md": "x"}, "expected_version": 2}, ""}, // "describe" made version 2
				{"list files", "skills_list_files", map[string]any{"id": n("parity"), "version": 1}, ""},
				{"get a missing file", "skills_get_file", map[string]any{"id": n("parity"), "path": "nope.md"}, skilld.ENOTFOUND},
				{"get a file", "skills_get_file", map[string]any{"id": n("parity"), "path": "more.md"}, ""},
				{"install a missing item", "skills_install", map[string]any{"item": "acme/nothing"}, skilld.ENOTFOUND},
				{"archive that is not one", "skills_create_from_archive", map[string]any{"archive": []byte("garbage")}, skilld.EINVALID},
				{"import from elsewhere", "skills_import_github", map[string]any{"github_url": "https://gitlab.com/o/r"}, skilld.EINVALID},
				{"delete", "skills_delete", map[string]any{"id": n("parity")}, ""},
				{"delete again", "skills_delete", map[string]any{"id": n("parity")}, skilld.ENOTFOUND},
			}
		}
		for _, c := range cases("-rest") {
			if got := e.restCall(t, member, c.tool, c.args); got != c.want {
				t.Errorf("REST %s: code %q, want %q", c.name, got, c.want)
			}
		}
		for _, c := range cases("-tool") {
			raw, _ := json.Marshal(c.args)
			_, err := byName[c.tool].Call(t.Context(), raw)
			if got := skilld.ErrorCode(err); got != c.want {
				t.Errorf("tool %s: code %q (%v), want %q", c.name, got, err, c.want)
			}
		}
	})
}

// restCall sends a tool's arguments to the operation's REST route, placing
// each argument where the route takes it, and returns the error code
// ("" on success).
func (e *testEnv) restCall(t *testing.T, token, toolName string, args map[string]any) string {
	t.Helper()
	var op service.Operation
	for _, o := range service.Operations() {
		if o.Tool == toolName {
			op = o
		}
	}
	rt, _ := routeFor(op.Name)
	path := strings.Replace(rt.Pattern, "{ws}", "default", 1)
	query := url.Values{}
	body := map[string]any{}
	for k, v := range args {
		switch {
		case strings.Contains(path, "{"+k+"}"):
			path = strings.Replace(path, "{"+k+"}", url.PathEscape(v.(string)), 1)
		case strings.Contains(path, "{"+k+"...}"):
			path = strings.Replace(path, "{"+k+"...}", v.(string), 1)
		case rt.Method == http.MethodGet || rt.Method == http.MethodDelete:
			b, _ := json.Marshal(v)
			query.Set(k, strings.Trim(string(b), `"`))
		default:
			body[k] = v
		}
	}
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	var payload any
	if rt.Method != http.MethodGet && rt.Method != http.MethodDelete {
		payload = body
	}
	if archive, ok := args["archive"].([]byte); ok {
		payload = archive
	}
	r := e.request(rt.Method, path, token, payload)
	if r.status < 300 {
		return ""
	}
	return r.errorCode(t)
}
