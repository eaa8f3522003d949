package doctest_test

import (
	"strings"
	"testing"

	"github.com/skilld/skilld/internal/doctest"
)

func TestParse(t *testing.T) {
	doc := "# Title\n\n```sh\necho one\n```\n\ntext\n<!-- doctest: skip needs a key -->\n```sh\necho two\n```\n```json\n{\"a\": 1}\n```\n"
	blocks, err := doctest.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 {
		t.Fatalf("%d blocks: %+v", len(blocks), blocks)
	}
	if b := blocks[0]; b.Line != 3 || b.Lang != "sh" || b.Body != "echo one\n" || b.Skip != "" {
		t.Errorf("first block %+v", b)
	}
	if b := blocks[1]; b.Skip != "needs a key" || b.Line != 9 {
		t.Errorf("skipped block %+v", b)
	}
	script := doctest.Script("README.md", blocks)
	if !strings.Contains(script, "echo one") || strings.Contains(script, "echo two") || !strings.Contains(script, doctest.Marker+"README.md:3") {
		t.Errorf("script:\n%s", script)
	}
	if err := doctest.CheckJSON("README.md", blocks); err != nil {
		t.Error(err)
	}
	if got := doctest.LastBlock("x\n" + doctest.Marker + "README.md:3\nout\n" + doctest.Marker + "README.md:40\nboom\n"); got != "README.md:40" {
		t.Errorf("LastBlock = %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	for doc, want := range map[string]string{
		"<!-- doctest: skip -->\n```sh\nx\n```\n":           "must say why",
		"<!-- doctest: skip why -->\ntext\n```sh\nx\n```\n": "not followed by a code block",
		"<!-- doctest: skip why -->\n":                      "not followed by a code block",
		"```sh\nx\n":                                        "never closed",
	} {
		if _, err := doctest.Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", doc, err, want)
		}
	}
	blocks, _ := doctest.Parse([]byte("```json\n{nope\n```\n"))
	if err := doctest.CheckJSON("X.md", blocks); err == nil || !strings.Contains(err.Error(), "X.md:1") {
		t.Errorf("CheckJSON = %v", err)
	}
}
