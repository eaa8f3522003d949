// Package tokenizer counts tokens the way the model that meters a run does,
// so the runtime's budgets (catalog share, skill entries, compaction) are in
// the model's own units.
//
// The encodings are OpenAI's o200k_base and cl100k_base through
// github.com/tiktoken-go/tokenizer, whose vocabularies are compiled into
// the binary: nothing is downloaded at run time. Loading one (building its
// 100–200k entry vocabulary map and compiling its split pattern) costs tens
// of milliseconds and megabytes, so it happens lazily, once per Cache, on
// the first Count; a process that never counts with cl100k_base never loads
// it. There is no package-level state: the runtime holds a Cache and shares
// it between runs.
//
// Counts are exact for OpenAI models. Anthropic does not publish its
// tokenizer; Claude models are counted with cl100k_base, which is an
// approximation (typically within 10–20% for English and code), and the
// runtime corrects its estimates with the usage each response reports.
// Models served by OpenAI-compatible servers (Llama, Qwen, Mistral, …) use
// their own vocabularies and are approximated with o200k_base likewise.
package tokenizer

import (
	"strings"
	"sync"

	tiktoken "github.com/tiktoken-go/tokenizer"

	"github.com/skilld/skilld"
)

// Encoding names.
const (
	O200kBase  = "o200k_base"
	Cl100kBase = "cl100k_base"
)

// Encodings lists the encodings an override may name.
func Encodings() []string { return []string{O200kBase, Cl100kBase} }

// Tokenizer counts tokens. Implementations are safe for concurrent use.
type Tokenizer interface {
	// Count returns the number of tokens text encodes to (special-token
	// markers such as "<|endoftext|>" count as ordinary text).
	Count(text string) int
	// Encoding is the encoding's name ("o200k_base").
	Encoding() string
}

// Cache holds one lazily loaded tokenizer per encoding. The zero value is
// not usable; use NewCache. A Cache is safe for concurrent use.
type Cache struct {
	o200k, cl100k *encoding
}

// NewCache returns a Cache that has loaded nothing yet.
func NewCache() *Cache {
	return &Cache{o200k: newEncoding(O200kBase), cl100k: newEncoding(Cl100kBase)}
}

// Get returns the tokenizer for an encoding name.
func (c *Cache) Get(name string) (Tokenizer, error) {
	switch strings.TrimSpace(name) {
	case O200kBase:
		return c.o200k, nil
	case Cl100kBase:
		return c.cl100k, nil
	}
	return nil, skilld.Errorf(skilld.EINVALID, "unknown tokenizer encoding %q; known: %s", name, strings.Join(Encodings(), ", "))
}

// ForModel returns the tokenizer for a model reference ("openai:gpt-4o",
// "anthropic:claude-sonnet-4-5", or a bare model name), or for the encoding
// override names when it is not empty. See EncodingFor for the choice.
func (c *Cache) ForModel(modelRef, override string) (Tokenizer, error) {
	if strings.TrimSpace(override) != "" {
		return c.Get(override)
	}
	name, _ := EncodingFor(modelRef)
	return c.Get(name)
}

// ForModel is Cache.ForModel on a new Cache: for one-off use. A process
// that counts for many runs should hold one Cache instead, so each encoding
// is loaded once.
func ForModel(modelRef, override string) (Tokenizer, error) {
	return NewCache().ForModel(modelRef, override)
}

// EncodingFor returns the encoding used for a model reference and whether
// counts with it are exact (the model's own tokenizer) rather than an
// approximation:
//
//	gpt-4o*, chatgpt-4o*, gpt-4.1*, gpt-4.5*, gpt-5*, o1/o3/o4*, gpt-oss*  o200k_base, exact
//	gpt-4*, gpt-3.5*                                                        cl100k_base, exact
//	anthropic:*, claude*                                                    cl100k_base, approximate
//	anything else (local and unknown models, scripted)                      o200k_base, approximate
//
// A provider prefix, a fine-tune prefix ("ft:gpt-4o-mini:org::id") and a
// router's vendor path ("openai/gpt-4o") are looked through.
func EncodingFor(modelRef string) (encoding string, exact bool) {
	name := strings.ToLower(strings.TrimSpace(modelRef))
	provider, rest, ok := strings.Cut(name, ":")
	switch {
	case ok && provider == "anthropic":
		return Cl100kBase, false
	case ok && (provider == "openai" || provider == "scripted"):
		name = rest
	}
	name = strings.TrimPrefix(name, "ft:")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	family := func(prefixes ...string) bool {
		for _, p := range prefixes {
			if name == p || strings.HasPrefix(name, p+"-") || strings.HasPrefix(name, p+":") {
				return true
			}
		}
		return false
	}
	switch {
	case strings.HasPrefix(name, "claude"):
		return Cl100kBase, false
	case family("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4-mini", "gpt-oss"):
		return O200kBase, true
	case family("gpt-4", "gpt-3.5-turbo", "gpt-35-turbo"):
		return Cl100kBase, true
	}
	return O200kBase, false
}

// encoding is one encoding, loaded on first use.
type encoding struct {
	name  string
	codec func() tiktoken.Codec
}

func newEncoding(name string) *encoding {
	return &encoding{name: name, codec: sync.OnceValue(func() tiktoken.Codec {
		c, err := tiktoken.Get(tiktoken.Encoding(name))
		if err != nil {
			// Only the two names above are ever passed, and the library
			// has both compiled in.
			panic("tokenizer: " + name + ": " + err.Error())
		}
		return c
	})}
}

func (e *encoding) Encoding() string { return e.name }

func (e *encoding) Count(text string) int {
	if text == "" {
		return 0
	}
	n, err := e.codec().Count(text)
	if err != nil {
		// The library fails only on a regexp match timeout, which is not
		// configured; should it ever, a byte-based estimate (about four
		// bytes a token) beats a zero that would let anything fit.
		return (len(text) + 3) / 4
	}
	return n
}
