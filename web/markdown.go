package web

import (
	"bytes"
	"html/template"
	"path"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// newMarkdown returns the SKILL.md renderer. Skill bodies come from
// anyone who can upload or import, so: goldmark's renderer is left in its
// safe mode (raw HTML becomes a comment, not markup), and linkSafety
// turns links with a scheme other than http, https or mailto into plain
// text and marks the rest noopener noreferrer. The CSP is the second
// line: even markup that slipped through could not run a script.
func newMarkdown() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkSafety{}, 100))),
	)
}

// baseKey holds, in a parse's context, the URL that relative links of
// the SKILL.md resolve under: the file view of the same skill version.
var baseKey = parser.NewContextKey()

// renderMarkdown renders a SKILL.md body; relative links (to the skill's
// own files, "scripts/run.sh") point at base + path.
func (ui *UI) renderMarkdown(src, base string) template.HTML {
	var buf bytes.Buffer
	pc := parser.NewContext()
	pc.Set(baseKey, base)
	if err := ui.md.Convert([]byte(src), &buf, parser.WithContext(pc)); err != nil {
		return template.HTML(template.HTMLEscapeString(src))
	}
	return template.HTML(buf.String()) // goldmark's safe mode escaped everything the source held
}

type linkSafety struct{}

// rel is set on every link kept.
const rel = "noopener noreferrer"

func (linkSafety) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	source := reader.Source()
	base, _ := pc.Get(baseKey).(string)
	var unsafe []ast.Node
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			if !safeURL(string(n.Destination)) {
				unsafe = append(unsafe, n)
				return ast.WalkSkipChildren, nil
			}
			n.Destination = resolve(base, n.Destination)
			n.SetAttributeString("rel", []byte(rel))
		case *ast.AutoLink:
			if !safeURL(string(n.URL(source))) {
				unsafe = append(unsafe, n)
				return ast.WalkSkipChildren, nil
			}
			n.SetAttributeString("rel", []byte(rel))
		case *ast.Image:
			if !safeURL(string(n.Destination)) {
				unsafe = append(unsafe, n)
				return ast.WalkSkipChildren, nil
			}
		}
		return ast.WalkContinue, nil
	})
	for _, n := range unsafe {
		parent := n.Parent()
		if parent == nil {
			continue
		}
		switch n.(type) {
		case *ast.AutoLink:
			// Its text is the URL itself: nothing worth keeping.
			parent.RemoveChild(parent, n)
		default:
			// Keep the link's text, drop the link.
			for c := n.FirstChild(); c != nil; {
				next := c.NextSibling()
				parent.InsertBefore(parent, n, c)
				c = next
			}
			parent.RemoveChild(parent, n)
		}
	}
}

// safeURL allows relative URLs and the schemes http, https and mailto.
// Control characters and spaces are dropped first, as browsers ignore
// them inside "java\tscript:".
func safeURL(u string) bool {
	u = strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f {
			return -1
		}
		return r
	}, u)
	i := strings.IndexAny(u, ":/?#")
	if i < 0 || u[i] != ':' {
		return true
	}
	switch strings.ToLower(u[:i]) {
	case "http", "https", "mailto":
		return true
	}
	return false
}

// resolve points a link to one of the skill's files ("scripts/run.sh",
// "./ref.md#part") at the file view; anchors, absolute paths and URLs
// with a scheme stay as they are.
func resolve(base string, dest []byte) []byte {
	d := string(dest)
	if base == "" || d == "" || strings.HasPrefix(d, "#") || strings.HasPrefix(d, "/") || strings.Contains(strings.SplitN(d, "/", 2)[0], ":") {
		return dest
	}
	p, frag, _ := strings.Cut(d, "#")
	p, _, _ = strings.Cut(p, "?")
	p = path.Clean(p)
	if p == "." || strings.HasPrefix(p, "../") || p == ".." {
		return dest
	}
	out := strings.Replace(base, "{path}", escapePath(p), 1)
	if frag != "" {
		out += "#" + frag
	}
	return []byte(out)
}
