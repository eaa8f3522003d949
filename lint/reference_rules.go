package lint

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// checkRefDepth finds documents SKILL.md references that send the model
// to further documents SKILL.md does not name: a model reading a nested
// reference may preview it (the first lines) rather than read it whole,
// and miss what it points to. Scripts a reference says to run are not
// read, so they do not count.
func checkRefDepth(s *skill) []Finding {
	var out []Finding
	for _, doc := range s.refs.order {
		if _, ok := s.refs.direct[doc]; !ok || !isDocument(doc) {
			continue
		}
		for _, m := range s.refs.mentions[doc].files {
			if !isDocument(m.path) || s.refs.known(m.path, s.file) {
				continue
			}
			out = append(out, Finding{File: doc, Line: m.line, Message: fmt.Sprintf(
				"%s, which %s references, references %s, which %s does not: a model may read only part of a nested reference; link %s from %s directly",
				doc, s.file, m.path, s.file, m.path, s.file)})
		}
	}
	return out
}

// checkRefBroken finds links to files the package does not hold, and paths
// written in another case than the file's.
func checkRefBroken(s *skill) []Finding {
	var out []Finding
	for _, from := range s.refs.order {
		m := s.refs.mentions[from]
		for _, b := range m.broken {
			out = append(out, Finding{File: from, Line: b.line, Message: fmt.Sprintf(
				"%s links to %s, which the package does not hold", from, b.written)})
		}
		for _, c := range m.miscased {
			out = append(out, Finding{File: from, Line: c.line, Message: fmt.Sprintf(
				"%s names %s, but the file is %s: paths are case-sensitive where skills run (Linux sandboxes); write %s",
				from, c.written, c.path, c.path)})
		}
	}
	return out
}

// isAside reports whether a file is in the package for people or tools
// rather than for the model to be told of: licenses, Python package
// markers.
func isAside(p string) bool {
	if path.Base(p) == "__init__.py" {
		return true
	}
	switch strings.ToUpper(strings.TrimSuffix(path.Base(p), path.Ext(p))) {
	case "LICENSE", "LICENCE", "COPYING", "NOTICE":
		return true
	}
	return false
}

func checkUnreferenced(s *skill) []Finding {
	r := s.refs
	var missing []string
	isMissing := map[string]bool{}
	for p := range r.files {
		if !r.reached[p] && !isAside(p) && !under(p, r.coveredAny) {
			missing = append(missing, p)
			isMissing[p] = true
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	// A folder nothing mentions any file of is one finding, not one a
	// file: the outermost such folder.
	var dirs []string
	for d := range r.dirs {
		dirs = append(dirs, d)
	}
	slices.SortFunc(dirs, func(a, b string) int {
		if c := strings.Count(a, "/") - strings.Count(b, "/"); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var out []Finding
	reported := map[string]bool{}
	for _, d := range dirs {
		var files []string
		all := true
		for p := range r.files {
			if strings.HasPrefix(p, d+"/") && !isAside(p) {
				files = append(files, p)
				all = all && isMissing[p]
			}
		}
		if !all || len(files) < 2 || reported[files[0]] {
			continue
		}
		for _, p := range files {
			reported[p] = true
		}
		out = append(out, Finding{File: d + "/", Message: fmt.Sprintf(
			"%s/ (%d files) is mentioned nowhere: neither %s nor a file it references tells the model it exists or when to use it; mention the folder or its files in %s",
			d, len(files), s.file, s.file)})
	}
	for _, p := range missing {
		if !reported[p] {
			out = append(out, Finding{File: p, Message: fmt.Sprintf(
				"%s is mentioned nowhere: neither %s nor a file it references tells the model it exists or when to use it; mention it in %s, or leave it out of the package",
				p, s.file, s.file)})
		}
	}
	return out
}
