package lint

import (
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/skilld/skilld/pack"
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

// The patterns are compiled on first use, as are the rest of the
// package's: every command of the binary would otherwise compile them at
// start.
var (
	// markdownLink captures the target of a Markdown link or image.
	markdownLink = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\]\(\s*<?([^)\s>]+)`) })
	// pythonImport captures the modules of "from M import …" and
	// "import M, N".
	pythonImport = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import\b|import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*))`)
	})
	// jsImport captures the relative specifiers of require, import and
	// export … from.
	jsImport = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:require\(\s*|\bfrom\s+|\bimport\s*\(?\s*)['"](\.{1,2}/[^'"]+)['"]`)
	})
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

// fileSet is the files and folders of a package, indexed for the lookups
// of mentionsIn.
type fileSet struct {
	files, dirs map[string]bool
	// folded maps the lower-case form of each file's path to the path.
	folded map[string]string
	// odd are the files whose paths hold a character pathTokens ends a
	// token at.
	odd []string
}

func newFileSet(paths []string) *fileSet {
	fs := &fileSet{files: map[string]bool{}, dirs: map[string]bool{}, folded: map[string]string{}}
	for _, p := range paths {
		fs.files[p] = true
		fs.folded[strings.ToLower(p)] = p
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			fs.dirs[d] = true
		}
		if strings.ContainsFunc(p, func(r rune) bool { return !pathRune(r) && r != '/' }) {
			fs.odd = append(fs.odd, p)
		}
	}
	return fs
}

// lookup finds a path written in a file of folder fromDir among set:
// relative to that folder, else to the skill's root.
func (fs *fileSet) lookup(set map[string]bool, fromDir, p string) (string, bool) {
	if p == "" {
		return "", false
	}
	for _, c := range []string{path.Join(fromDir, p), path.Clean("/" + p)[1:]} {
		if set[c] {
			return c, true
		}
	}
	return "", false
}

// foldedLookup is lookup among files with case ignored.
func (fs *fileSet) foldedLookup(fromDir, p string) (string, bool) {
	if p == "" {
		return "", false
	}
	for _, c := range []string{path.Join(fromDir, p), path.Clean("/" + p)[1:]} {
		if f, ok := fs.folded[strings.ToLower(c)]; ok {
			return f, true
		}
	}
	return "", false
}

// pathToken is a run of path characters in a text, at a byte offset;
// quoted says that backticks enclose it (`assets`).
type pathToken struct {
	text   string
	at     int
	quoted bool
}

// pathTokens returns the runs of path characters ("/" included) of text.
func pathTokens(text string) []pathToken {
	var out []pathToken
	start := -1
	for i, r := range text + " " {
		if pathRune(r) || r == '/' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			quoted := start > 0 && text[start-1] == '`' && i < len(text) && text[i] == '`'
			out = append(out, pathToken{text: text[start:i], at: start, quoted: quoted})
			start = -1
		}
	}
	return out
}

// tails returns p and each part of it after a "/" ("a/b/c", "b/c", "c"),
// as long as a package path may be: a longer one names no file, and a
// text of one long token costs no more than a package path's length
// squared.
func tails(p string) []string {
	var out []string
	start := max(0, len(p)-pack.MaxPathLen)
	if start == 0 {
		out = append(out, p)
	}
	for i := start; i < len(p)-1; i++ {
		if p[i] == '/' {
			out = append(out, p[i+1:])
		}
	}
	return out
}

// mentionsIn returns what text, the content of the package file from,
// mentions of the package's files and folders, each once with its first
// line.
func mentionsIn(from, text string, fs *fileSet) mentions {
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
	// resolve finds a path a link or an import names.
	resolve := func(p string, at int, kind mentionKind) bool {
		if f, ok := fs.lookup(fs.files, fromDir, p); ok {
			addFile(f, at, kind)
			return true
		}
		if d, ok := fs.lookup(fs.dirs, fromDir, p); ok {
			addDir(d, at)
			return true
		}
		return false
	}

	for _, l := range markdownLink().FindAllStringSubmatchIndex(text, -1) {
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
		if f, ok := fs.foldedLookup(fromDir, target); ok {
			m.miscased = append(m.miscased, mention{path: f, line: lines.line(l[0]), written: target})
			addFile(f, l[0], byPath)
			continue
		}
		m.broken = append(m.broken, mention{path: target, line: lines.line(l[0]), written: target})
	}
	for _, l := range pythonImport().FindAllStringSubmatchIndex(text, -1) {
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
	for _, l := range jsImport().FindAllStringSubmatchIndex(text, -1) {
		spec := text[l[2]:l[3]]
		for _, ext := range []string{"", ".js", ".mjs", ".cjs", ".ts", "/index.js"} {
			if p := path.Join(fromDir, spec+ext); fs.files[p] {
				addFile(p, l[0], byImport)
				break
			}
		}
	}

	// Paths written in prose and code: each run of path characters, and
	// each tail of it after a "/" (a folder prefix is allowed), is looked
	// up; a sentence's final period is no part of a path.
	var folded []mention
	for _, tok := range pathTokens(text) {
		word := strings.TrimRight(tok.text, ".")
		if strings.HasSuffix(word, "/") {
			for _, tail := range tails(strings.TrimRight(word, "/")) {
				if d, ok := fs.lookup(fs.dirs, fromDir, tail); ok {
					addDir(d, tok.at)
				}
			}
			continue
		}
		if strings.HasPrefix(word, "./") || tok.quoted {
			if d, ok := fs.lookup(fs.dirs, fromDir, strings.TrimPrefix(word, "./")); ok {
				addDir(d, tok.at)
			}
		}
		for _, tail := range tails(word) {
			if f, ok := fs.lookup(fs.files, fromDir, tail); ok {
				addFile(f, tok.at, byPath)
			} else if f, ok := fs.foldedLookup(fromDir, tail); ok {
				folded = append(folded, mention{path: f, line: lines.line(tok.at), written: tail, kind: byPath})
			}
		}
	}
	// Names with characters no token holds (spaces, parentheses) are
	// searched for as written.
	for _, f := range fs.odd {
		for _, written := range writtenAs(f, fromDir) {
			if at := find(text, written, 0, tokenAt); at >= 0 {
				addFile(f, at, byPath)
				break
			}
		}
	}
	// A path in another case than the file's counts only where the text
	// never writes it right.
	for _, f := range folded {
		if !seen[f.path] {
			seen[f.path] = true
			m.miscased = append(m.miscased, f)
			m.files = append(m.files, f)
		}
	}
	for _, list := range [][]mention{m.files, m.dirs, m.miscased, m.broken} {
		sort.Slice(list, func(i, j int) bool { return list[i].path < list[j].path })
	}
	return m
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
