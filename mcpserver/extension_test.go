package mcpserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilld/skilld/service"
)

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func readDir(t *testing.T, cs *mcp.ClientSession, uri, cursor string) (*directoryReadResult, error) {
	t.Helper()
	return mcp.CallCustomMethod[*directoryReadParams, *directoryReadResult](t.Context(), cs, methodDirectoryRead, &directoryReadParams{URI: uri, Cursor: cursor})
}

// dirEntry is what a test compares of a listed child.
func dirEntry(r *mcp.Resource) string {
	s := r.URI + " " + r.MIMEType
	if r.MIMEType != mimeDirectory {
		s += fmt.Sprintf(" %d %v", r.Size, r.Meta[metaDigest])
	}
	return s
}

// resources/directory/read lists the direct children of a skill's root
// and of each of its folders, files with their resource metadata and
// folders as inode/directory; the listed URIs read back. Anything else is
// -32602, a withheld skill's directories included.
func TestMCPDirectoryRead(t *testing.T) {
	f := newFixture(t)
	files := map[string]string{
		"SKILL.md":                     "---\nname: invoices\ndescription: Writes invoices.\n---\nPick a template from templates/.\n",
		"templates/invoice.md":         "# Invoice\n",
		"templates/regional/eu.md":     "# EU invoice\n",
		"templates/regional/notes.txt": "VAT.\n",
		"scripts/total.py":             "print(1)\n",
		"assets/logo.svg":              "<svg/>\n",
	}
	if _, err := f.svc.CreateSkill(t.Context(), f.admin, service.CreateSkillParams{Files: files}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, f, f.viewer, Options{})
	ext, _ := cs.InitializeResult().Capabilities.Extensions[ExtensionSkills].(map[string]any)
	if ext["directoryRead"] != true {
		t.Errorf("the extension's settings %v do not declare directoryRead", cs.InitializeResult().Capabilities.Extensions)
	}

	want := map[string][]string{
		"skill://invoices": {
			fmt.Sprintf("skill://invoices/SKILL.md text/markdown %d %s", len(files["SKILL.md"]), digestOf(files["SKILL.md"])),
			"skill://invoices/assets " + mimeDirectory,
			"skill://invoices/scripts " + mimeDirectory,
			"skill://invoices/templates " + mimeDirectory,
		},
		"skill://invoices/templates": {
			"skill://invoices/templates/invoice.md text/markdown 10 " + digestOf(files["templates/invoice.md"]),
			"skill://invoices/templates/regional " + mimeDirectory,
		},
		"skill://invoices/templates/regional": {
			"skill://invoices/templates/regional/eu.md text/markdown 13 " + digestOf(files["templates/regional/eu.md"]),
			"skill://invoices/templates/regional/notes.txt text/plain 5 " + digestOf(files["templates/regional/notes.txt"]),
		},
		"skill://invoices/assets": {"skill://invoices/assets/logo.svg image/svg+xml 7 " + digestOf(files["assets/logo.svg"])},
	}
	for uri, entries := range want {
		res, err := readDir(t, cs, uri, "")
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		var got []string
		for _, r := range res.Resources {
			got = append(got, dirEntry(r))
			if r.MIMEType == mimeDirectory {
				continue
			}
			// Every listed file reads back as what the listing says.
			rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: r.URI})
			if err != nil || len(rr.Contents) != 1 || digestOf(rr.Contents[0].Text) != r.Meta[metaDigest] {
				t.Errorf("reading %s back: %+v %v", r.URI, rr, err)
			}
		}
		if !slices.Equal(got, entries) || res.ResultType != "complete" || res.NextCursor != "" {
			t.Errorf("%s:\n got %q\nwant %q (%q, next %q)", uri, got, entries, res.ResultType, res.NextCursor)
		}
	}

	for uri, msg := range map[string]string{
		"skill://invoices/SKILL.md":   "is a file, not a directory resource",
		"skill://invoices/templates/": "without a trailing slash",
		"skill://invoices/nothing":    "is not a directory of the skill",
		"skill://invoices/templ":      "is not a directory of the skill",
		"skill://nope":                `no skill "nope" is served here`,
		"skill://risky":               `no skill "risky" is served here`,
		"file:///etc":                 "is not a skill directory URI",
		"":                            "is not a skill directory URI",
	} {
		_, err := readDir(t, cs, uri, "")
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, msg) {
			t.Errorf("%q: %v, want -32602 saying %q", uri, err, msg)
		}
	}
	if _, err := readDir(t, cs, "skill://invoices", "x"); err == nil || !strings.Contains(err.Error(), "invalid cursor") {
		t.Errorf("a bad cursor: %v", err)
	}
}

// A directory longer than a page comes in pages, each child once.
func TestMCPDirectoryReadPages(t *testing.T) {
	f := newFixture(t)
	files := map[string]string{"SKILL.md": "---\nname: many\ndescription: Many files.\n---\nSee data/.\n"}
	for i := range directoryPageSize + 30 {
		files[fmt.Sprintf("data/%03d.csv", i)] = "a,b\n"
	}
	if _, err := f.svc.CreateSkill(t.Context(), f.admin, service.CreateSkillParams{Files: files}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, f, f.viewer, Options{})
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		res, err := readDir(t, cs, "skill://many/data", cursor)
		if err != nil || pages > 2 {
			t.Fatalf("page %d: %v", pages, err)
		}
		for _, r := range res.Resources {
			got = append(got, r.URI)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
		if len(res.Resources) != directoryPageSize {
			t.Errorf("a page before the last has %d children", len(res.Resources))
		}
	}
	if len(got) != directoryPageSize+30 || !slices.IsSorted(got) || got[0] != "skill://many/data/000.csv" {
		t.Errorf("%d children, sorted %v, first %s", len(got), slices.IsSorted(got), got[0])
	}
}

// skill://index.json is a discovery index of exactly the skills the
// activate_skill enum offers, under the same names as their resources, each
// with the digest of its SKILL.md as read.
func TestMCPIndex(t *testing.T) {
	f := newFixture(t)
	cs := connect(t, f, f.viewer, Options{})
	rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: indexURI})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].MIMEType != "application/json" {
		t.Fatalf("reading the index: %+v %v", rr, err)
	}
	if rr.TTLMs != skillsTTL || rr.CacheScope != "private" {
		t.Errorf("index cache hints %d %q", rr.TTLMs, rr.CacheScope)
	}
	var idx SkillIndex
	if err := json.Unmarshal([]byte(rr.Contents[0].Text), &idx); err != nil {
		t.Fatal(err)
	}
	if idx.Schema != service.DiscoverySchema {
		t.Errorf("$schema %q", idx.Schema)
	}
	var names []string
	for _, e := range idx.Skills {
		names = append(names, e.Name)
		if e.Type != "skill-md" || e.URL != "skill://"+e.Name+"/SKILL.md" || e.Version != 1 || e.Description == "" {
			t.Errorf("entry %+v", e)
		}
		md, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: e.URL})
		if err != nil || digestOf(md.Contents[0].Text) != e.Digest {
			t.Errorf("%s does not read as digest %s: %v", e.URL, e.Digest, err)
		}
	}
	if enum := enumOf(t, cs); !slices.Equal(names, enum) || !slices.Equal(names, skillMDNames(t, cs)) {
		t.Errorf("index %v, activate_skill enum %v, SKILL.md resources %v", names, enum, skillMDNames(t, cs))
	}
}

// enumOf returns the activate_skill enum.
func enumOf(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tools.CacheScope != "private" {
		t.Errorf("tools/list cache scope %q", tools.CacheScope)
	}
	for _, tl := range tools.Tools {
		if tl.Name == toolActivateSkill {
			var schema struct {
				Properties map[string]struct{ Enum []string } `json:"properties"`
			}
			b, _ := json.Marshal(tl.InputSchema)
			if err := json.Unmarshal(b, &schema); err != nil {
				t.Fatal(err)
			}
			return schema.Properties["skill_name"].Enum
		}
	}
	t.Fatal("no activate_skill")
	return nil
}

// skillMDNames returns the names of the SKILL.md resources, checking each
// one's URI says the same name.
func skillMDNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range res.Resources {
		if strings.HasSuffix(r.URI, "/SKILL.md") {
			if r.URI != "skill://"+r.Name+"/SKILL.md" {
				t.Errorf("resource %s is named %q", r.URI, r.Name)
			}
			names = append(names, r.Name)
		}
	}
	slices.Sort(names)
	return names
}
