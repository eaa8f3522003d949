package tokenizer_test

import (
	"strings"
	"sync"
	"testing"

	tiktoken "github.com/tiktoken-go/tokenizer"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/tokenizer"
)

// Counts taken from the library's Encode (cl100k "tiktoken is great!" and
// both "hello world" values are also the ones OpenAI's tiktoken gives).
var known = []struct {
	text          string
	o200k, cl100k int
}{
	{"", 0, 0},
	{"hello world", 2, 2},
	{"tiktoken is great!", 6, 6},
	{"Grüße aus Köln — 東京タワー 🚀", 12, 17},
	{"func main() {\n\tfmt.Println(\"hi\")\n}\n", 10, 10},
	{"    for i := 0; i < 10; i++ { x += i }", 19, 19},
	{"<|endoftext|>", 7, 7}, // ordinary text, not the special token
}

func TestKnownCounts(t *testing.T) {
	c := tokenizer.NewCache()
	o, _ := c.Get(tokenizer.O200kBase)
	cl, _ := c.Get(tokenizer.Cl100kBase)
	for _, k := range known {
		if got := o.Count(k.text); got != k.o200k {
			t.Errorf("o200k_base Count(%q) = %d, want %d", k.text, got, k.o200k)
		}
		if got := cl.Count(k.text); got != k.cl100k {
			t.Errorf("cl100k_base Count(%q) = %d, want %d", k.text, got, k.cl100k)
		}
	}
}

// Count agrees with the library's Encode on a larger mixed text.
func TestCountMatchesLibrary(t *testing.T) {
	text := sample(10 << 10)
	for _, name := range tokenizer.Encodings() {
		lib, err := tiktoken.Get(tiktoken.Encoding(name))
		if err != nil {
			t.Fatal(err)
		}
		ids, _, _ := lib.Encode(text)
		tok, _ := tokenizer.NewCache().Get(name)
		if got := tok.Count(text); got != len(ids) || got == 0 {
			t.Errorf("%s: Count = %d, Encode gives %d tokens", name, got, len(ids))
		}
	}
}

func TestEncodingFor(t *testing.T) {
	for ref, want := range map[string]struct {
		enc   string
		exact bool
	}{
		"openai:gpt-4o":                      {tokenizer.O200kBase, true},
		"openai:gpt-4o-mini-2024-07-18":      {tokenizer.O200kBase, true},
		"openai:gpt-4.1-nano":                {tokenizer.O200kBase, true},
		"openai:o3":                          {tokenizer.O200kBase, true},
		"openai:o4-mini":                     {tokenizer.O200kBase, true},
		"openai:gpt-5-mini":                  {tokenizer.O200kBase, true},
		"openai:ft:gpt-4o-mini:acme::abc123": {tokenizer.O200kBase, true},
		"openai:openai/gpt-4o":               {tokenizer.O200kBase, true},
		"openai:gpt-oss:20b":                 {tokenizer.O200kBase, true},
		"gpt-4o":                             {tokenizer.O200kBase, true},
		"openai:gpt-4":                       {tokenizer.Cl100kBase, true},
		"openai:gpt-4-turbo":                 {tokenizer.Cl100kBase, true},
		"openai:gpt-3.5-turbo":               {tokenizer.Cl100kBase, true},
		"anthropic:claude-sonnet-4-5":        {tokenizer.Cl100kBase, false},
		"openai:anthropic/claude-3.5-sonnet": {tokenizer.Cl100kBase, false},
		"openai:llama3.1:8b":                 {tokenizer.O200kBase, false},
		"openai:qwen2.5-coder":               {tokenizer.O200kBase, false},
		"openai:o1x":                         {tokenizer.O200kBase, false},
		"scripted:demo.json":                 {tokenizer.O200kBase, false},
		"":                                   {tokenizer.O200kBase, false},
	} {
		enc, exact := tokenizer.EncodingFor(ref)
		if enc != want.enc || exact != want.exact {
			t.Errorf("EncodingFor(%q) = %s, %v; want %s, %v", ref, enc, exact, want.enc, want.exact)
		}
	}
}

func TestForModelOverride(t *testing.T) {
	c := tokenizer.NewCache()
	tok, err := c.ForModel("anthropic:claude-sonnet-4-5", "")
	if err != nil || tok.Encoding() != tokenizer.Cl100kBase {
		t.Fatalf("%v %v", tok, err)
	}
	tok, err = c.ForModel("anthropic:claude-sonnet-4-5", "o200k_base")
	if err != nil || tok.Encoding() != tokenizer.O200kBase {
		t.Fatalf("override: %v %v", tok, err)
	}
	again, _ := c.ForModel("openai:gpt-4o", "")
	if again != tok {
		t.Error("one Cache must hand out one tokenizer per encoding")
	}
	_, err = c.ForModel("openai:gpt-4o", "p50k_base")
	if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), "o200k_base, cl100k_base") {
		t.Errorf("unknown override: %v", err)
	}
	if tok, err := tokenizer.ForModel("openai:gpt-4o", ""); err != nil || tok.Count("hello world") != 2 {
		t.Errorf("package ForModel: %v %v", tok, err)
	}
}

// Many goroutines racing on first use load the encoding once and all count
// correctly (run with -race).
func TestConcurrentUse(t *testing.T) {
	c := tokenizer.NewCache()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			name := tokenizer.Encodings()[i%2]
			tok, err := c.Get(name)
			if err != nil {
				t.Error(err)
				return
			}
			for _, k := range known {
				want := k.o200k
				if name == tokenizer.Cl100kBase {
					want = k.cl100k
				}
				if got := tok.Count(k.text); got != want {
					t.Errorf("%s Count(%q) = %d, want %d", name, k.text, got, want)
				}
			}
		})
	}
	wg.Wait()
}
