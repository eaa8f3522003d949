package lint

import (
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A file mentions a package file when its text holds the file's path:
// root-relative ("scripts/run.sh", also after "./" or any folder prefix
// such as "skills/pdf/scripts/run.sh"), relative to the mentioning file's
// folder, as the target of a Markdown link, or as a module a Python or
// JavaScript import names. A folder written as a whole ("scripts/",
// "./scripts", `scripts` in backticks, or a link to it) mentions every
// file under it.

// mentionKind says how a text mentions a file.
type mentionKind int

const (
	byPath   mentionKind = iota // its path, in prose, code or a link
	byImport                    // an import of it as a module
)

// mention is one path a text mentions, at a 1-based line. written is the
// path as the text wrote it, for a mention in another case than the file's.
type mention struct {
	path    string
	line    int
	kind    mentionKind
	written string
}

// mentions is what one text mentions.
type mentions struct {
	files, dirs []mention
	// miscased are files written in another case than theirs
	// ("REFERENCE.md" for reference.md): found on macOS and Windows,
	// not on Linux, where sandboxes run.
	miscased []mention
	// broken are relative Markdown link targets the package does not
	// hold.
	broken []mention
}

// lineIndex maps byte offsets of a text to line numbers.
type lineIndex struct{ starts []int }

func newLineIndex(text string) *lineIndex {
	starts := []int{0}
	for i := range len(text) {
		if text[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return &lineIndex{starts: starts}
}

func (l *lineIndex) line(offset int) int {
	return sort.Search(len(l.starts), func(i int) bool { return l.starts[i] > offset })
}

var (
	// markdownLink captures the target of a Markdown link or image.
	markdownLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)`)
	// pythonImport captures the modules of "from M import …" and
	// "import M, N".
	pythonImport = regexp.MustCompile(`(?m)^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import\b|import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*))`)
	// jsImport captures the relative specifiers of require, import and
	// export … from.
	jsImport = regexp.MustCompile(`(?:require\(\s*|\bfrom\s+|\bimport\s*\(?\s*)['"](\.{1,2}/[^'"]+)['"]`)
)

// pathRune reports whether r may be part of a path name (not a separator).
func pathRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_' || r == '-' || r == '.'
}

// tokenAt reports whether the path p written at text[i:] stands alone:
// not the tail of a longer name (a folder prefix is allowed) nor the head
// of one ("run.sh.bak"; a sentence's final period is allowed).
func tokenAt(text string, i int, p string) bool {
	if i > 0 {
		r, _ := utf8.DecodeLastRuneInString(text[:i])
		if pathRune(r) {
			return false
		}
	}
	rest := text[i+len(p):]
	r, size := utf8.DecodeRuneInString(rest)
	switch {
	case rest == "":
		return true
	case r == '.':
		next, _ := utf8.DecodeRuneInString(rest[size:])
		return !unicode.IsLetter(next) && !unicode.IsNumber(next)
	}
	return !pathRune(r) && r != '/'
}

// folderAt is tokenAt for a folder written with its final slash: nothing
// of a path may follow it, else it is a file's path and not the folder's.
func folderAt(text string, i int, dir string) bool {
	if i > 0 {
		r, _ := utf8.DecodeLastRuneInString(text[:i])
		if pathRune(r) {
			return false
		}
	}
	r, _ := utf8.DecodeRuneInString(text[i+len(dir):])
	return !pathRune(r)
}

// anywhere accepts every occurrence, for patterns that carry their own
// delimiters.
func anywhere(string, int, string) bool { return true }

// mentionsIn returns what text, the content of the package file from,
// mentions of the package's files and folders, each once with its first
// line.
func mentionsIn(from, text string, files, dirs map[string]bool) mentions {
	var m mentions
	lines := newLineIndex(text)
	seen := map[string]bool{from: true}
	fromDir := path.Dir(from)
	addFile := func(p string, at int, kind mentionKind) {
		if !seen[p] {
			seen[p] = true
			m.files = append(m.files, mention{path: p, line: lines.line(at), kind: kind})
		}
	}
	addDir := func(d string, at int) {
		if !seen[d+"/"] {
			seen[d+"/"] = true
			m.dirs = append(m.dirs, mention{path: d, line: lines.line(at)})
		}
	}
	// resolve finds a path written in from: relative to its folder, as
	// Markdown and imports mean it, else to the skill's root, as skills
	// often write it.
	resolve := func(p string, at int, kind mentionKind) bool {
		for _, c := range []string{path.Join(fromDir, p), path.Clean("/" + p)[1:]} {
			if files[c] {
				addFile(c, at, kind)
				return true
			}
			if dirs[c] {
				addDir(c, at)
				return true
			}
		}
		return false
	}

	for _, l := range markdownLink.FindAllStringSubmatchIndex(text, -1) {
		target := text[l[2]:l[3]]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "#") {
			continue
		}
		target, _, _ = strings.Cut(target, "#")
		target, _, _ = strings.Cut(target, "?")
		if t, err := url.PathUnescape(target); err == nil {
			target = t
		}
		if target == "" || resolve(target, l[0], byPath) {
			continue
		}
		if f, ok := foldedFile(files, path.Join(fromDir, target)); ok {
			m.miscased = append(m.miscased, mention{path: f, line: lines.line(l[0]), written: target})
			addFile(f, l[0], byPath)
			continue
		}
		m.broken = append(m.broken, mention{path: target, line: lines.line(l[0]), written: target})
	}
	for _, l := range pythonImport.FindAllStringSubmatchIndex(text, -1) {
		var mods []string
		if l[2] >= 0 {
			mods = []string{strings.TrimLeft(text[l[2]:l[3]], ".")}
		} else {
			mods = strings.Split(text[l[4]:l[5]], ",")
		}
		for _, mod := range mods {
			// "a.b.C" may end in a name that is no module: try the
			// longest prefix that is one.
			parts := strings.Split(strings.TrimSpace(mod), ".")
			for n := len(parts); n > 0; n-- {
				p := strings.Join(parts[:n], "/")
				if p != "" && (resolve(p+".py", l[0], byImport) || resolve(p, l[0], byImport)) {
					break
				}
			}
		}
	}
	for _, l := range jsImport.FindAllStringSubmatchIndex(text, -1) {
		spec := text[l[2]:l[3]]
		for _, ext := range []string{"", ".js", ".mjs", ".cjs", ".ts", "/index.js"} {
			if files[path.Join(fromDir, spec+ext)] {
				addFile(path.Join(fromDir, spec+ext), l[0], byImport)
				break
			}
		}
	}

	lower := asciiLower(text)
	for f := range files {
		found := false
		for _, written := range writtenAs(f, fromDir) {
			if at := find(text, written, 0, tokenAt); at >= 0 {
				addFile(f, at, byPath)
				found = true
				break
			}
		}
		if found || seen[f] {
			continue
		}
		for _, written := range writtenAs(f, fromDir) {
			if at := find(lower, asciiLower(written), 0, tokenAt); at >= 0 {
				m.miscased = append(m.miscased, mention{path: f, line: lines.line(at), written: text[at : at+len(written)]})
				addFile(f, at, byPath)
				break
			}
		}
	}
	for d := range dirs {
		for _, written := range writtenAs(d, fromDir) {
			at := find(text, written+"/", 0, folderAt)
			if at < 0 {
				at = find(text, "./"+written, 0, tokenAt)
			}
			if at < 0 {
				at = find(text, "`"+written+"`", 0, anywhere)
			}
			if at >= 0 {
				addDir(d, at)
				break
			}
		}
	}
	for _, list := range [][]mention{m.files, m.dirs, m.miscased, m.broken} {
		sort.Slice(list, func(i, j int) bool { return list[i].path < list[j].path })
	}
	return m
}

// asciiLower lowers the ASCII letters of s only, so that offsets in the
// result are offsets in s (Unicode case mapping may change byte lengths).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// foldedFile returns the package file whose path equals p but for case.
func foldedFile(files map[string]bool, p string) (string, bool) {
	for f := range files {
		if strings.EqualFold(f, p) {
			return f, true
		}
	}
	return "", false
}

// writtenAs returns how a file in fromDir may write the path p: as it is,
// and relative to fromDir when p is under it.
func writtenAs(p, fromDir string) []string {
	if fromDir != "." {
		if rel, ok := strings.CutPrefix(p, fromDir+"/"); ok {
			return []string{p, rel}
		}
	}
	return []string{p}
}

// find returns the offset of the first occurrence of s in text at or
// after from that ok accepts, or -1.
func find(text, s string, from int, ok func(text string, i int, s string) bool) int {
	for from <= len(text) {
		i := strings.Index(text[from:], s)
		if i < 0 {
			return -1
		}
		if ok(text, from+i, s) {
			return from + i
		}
		from += i + 1
	}
	return -1
}
