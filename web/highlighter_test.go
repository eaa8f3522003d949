package web

import (
	"bytes"
	"html/template"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

// chromaLexer is the language chroma's whole registry gives a file.
func chromaLexer(name, src string) chroma.Lexer {
	if lx := lexers.Match(name); lx != nil {
		return lx
	}
	if lx := lexers.Analyse(src); lx != nil {
		return lx
	}
	return lexers.Fallback
}

// chromaHighlight is how the UI highlighted before it carried its own
// languages: chroma's whole registry and its github style. The test
// binary may pay for their initialisers; the server does not.
func chromaHighlight(t *testing.T, name, src string) template.HTML {
	t.Helper()
	it, err := chroma.Coalesce(chromaLexer(name, src)).Tokenise(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := chromahtml.New(chromahtml.WithClasses(true), chromahtml.WithLineNumbers(false)).Format(&buf, styles.Get("github"), it); err != nil {
		t.Fatal(err)
	}
	return template.HTML(buf.String())
}

// mixedSource has something of every language's syntax: comments,
// strings, numbers, keywords, tags, front matter and a fenced block.
const mixedSource = `---
name: pdf-tools
description: "Fill PDF forms" # a comment
---
# Heading

<!-- a note --> <div class="x">text</div>
/* block */ // line
import os, sys  # python
def main(argv): return 0x1F + 3.5e2
function f(a) { const s = 'str' + ` + "`tpl ${a}`" + `; return [1, 2, {"k": true, "n": null}]; }
package main; func main() { fmt.Println("hi", 'c', ` + "`raw {{.X}}`" + `) }
if [ -f "$HOME/x" ]; then echo "$(ls -la)" | grep -v '^#'; fi
SELECT id, name FROM skills WHERE n > 10 ORDER BY id;
[section]
key = value
` + "```python\nprint(\"fenced\")\n```\n" + `
- item *emph* **strong** ` + "`code`" + ` [link](https://example.com)
`

// samples are short files of the languages skills are mostly written in.
var samples = map[string]string{
	"SKILL.md":          "---\nname: pdf\ndescription: Fill forms.\n---\n# PDF\n\nRun `scripts/fill.py`:\n\n```bash\npython3 scripts/fill.py in.pdf\n```\n\n- **Note**: _careful_\n",
	"scripts/fill.py":   "#!/usr/bin/env python3\n\"\"\"Fill a form.\"\"\"\nimport sys\n\n\ndef fill(path: str) -> int:\n    with open(path, 'rb') as f:\n        return len(f.read())  # bytes\n\nprint(f\"{fill(sys.argv[1])} bytes\")\n",
	"scripts/run.sh":    "#!/bin/sh\nset -eu\nfor f in \"$@\"; do\n  echo \"file: ${f##*/}\" >&2\ndone\n",
	"scripts/index.js":  "import fs from 'node:fs';\nexport async function main(argv) {\n  const data = await fs.promises.readFile(argv[2], 'utf8');\n  return data.split(/\\n/).length;\n}\n",
	"src/main.ts":       "interface Opts { verbose?: boolean }\nexport const run = (o: Opts): number => (o.verbose ? 1 : 0);\n",
	"package.json":      "{\n  \"name\": \"skill\",\n  \"version\": \"1.0.0\",\n  \"private\": true,\n  \"n\": 3.5\n}\n",
	"config.yaml":       "name: x # comment\nitems:\n  - a\n  - {b: 1, c: [true, null]}\n",
	"main.go":           "package main\n\nimport \"fmt\"\n\nfunc main() {\n\ts := `{{.Name}}`\n\tfmt.Println(s, 0x10, 'x')\n}\n",
	"templates/a.html":  "<!doctype html>\n<html><head><style>p { color: red; }</style><script>let a = 1;</script></head><body><p class=\"x\">hi</p></body></html>\n",
	"styles/site.css":   "body { margin: 0 } /* x */\n.a > .b:hover { color: #fff; }\n",
	"Dockerfile":        "FROM debian:stable\nRUN apt-get update && apt-get install -y curl\nCMD [\"bash\"]\n",
	"Makefile":          "all: build\nbuild:\n\tgo build ./... # comment\n",
	"pyproject.toml":    "[project]\nname = \"x\"\nversion = \"1.0\"\n",
	"query.sql":         "SELECT * FROM t WHERE a = 'x' -- c\n;\n",
	"notes.txt":         "plain words\n",
	"data.csv":          "a,b,c\n1,2,3\n",
	"lib.rb":            "def hi(name)\n  puts \"hi #{name}\"\nend\n",
	"main.rs":           "fn main() { let x: u32 = 5; println!(\"{}\", x); }\n",
	"run.ps1":           "$x = Get-ChildItem -Path . # list\nWrite-Output $x\n",
	"patch.diff":        "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n",
	"schema.xml":        "<?xml version=\"1.0\"?>\n<a b=\"c\"><!-- d --></a>\n",
	"no-extension-file": "#!/bin/bash\necho hi\n",
}

// TestHighlighterMatchesChroma: for every file name the highlighter
// knows, it picks chroma's language and writes chroma's markup, and its
// style sheet is chroma's github sheet.
func TestHighlighterMatchesChroma(t *testing.T) {
	h, err := newHighlighter()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for name := range samples {
		names[name] = true
	}
	for _, lx := range h.lexers.Lexers {
		for _, glob := range lx.Config().Filenames {
			names[concreteName(glob)] = true
		}
	}
	for name := range names {
		texts := []string{mixedSource}
		if src, ok := samples[name]; ok {
			texts = append(texts, src)
		}
		for _, text := range texts {
			// A name no language claims is highlighted by a guess from
			// its content, among fewer languages than chroma's; the
			// mixed text is no real file to guess from.
			if text == mixedSource && lexers.Match(name) == nil {
				continue
			}
			if ours, theirs := h.lexer(name, text), chromaLexer(name, text); ours.Config().Name != theirs.Config().Name {
				t.Errorf("%s: highlighted as %q, chroma says %q", name, ours.Config().Name, theirs.Config().Name)
				continue
			}
			got, raw := h.highlight(name, text)
			if raw != "" {
				t.Errorf("%s: not highlighted", name)
			}
			if want := chromaHighlight(t, name, text); got != want {
				t.Errorf("%s: markup differs from chroma's\ngot:  %s\nwant: %s", name, got, want)
			}
		}
	}
	var css bytes.Buffer
	if err := chromahtml.New(chromahtml.WithClasses(true), chromahtml.WithLineNumbers(false)).WriteCSS(&css, styles.Get("github")); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(h.css, css.Bytes()) {
		t.Errorf("style sheet differs from chroma's github sheet:\n%s\nwant:\n%s", h.css, css.Bytes())
	}
}

// TestHighlighterOtherLanguages: a file in a language outside the
// highlighter's set is shown whole, as plain text in chroma's markup.
func TestHighlighterOtherLanguages(t *testing.T) {
	h, err := newHighlighter()
	if err != nil {
		t.Fatal(err)
	}
	got, raw := h.highlight("prog.f90", "program hello\n  print *, 'a < b'\nend program\n")
	if raw != "" || !strings.Contains(string(got), `class="chroma"`) || !strings.Contains(string(got), "a &lt; b") {
		t.Errorf("plain text: %q %q", got, raw)
	}
	if lx := h.lexer("prog.f90", "program hello\n"); lx != h.fallback {
		t.Errorf("prog.f90: highlighted as %q", lx.Config().Name)
	}
}

// concreteName turns a file-name pattern of a lexer into a name it
// matches: "*.py" is "x.py", "*.php[345]" is "x.php3".
func concreteName(glob string) string {
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			b.WriteByte('x')
		case '?':
			b.WriteByte('x')
		case '[':
			j := strings.IndexByte(glob[i:], ']')
			b.WriteByte(glob[i+1])
			i += j
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
