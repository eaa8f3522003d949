package lint

import (
	"bytes"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// references are what SKILL.md, and the files it leads to, mention.
type references struct {
	*fileSet
	// direct are the files SKILL.md mentions, with the line of the first
	// mention.
	direct map[string]int
	// texts are the text files reached and what each mentions, by path.
	texts    map[string]string
	mentions map[string]mentions
	// order is the text files reached, SKILL.md first, in the order
	// they were reached.
	order []string
	// reached are the files SKILL.md leads to through any chain of
	// mentions (imports included).
	reached map[string]bool
	// named are the files some text reached mentions by path, imported
	// those some text imports as a module.
	named, imported map[string]bool
	// covered are the folders SKILL.md mentions as a whole, coveredAny
	// those any file reached does.
	covered, coveredAny []string
}

// findReferences follows the mentions from SKILL.md through every text
// file they reach.
func findReferences(s *skill) *references {
	paths := make([]string, 0, s.pkg.Len())
	for _, e := range s.pkg.Entries() {
		paths = append(paths, e.Path)
	}
	r := &references{fileSet: newFileSet(paths), direct: map[string]int{},
		texts: map[string]string{}, mentions: map[string]mentions{}, reached: map[string]bool{s.file: true}, named: map[string]bool{}, imported: map[string]bool{}}
	queue := []string{s.file}
	for len(queue) > 0 {
		from := queue[0]
		queue = queue[1:]
		f, _ := s.pkg.File(from)
		if !isText(f.Data) {
			continue
		}
		text := string(f.Data)
		m := mentionsIn(from, text, r.fileSet)
		r.texts[from], r.mentions[from] = text, m
		r.order = append(r.order, from)
		for _, d := range m.dirs {
			if from == s.file {
				r.covered = append(r.covered, d.path)
			}
			r.coveredAny = append(r.coveredAny, d.path)
		}
		for _, fm := range m.files {
			if from == s.file {
				r.direct[fm.path] = fm.line
			}
			if fm.kind == byPath {
				r.named[fm.path] = true
			} else {
				r.imported[fm.path] = true
			}
			if !r.reached[fm.path] {
				r.reached[fm.path] = true
				queue = append(queue, fm.path)
			}
		}
	}
	return r
}

// known reports whether SKILL.md mentions p, itself or a folder holding it.
func (r *references) known(p string, skillFile string) bool {
	if _, ok := r.direct[p]; ok || p == skillFile {
		return true
	}
	return under(p, r.covered)
}

// under reports whether p lies in one of dirs.
func under(p string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(p, d+"/") })
}

func isText(b []byte) bool { return utf8.Valid(b) && !bytes.ContainsRune(b, 0) }

// isDocument reports whether a file is read by the model rather than run:
// the kind of file whose own references a model must follow.
func isDocument(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown", ".mdx", ".txt", ".rst", ".adoc":
		return true
	}
	return false
}
