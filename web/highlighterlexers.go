package web

import (
	"regexp"
	"strings"

	"github.com/alecthomas/chroma/v2"
)

// The languages chroma writes in Go rather than XML, adapted from its
// lexers package (chroma/COPYING): Markdown, whose YAML front matter is
// looked up in the highlighter's own registry, and Go with the text
// templates its raw strings are highlighted as.

// registerCodeLexers adds the Go-coded languages to reg, and the
// analyser chroma gives its MySQL lexer in Go.
func registerCodeLexers(reg *chroma.LexerRegistry) {
	if my, ok := reg.Get("mysql").(*chroma.RegexLexer); ok {
		my.SetAnalyser(mysqlAnalyser())
	}
	reg.Register(&markdownLexer{Lexer: chroma.MustNewLexer(&chroma.Config{
		Name:      "markdown",
		Aliases:   []string{"md", "mkd"},
		Filenames: []string{"*.md", "*.mkd", "*.markdown"},
		MimeTypes: []string{"text/x-markdown"},
	}, markdownRules), registry: reg})
	goText := reg.Register(chroma.MustNewXMLLexer(chromaFS, "chroma/go_template.xml").SetConfig(&chroma.Config{
		Name:    "Go Text Template",
		Aliases: []string{"go-text-template"},
	}))
	reg.Register(chroma.MustNewLexer(&chroma.Config{
		Name:      "Go",
		Aliases:   []string{"go", "golang"},
		Filenames: []string{"*.go"},
		MimeTypes: []string{"text/x-gosrc"},
	}, func() chroma.Rules { return goRules(goText) }).SetAnalyser(func(text string) float32 {
		if strings.Contains(text, "fmt.") && strings.Contains(text, "package ") {
			return 0.5
		}
		if strings.Contains(text, "package ") {
			return 0.1
		}
		return 0.0
	}))
}

// mysqlAnalyser is chroma's guess that text is MySQL: names quoted in
// backticks rather than brackets.
func mysqlAnalyser() func(string) float32 {
	backticked := regexp.MustCompile("`[a-zA-Z_]\\w*`")
	bracketed := regexp.MustCompile(`\[[a-zA-Z_]\w*\]`)
	return func(text string) float32 {
		ticks := len(backticked.FindAllString(text, -1))
		brackets := len(bracketed.FindAllString(text, -1))
		switch {
		case ticks+brackets >= 1 && ticks >= 2*brackets:
			return 0.5
		case ticks > brackets:
			return 0.2
		case ticks > 0:
			return 0.1
		}
		return 0
	}
}

// fallbackLexer is chroma's lexers.Fallback: plain text.
func fallbackLexer() chroma.Lexer {
	return chroma.MustNewLexer(&chroma.Config{Name: "fallback", Filenames: []string{"*"}, Priority: -1}, func() chroma.Rules {
		return chroma.Rules{"root": []chroma.Rule{{Pattern: `.+`, Type: chroma.Text}, {Pattern: `\n`, Type: chroma.Text}}}
	})
}

// markdownLexer highlights a leading YAML front matter block as YAML and
// the rest as Markdown.
type markdownLexer struct {
	chroma.Lexer
	registry *chroma.LexerRegistry
}

func (m *markdownLexer) Tokenise(options *chroma.TokeniseOptions, text string) (chroma.Iterator, error) {
	frontmatter, rest, ok := splitFrontmatter(text)
	if !ok {
		return m.Lexer.Tokenise(options, text)
	}
	yamlLexer := m.registry.Get("YAML")
	if yamlLexer == nil {
		return m.Lexer.Tokenise(options, text)
	}
	yamlTokens, err := yamlLexer.Tokenise(options, frontmatter)
	if err != nil {
		return nil, err
	}
	markdownTokens, err := m.Lexer.Tokenise(options, rest)
	if err != nil {
		return nil, err
	}
	return chroma.Concaterator(yamlTokens, markdownTokens), nil
}

func splitFrontmatter(text string) (frontmatter string, rest string, ok bool) {
	if !strings.HasPrefix(text, "---\n") && !strings.HasPrefix(text, "---\r\n") {
		return "", text, false
	}

	lineEnd := strings.IndexByte(text, '\n')
	if lineEnd < 0 {
		return "", text, false
	}
	if strings.TrimSuffix(text[:lineEnd], "\r") != "---" {
		return "", text, false
	}

	for pos := lineEnd + 1; pos < len(text); {
		next := strings.IndexByte(text[pos:], '\n')
		if next < 0 {
			break
		}
		lineEnd = pos + next
		line := strings.TrimSuffix(text[pos:lineEnd], "\r")
		if line == "---" {
			return text[:lineEnd+1], text[lineEnd+1:], true
		}
		pos = lineEnd + 1
	}
	return "", text, false
}

func markdownRules() chroma.Rules {
	return chroma.Rules{
		"root": {
			{Pattern: `<!--[\w\W]*?-->`, Type: chroma.CommentMultiline},
			{Pattern: `^(#[^#].+\n)`, Type: chroma.ByGroups(chroma.GenericHeading)},
			{Pattern: `^(#{2,6}.+\n)`, Type: chroma.ByGroups(chroma.GenericSubheading)},
			{Pattern: `^(\s*)([*-] )(\[[ xX]\])( .+\n)`, Type: chroma.ByGroups(chroma.Text, chroma.Keyword, chroma.Keyword, chroma.UsingSelf("inline"))},
			{Pattern: `^(\s*)([*-])(\s)(.+\n)`, Type: chroma.ByGroups(chroma.Text, chroma.Keyword, chroma.Text, chroma.UsingSelf("inline"))},
			{Pattern: `^(\s*)([0-9]+\.)( .+\n)`, Type: chroma.ByGroups(chroma.Text, chroma.Keyword, chroma.UsingSelf("inline"))},
			{Pattern: `^(\s*>\s)(.+\n)`, Type: chroma.ByGroups(chroma.Keyword, chroma.GenericEmph)},
			{Pattern: "^(```\\n)([\\w\\W]*?)(^```$)", Type: chroma.ByGroups(chroma.String, chroma.Text, chroma.String)},
			{
				Pattern: "^(```)(\\w+)(\\n)([\\w\\W]*?)(^```$)",
				Type:    chroma.UsingByGroup(2, 4, chroma.String, chroma.String, chroma.String, chroma.Text, chroma.String),
			},
			chroma.Include("inline"),
		},
		"inline": {
			{Pattern: `<!--[\w\W]*?-->`, Type: chroma.CommentMultiline},
			{Pattern: `\\.`, Type: chroma.Text},
			{Pattern: `(\s)(\*|_)((?:(?!\2).)*)(\2)((?=\W|\n))`, Type: chroma.ByGroups(chroma.Text, chroma.GenericEmph, chroma.GenericEmph, chroma.GenericEmph, chroma.Text)},
			{Pattern: `(\s)((\*\*|__).*?)\3((?=\W|\n))`, Type: chroma.ByGroups(chroma.Text, chroma.GenericStrong, chroma.GenericStrong, chroma.Text)},
			{Pattern: `(\s)(~~[^~]+~~)((?=\W|\n))`, Type: chroma.ByGroups(chroma.Text, chroma.GenericDeleted, chroma.Text)},
			{Pattern: "`[^`]+`", Type: chroma.LiteralStringBacktick},
			{Pattern: `[@#][\w/:]+`, Type: chroma.NameEntity},
			{Pattern: `(!?\[)([^]]+)(\])(\()([^)]+)(\))`, Type: chroma.ByGroups(chroma.Text, chroma.NameTag, chroma.Text, chroma.Text, chroma.NameAttribute, chroma.Text)},
			{Pattern: `.|\n`, Type: chroma.Text},
		},
	}
}

func goRules(goText chroma.Lexer) chroma.Rules {
	return chroma.Rules{
		"root": {
			{Pattern: `\n`, Type: chroma.TextWhitespace},
			{Pattern: `\s+`, Type: chroma.TextWhitespace},
			{Pattern: `//[^\s\n\r][^\n\r]*`, Type: chroma.CommentPreproc},
			{Pattern: `//[^\n\r]*`, Type: chroma.CommentSingle},
			{Pattern: `/(\\\n)?[*](.|\n)*?[*](\\\n)?/`, Type: chroma.CommentMultiline},
			{Pattern: `(import|package)\b`, Type: chroma.KeywordNamespace},
			{Pattern: `(var|func|struct|map|chan|type|interface|const)\b`, Type: chroma.KeywordDeclaration},
			{Pattern: chroma.Words(``, `\b`, `break`, `default`, `select`, `case`, `defer`, `go`, `else`, `goto`, `switch`, `fallthrough`, `if`, `range`, `continue`, `for`, `return`), Type: chroma.Keyword},
			{Pattern: `(true|false|iota|nil)\b`, Type: chroma.KeywordConstant},
			{Pattern: chroma.Words(``, `\b(\()`, `uint`, `uint8`, `uint16`, `uint32`, `uint64`, `int`, `int8`, `int16`, `int32`, `int64`, `float`, `float32`, `float64`, `complex64`, `complex128`, `byte`, `rune`, `string`, `bool`, `error`, `uintptr`, `print`, `println`, `panic`, `recover`, `close`, `complex`, `real`, `imag`, `len`, `cap`, `append`, `copy`, `delete`, `new`, `make`, `clear`, `min`, `max`), Type: chroma.ByGroups(chroma.NameBuiltin, chroma.Punctuation)},
			{Pattern: chroma.Words(``, `\b`, `uint`, `uint8`, `uint16`, `uint32`, `uint64`, `int`, `int8`, `int16`, `int32`, `int64`, `float`, `float32`, `float64`, `complex64`, `complex128`, `byte`, `rune`, `string`, `bool`, `error`, `uintptr`, `any`), Type: chroma.KeywordType},
			{Pattern: `\d+i`, Type: chroma.LiteralNumber},
			{Pattern: `\d+\.\d*([Ee][-+]\d+)?i`, Type: chroma.LiteralNumber},
			{Pattern: `\.\d+([Ee][-+]\d+)?i`, Type: chroma.LiteralNumber},
			{Pattern: `\d+[Ee][-+]\d+i`, Type: chroma.LiteralNumber},
			{Pattern: `\d+(\.\d+[eE][+\-]?\d+|\.\d*|[eE][+\-]?\d+)`, Type: chroma.LiteralNumberFloat},
			{Pattern: `\.\d+([eE][+\-]?\d+)?`, Type: chroma.LiteralNumberFloat},
			{Pattern: `0[0-7]+`, Type: chroma.LiteralNumberOct},
			{Pattern: `0[xX][0-9a-fA-F_]+`, Type: chroma.LiteralNumberHex},
			{Pattern: `0b[01_]+`, Type: chroma.LiteralNumberBin},
			{Pattern: `(0|[1-9][0-9_]*)`, Type: chroma.LiteralNumberInteger},
			{Pattern: `'(\\['"\\abfnrtv]|\\x[0-9a-fA-F]{2}|\\[0-7]{1,3}|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|[^\\])'`, Type: chroma.LiteralStringChar},
			{Pattern: "(`)([^`]*)(`)", Type: chroma.ByGroups(chroma.LiteralString, chroma.UsingLexer(chroma.TypeRemappingLexer(goText, chroma.TypeMapping{{From: chroma.Other, To: chroma.LiteralString}})), chroma.LiteralString)},
			{Pattern: `"(\\\\|\\"|[^"])*"`, Type: chroma.LiteralString},
			{Pattern: `(<<=|>>=|<<|>>|<=|>=|&\^=|&\^|\+=|-=|\*=|/=|%=|&=|\|=|&&|\|\||<-|\+\+|--|==|!=|:=|\.\.\.|[+\-*/%&])`, Type: chroma.Operator},
			{Pattern: `([a-zA-Z_]\w*)(\s*)(\()`, Type: chroma.ByGroups(chroma.NameFunction, chroma.UsingSelf("root"), chroma.Punctuation)},
			{Pattern: `[|^<>=!()\[\]{}.,;:~]`, Type: chroma.Punctuation},
			{Pattern: `[^\W\d]\w*`, Type: chroma.NameOther},
		},
	}
}
