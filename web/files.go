package web

import (
	"fmt"
	"html/template"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/versiondiff"
)

// Display limits that keep a page under 100 KB: highlighting roughly
// triples the size of the text it marks up. Longer files are cut, with
// the download link for the rest.
const (
	maxShownFile = 24 << 10
	maxShownDiff = 40 << 10
	// maxShownHTML is the markup budget of a highlighted file.
	maxShownHTML = 80 << 10
	// diffLineCost is the markup around each diff line.
	diffLineCost = 40
	// maxReadFile bounds what is read of one file (the package limit).
	maxReadFile = 10 << 20
)

type fileData struct {
	Skill     *service.SkillView
	Path      string
	Version   int
	Size      int64
	Text      bool
	Cut       bool
	Highlight template.HTML
	Raw       string
}

// readFile reads one file of a version through the service
// (skills.get_file).
func (ui *UI) readFile(r *http.Request, s *session, id, p string, v int) (*service.SkillFile, []byte, error) {
	f, err := ui.svc.GetSkillFile(r.Context(), s.actor, service.GetSkillFileParams{SkillRef: service.SkillRef{ID: id}, Path: p, Version: v})
	if err != nil {
		return nil, nil, err
	}
	defer f.Body.Close()
	data, err := io.ReadAll(io.LimitReader(f.Body, maxReadFile+1))
	return f, data, err
}

// isText is the UI's test for a file shown as text, the one its diffs use.
func isText(b []byte) bool { return versiondiff.IsText(b) }

// filePage shows one file, highlighted, or a download link for a binary
// file.
func (ui *UI) filePage(w http.ResponseWriter, r *http.Request, s *session) {
	v, err := version(r, "version")
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	sk, err := ui.svc.GetSkill(r.Context(), s.actor, service.GetSkillParams{SkillRef: service.SkillRef{ID: r.PathValue("id")}})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	if v == 0 {
		v = sk.Version
	}
	p := r.PathValue("path")
	f, data, err := ui.readFile(r, s, sk.ID, p, v)
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	d := fileData{Skill: sk, Path: p, Version: v, Size: f.Size, Text: isText(data)}
	if d.Text {
		src := data
		if len(src) > maxShownFile {
			src, d.Cut = src[:maxShownFile], true
		}
		// Markup can multiply the size of odd text (a file of "<"): halve
		// what is shown until the page fits.
		for {
			d.Highlight, d.Raw = ui.highlight(p, string(src))
			if len(d.Highlight)+len(d.Raw)*6 <= maxShownHTML || len(src) < 1024 {
				break
			}
			src, d.Cut = src[:len(src)/2], true
		}
	}
	ui.render(w, r, s, http.StatusOK, "file", p, d)
}

// highlight marks up source with chroma's classes; on failure the plain
// text is returned instead, for the template to escape.
func (ui *UI) highlight(name, src string) (template.HTML, string) {
	h, err := ui.highlighter()
	if err != nil {
		ui.opts.Logger.Error("highlighter", "err", err)
		return "", src
	}
	return h.highlight(name, src)
}

// rawFile downloads a file. It is always an attachment of a neutral
// type, so a skill's HTML or SVG never renders in the site's origin.
func (ui *UI) rawFile(w http.ResponseWriter, r *http.Request, s *session) {
	v, err := version(r, "version")
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	p := r.PathValue("path")
	_, data, err := ui.readFile(r, s, r.PathValue("id"), p, v)
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(p)}))
	w.Header().Set("Cache-Control", "no-store")
	w.Write(data)
}

type fileDiff struct {
	Path   string
	Status string
	Lines  []diffLine
	Binary bool
}

type diffLine struct {
	Class, Text string
}

type diffData struct {
	Skill    *service.SkillView
	From, To int
	Versions []int
	Files    []fileDiff
	Cut      bool
}

// diffPage shows a unified diff per changed file between two versions
// (skills.versions.get, skills.get_file).
func (ui *UI) diffPage(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	sk, err := ui.svc.GetSkill(ctx, s.actor, service.GetSkillParams{SkillRef: service.SkillRef{ID: r.PathValue("id")}})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	from, err := version(r, "from")
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	to, err := version(r, "to")
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	if to == 0 {
		to = sk.Version
	}
	if from == 0 {
		from = max(to-1, 1)
	}
	ref := service.SkillRef{ID: sk.ID}
	a, err := ui.svc.GetSkillVersion(ctx, s.actor, service.GetSkillVersionParams{SkillRef: ref, Number: from})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	b, err := ui.svc.GetSkillVersion(ctx, s.actor, service.GetSkillVersionParams{SkillRef: ref, Number: to})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	d := diffData{Skill: sk, From: from, To: to}
	for n := sk.Version; n >= 1; n-- {
		d.Versions = append(d.Versions, n)
	}
	shown := 0
	for _, c := range versiondiff.Changes(a.Files, b.Files) {
		p := c.Path
		fd := fileDiff{Path: p, Status: string(c.Status)}
		var ta, tb []byte
		if c.Status != versiondiff.Added {
			if _, ta, err = ui.readFile(r, s, sk.ID, p, from); err != nil {
				ui.fail(w, r, s, err)
				return
			}
		}
		if c.Status != versiondiff.Removed {
			if _, tb, err = ui.readFile(r, s, sk.ID, p, to); err != nil {
				ui.fail(w, r, s, err)
				return
			}
		}
		text, binary := versiondiff.Unified(fmt.Sprintf("a/%s@%d", p, from), fmt.Sprintf("b/%s@%d", p, to), ta, tb)
		if binary {
			fd.Binary = true
			d.Files = append(d.Files, fd)
			continue
		}
		for line := range strings.Lines(text) {
			cost := len(line) + diffLineCost + strings.Count(line, "<")*3 + strings.Count(line, "&")*4
			if shown+cost > maxShownDiff {
				d.Cut = true
				break
			}
			shown += cost
			fd.Lines = append(fd.Lines, diffLine{Class: lineClass(line), Text: strings.TrimRight(line, "\n")})
		}
		d.Files = append(d.Files, fd)
		if d.Cut {
			break
		}
	}
	ui.render(w, r, s, http.StatusOK, "diff", sk.Name+": changes", d)
}

func lineClass(l string) string {
	switch {
	case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		return "dh"
	case strings.HasPrefix(l, "@@"):
		return "dhunk"
	case strings.HasPrefix(l, "+"):
		return "dadd"
	case strings.HasPrefix(l, "-"):
		return "ddel"
	}
	return ""
}
