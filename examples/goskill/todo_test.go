package main

import (
	"os"
	"strings"
	"testing"
)

// The example runs and its skill does what it says.
func TestExample(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	if err := run(f); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(f.Name())
	for _, want := range []string{"context: loaded [todo]", `added "send it"; 2 items`, "done: write the report", "answer: One item done"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("output lacks %q:\n%s", want, b)
		}
	}
}
