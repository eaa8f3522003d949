package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"reflect"
	"testing"

	"github.com/skilld/skilld"
)

// TestContextFlagsPatch: the merge patch agents update sends names the
// same settings apply writes, under skilld.ContextSettings' JSON names,
// for every context flag.
func TestContextFlagsPatch(t *testing.T) {
	var f contextFlags
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	if err := fs.Parse([]string{"--context-window", "9000", "--placement", "context", "--max-loaded", "2", "--max-messages", "12",
		"--entry-share", "0.2", "--skills-share", "0.4", "--compaction", "off"}); err != nil {
		t.Fatal(err)
	}
	set := given(fs)
	for _, n := range contextFlagNames() {
		if fs.Lookup(n) == nil || !set(n) {
			t.Errorf("flag --%s is not defined or not covered", n)
		}
	}
	var applied skilld.ContextSettings
	f.apply(set, &applied)
	b, err := json.Marshal(f.patch(set))
	if err != nil {
		t.Fatal(err)
	}
	var patched skilld.ContextSettings
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&patched); err != nil {
		t.Fatalf("patch %s: %v", b, err)
	}
	if !reflect.DeepEqual(applied, patched) || applied.Compaction == nil || *applied.Compaction {
		t.Errorf("apply %+v, patch %s", applied, b)
	}
}
