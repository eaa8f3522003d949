package a2acard

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// TestBuildGolden holds Build to the exact bytes of testdata/cards.jsonl,
// one card a line. They were captured from the cards Build made with the
// a2a-go SDK's AgentCard type, so dropping the SDK changed no byte an A2A
// client reads: field names, their order, which fields are omitted when
// empty, and the security scheme's "type".
func TestBuildGolden(t *testing.T) {
	agents := []Agent{
		{Name: "reviewer", Description: "Reviews pull requests.", URL: "https://skilld.example/v1/workspaces/acme/agents/reviewer/tasks",
			Version: "7", Skills: []Skill{
				{ID: "pdf", Name: "pdf", Description: "Reads and fills PDF forms.", Tags: []string{"documents", "pdf"}},
				{ID: "git-tools", Name: "git-tools", Description: "Works with git history."},
			}},
		// No description: the name stands in, since the card requires one.
		{Name: "bare", Description: "  ", URL: "http://localhost:8080/v1/workspaces/w/agents/bare/tasks", Version: "1"},
		// Characters JSON escapes and non-ASCII text.
		{Name: "ünïcode", Description: `quotes " and <tags> & ampersands`, URL: "http://h/t", Version: "2",
			Skills: []Skill{{ID: "x", Name: "x", Description: "", Tags: []string{}}}},
	}
	var got bytes.Buffer
	for _, ag := range agents {
		b, err := json.Marshal(Build(ag))
		if err != nil {
			t.Fatal(err)
		}
		got.Write(append(b, '\n'))
	}
	want, err := os.ReadFile("testdata/cards.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("cards differ from testdata/cards.jsonl:\n got: %s\nwant: %s", got.Bytes(), want)
	}
}
