package mcpserver

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilld/skilld/service"
)

// A skill stored under a name its SKILL.md does not say (an upload with
// --name, a rename) is published under its stored name everywhere: the
// activate_skill enum and activation, resources/list and resources/read,
// skills/list and skills/get, resources/directory/read, skill://index.json
// and the discovery archive. Its SKILL.md is served with the frontmatter
// saying that name and description, and every digest and size stated for
// it is that of the bytes served.
func TestMCPRenamedSkillIsConsistent(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	creator := "---\nname: skill-creator\ndescription: Creates skills.\nlicense: Apache-2.0\n---\n# Skill creator\n\nStart from SKILL.md.\n"
	if _, err := f.svc.CreateSkill(ctx, f.admin, service.CreateSkillParams{Files: map[string]string{"SKILL.md": creator},
		SkillOptions: service.SkillOptions{Name: "anthropic-skill-creator"}}); err != nil {
		t.Fatal(err)
	}
	newName, newDesc := "go-lint", "Lints Go code, renamed."
	if _, err := f.svc.UpdateSkillMetadata(ctx, f.admin, service.UpdateSkillMetadataParams{SkillRef: service.SkillRef{ID: "lint"},
		Name: &newName, Description: &newDesc}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, f, f.viewer, Options{})

	enum := enumOf(t, cs)
	if strings.Join(enum, " ") != "anthropic-skill-creator commit-message go-lint" || strings.Join(skillMDNames(t, cs), " ") != strings.Join(enum, " ") {
		t.Errorf("activate_skill enum %v, SKILL.md resources %v", enum, skillMDNames(t, cs))
	}
	listed := map[string]*mcp.Resource{}
	resources, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resources.Resources {
		listed[r.URI] = r
	}
	entries := skillEntries(t, cs)
	index := indexEntries(t, cs)
	discovery, err := f.svc.DiscoveryIndex(ctx, f.viewer, service.DiscoveryIndexParams{})
	if err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct{ name, slug, description string }{
		{"anthropic-skill-creator", "anthropic-skill-creator", "Creates skills."},
		{newName, "lint", newDesc},
	} {
		uri := "skill://" + c.name + "/SKILL.md"
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		md := rr.Contents[0].Text
		fm, err := frontmatter([]byte(md))
		if err != nil || fm["name"] != c.name || fm["description"] != c.description {
			t.Errorf("%s is served as %q (%v)", uri, md, err)
		}
		digest, size := digestOf(md), int64(len(md))

		if r := listed[uri]; r == nil || r.Name != c.name || r.Description != c.description || r.Meta[metaDigest] != digest || r.Size != size {
			t.Errorf("resources/list has %s as %+v; served %s, %d bytes", uri, r, digest, size)
		}
		out, isErr := call(t, cs, toolActivateSkill, map[string]any{"skill_name": c.name})
		if isErr || !strings.HasPrefix(out, `<skill_content name="`+c.name+`">`) || !strings.Contains(out, md) {
			t.Errorf("activate_skill %s:\n%s", c.name, out)
		}
		if out, isErr := call(t, cs, toolReadSkillFile, map[string]any{"skill_name": c.name, "path": "SKILL.md"}); isErr || out != md {
			t.Errorf("read_skill_file %s: %q", c.name, out)
		}

		for method, e := range map[string]SkillEntry{"skills/list": entries[uri], "skills/get": skillGet(t, cs, uri)} {
			if e.URI != uri || e.Frontmatter["name"] != c.name || e.Frontmatter["description"] != c.description || len(e.Resources) == 0 ||
				e.Resources[0].URI != uri || e.Resources[0].Digest != digest || e.Resources[0].Size != size {
				t.Errorf("%s entry of %s: %+v; served %s, %d bytes", method, uri, e, digest, size)
			}
		}
		if e := index[c.name]; e.URL != uri || e.Digest != digest || e.Description != c.description {
			t.Errorf("index entry %+v; served %s", e, digest)
		}
		root, err := readDir(t, cs, "skill://"+c.name, "")
		if err != nil || root.Resources[0].URI != uri || root.Resources[0].Meta[metaDigest] != digest || root.Resources[0].Size != size {
			t.Errorf("directory read of %s: %+v %v", c.name, root, err)
		}

		// The discovery index names the skill the same, and its archive's
		// SKILL.md says so too.
		var d *service.DiscoveryEntry
		for i := range discovery.Skills {
			if discovery.Skills[i].Name == c.name {
				d = &discovery.Skills[i]
			}
		}
		if d == nil || d.URL != c.slug+"/"+service.DiscoveryArchiveName || d.Description != c.description {
			t.Fatalf("discovery index %+v has no entry %q", discovery.Skills, c.name)
		}
		arch, err := f.svc.SkillArchive(ctx, f.viewer, service.SkillArchiveParams{SkillRef: service.SkillRef{ID: c.slug}})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(arch.Body)
		arch.Body.Close()
		if arch.Name != c.name || arch.Digest != d.Digest || digestOf(string(data)) != d.Digest {
			t.Errorf("archive %s: name %q, digest %s, index %s", c.slug, arch.Name, arch.Digest, d.Digest)
		}
		if got := zipFile(t, data, "SKILL.md"); got != md {
			t.Errorf("the archive's SKILL.md %q differs from the one served over MCP %q", got, md)
		}
	}

	// The names the files once said are nowhere.
	for _, old := range []string{"skill-creator", "lint"} {
		if out, isErr := call(t, cs, toolActivateSkill, map[string]any{"skill_name": old}); !isErr || !strings.Contains(out, "not_found") {
			t.Errorf("activate_skill %s: %s", old, out)
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://" + old + "/SKILL.md"}); err == nil {
			t.Errorf("skill://%s/SKILL.md reads", old)
		}
	}
}

func skillEntries(t *testing.T, cs *mcp.ClientSession) map[string]SkillEntry {
	t.Helper()
	sl, err := mcp.CallCustomMethod[*skillsListParams, *skillsListResult](t.Context(), cs, methodSkillsList, &skillsListParams{})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]SkillEntry{}
	for _, e := range sl.Skills {
		m[e.URI] = e
	}
	return m
}

func skillGet(t *testing.T, cs *mcp.ClientSession, uri string) SkillEntry {
	t.Helper()
	sg, err := mcp.CallCustomMethod[*skillsGetParams, *skillsGetResult](t.Context(), cs, methodSkillsGet, &skillsGetParams{URI: uri})
	if err != nil {
		t.Fatalf("skills/get %s: %v", uri, err)
	}
	return sg.Skill
}

func indexEntries(t *testing.T, cs *mcp.ClientSession) map[string]SkillIndexEntry {
	t.Helper()
	rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: indexURI})
	if err != nil {
		t.Fatal(err)
	}
	var idx SkillIndex
	if err := json.Unmarshal([]byte(rr.Contents[0].Text), &idx); err != nil {
		t.Fatal(err)
	}
	m := map[string]SkillIndexEntry{}
	for _, e := range idx.Skills {
		m[e.Name] = e
	}
	return m
}

func zipFile(t *testing.T, archive []byte, name string) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	t.Fatalf("the archive has no %s", name)
	return ""
}
