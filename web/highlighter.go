package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"path"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
)

// chromaFS holds the highlighter's languages and its one style, copied
// from chroma (chroma/COPYING). chroma's own lexers and styles packages
// XML-parse all of their ~280 lexers and ~70 styles in their package
// initialisers, before main, in every command of the binary; these are
// parsed on the first highlighted page instead.
//
//go:embed chroma/lexers/*.xml chroma/go_template.xml chroma/github.xml
var chromaFS embed.FS

// highlighter marks up source text with chroma's classes, in the
// languages a skill's files are commonly written in (chroma/lexers plus
// Go and Markdown, highlighterlexers.go); a file in another language is
// shown as plain text in the same markup.
type highlighter struct {
	lexers   *chroma.LexerRegistry
	fallback chroma.Lexer
	format   *chromahtml.Formatter
	style    *chroma.Style
	css      []byte
}

// newHighlighter parses the embedded languages and style. It fails only
// on a broken embedded file, a build mistake that the package's tests
// catch.
func newHighlighter() (*highlighter, error) {
	reg := chroma.NewLexerRegistry()
	paths, err := fs.Glob(chromaFS, "chroma/lexers/*.xml")
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		lx, err := chroma.NewXMLLexer(chromaFS, p)
		if err != nil {
			return nil, fmt.Errorf("highlighter: %s: %w", p, err)
		}
		reg.Register(lx)
	}
	registerCodeLexers(reg)
	f, err := chromaFS.Open("chroma/github.xml")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	style, err := chroma.NewXMLStyle(f)
	if err != nil {
		return nil, fmt.Errorf("highlighter: style: %w", err)
	}
	// Highlighting uses classes, never style attributes, so the strict
	// style-src holds; the classes' colours come from this sheet.
	h := &highlighter{lexers: reg, fallback: fallbackLexer(), style: style,
		format: chromahtml.New(chromahtml.WithClasses(true), chromahtml.WithLineNumbers(false))}
	var css bytes.Buffer
	if err := h.format.WriteCSS(&css, style); err != nil {
		return nil, fmt.Errorf("highlighter: style sheet: %w", err)
	}
	h.css = css.Bytes()
	return h, nil
}

// lexer picks the language of a file by its name, then by its content,
// as chroma's lexers.Match and lexers.Analyse do.
func (h *highlighter) lexer(name, src string) chroma.Lexer {
	if lx := h.lexers.Match(path.Base(name)); lx != nil {
		return lx
	}
	if lx := h.lexers.Analyse(src); lx != nil {
		return lx
	}
	return h.fallback
}

// highlight marks up src; on failure the plain text is returned instead,
// for the template to escape.
func (h *highlighter) highlight(name, src string) (template.HTML, string) {
	it, err := chroma.Coalesce(h.lexer(name, src)).Tokenise(nil, src)
	if err != nil {
		return "", src
	}
	var buf bytes.Buffer
	if err := h.format.Format(&buf, h.style, it); err != nil {
		return "", src
	}
	return template.HTML(buf.String()), "" // chroma escapes every token
}
