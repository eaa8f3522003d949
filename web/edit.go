package web

import (
	"archive/zip"
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
)

type editFile struct {
	Path    string
	Content string
}

type editData struct {
	Skill   *service.SkillView
	Files   []editFile
	Binary  []skilld.PackageFile
	Message string
	Error   string
}

// editPage shows the editor: one textarea per text file of the current
// version.
func (ui *UI) editPage(w http.ResponseWriter, r *http.Request, s *session) {
	ui.showEditor(w, r, s, http.StatusOK, "")
}

func (ui *UI) showEditor(w http.ResponseWriter, r *http.Request, s *session, status int, msg string) {
	sk, files, binary, err := ui.currentFiles(r, s)
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	ui.render(w, r, s, status, "edit", "Edit "+sk.Name, editData{Skill: sk, Files: files, Binary: binary, Error: msg})
}

// currentFiles reads the current version's files through the service,
// split into text (editable) and binary (kept as they are).
func (ui *UI) currentFiles(r *http.Request, s *session) (*service.SkillView, []editFile, []skilld.PackageFile, error) {
	ctx := r.Context()
	sk, err := ui.svc.GetSkill(ctx, s.actor, service.GetSkillParams{SkillRef: service.SkillRef{ID: r.PathValue("id")}})
	if err != nil {
		return nil, nil, nil, err
	}
	list, err := ui.svc.ListSkillFiles(ctx, s.actor, service.ListSkillFilesParams{SkillRef: service.SkillRef{ID: sk.ID}, Version: sk.Version})
	if err != nil {
		return nil, nil, nil, err
	}
	var text []editFile
	var binary []skilld.PackageFile
	for _, f := range list.Files {
		_, data, err := ui.readFile(r, s, sk.ID, f.Path, sk.Version)
		if err != nil {
			return nil, nil, nil, err
		}
		if isText(data) {
			text = append(text, editFile{Path: f.Path, Content: string(data)})
		} else {
			binary = append(binary, f)
		}
	}
	return sk, text, binary, nil
}

// edit saves the edited files as a new version (skills.edit_content). A
// textarea emptied removes its file; new_path adds one. A skill with
// binary files is saved as an archive of the edited text and its binary
// files (skills.edit_from_archive), because the text form of the edit
// would drop them.
func (ui *UI) edit(w http.ResponseWriter, r *http.Request, s *session) {
	sk, _, binary, err := ui.currentFiles(r, s)
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	files := map[string]string{}
	for k, vs := range r.PostForm {
		if p, ok := strings.CutPrefix(k, "file:"); ok && len(vs) > 0 && strings.TrimSpace(vs[0]) != "" {
			files[p] = normalizeNewlines(vs[0])
		}
	}
	if p := strings.TrimSpace(r.PostFormValue("new_path")); p != "" {
		files[p] = normalizeNewlines(r.PostFormValue("new_content"))
	}
	var expected *int
	if v, err := strconv.Atoi(r.PostFormValue("version")); err == nil && v > 0 {
		expected = &v
	}
	msg := r.PostFormValue("message")
	ref := service.SkillRef{ID: sk.ID}
	if len(binary) == 0 {
		_, err = ui.svc.ReplaceSkillFiles(r.Context(), s.actor, service.ReplaceSkillFilesParams{SkillRef: ref, Files: files, ExpectedVersion: expected, Message: msg})
	} else {
		var archive []byte
		archive, err = ui.archiveOf(r, s, sk, files, binary)
		if err == nil {
			_, err = ui.svc.ReplaceSkillFilesFromArchive(r.Context(), s.actor, service.ReplaceSkillFilesFromArchiveParams{SkillRef: ref, Archive: archive, ExpectedVersion: expected, Message: msg})
		}
	}
	if err != nil {
		ui.showEditor(w, r, s, status(err), errorText(err))
		return
	}
	http.Redirect(w, r, Prefix+"skills/"+sk.ID, http.StatusSeeOther)
}

// normalizeNewlines undoes the CRLF that browsers send textarea text
// with, so an unchanged file stays byte for byte the same.
func normalizeNewlines(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// archiveOf zips the edited text files with the current binary ones.
func (ui *UI) archiveOf(r *http.Request, s *session, sk *service.SkillView, text map[string]string, binary []skilld.PackageFile) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(p string, data []byte, exec bool) error {
		h := &zip.FileHeader{Name: p, Method: zip.Deflate}
		h.SetMode(0o644)
		if exec {
			h.SetMode(0o755)
		}
		fw, err := zw.CreateHeader(h)
		if err == nil {
			_, err = fw.Write(data)
		}
		return err
	}
	for p, c := range text {
		if err := add(p, []byte(c), false); err != nil {
			return nil, err
		}
	}
	for _, f := range binary {
		if _, ok := text[f.Path]; ok {
			continue
		}
		_, data, err := ui.readFile(r, s, sk.ID, f.Path, sk.Version)
		if err != nil {
			return nil, err
		}
		if err := add(f.Path, data, f.Exec); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
