package tokenizer_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld/agent/tokenizer"
)

// coldEnv makes the test binary measure one cold load and exit: a cold load
// happens once per process (the library keeps each vocabulary after
// building it), so BenchmarkColdLoad runs the binary again for each sample.
const coldEnv = "SKILLD_TOKENIZER_COLD_LOAD"

func TestMain(m *testing.M) {
	if enc := os.Getenv(coldEnv); enc != "" {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		tok, err := tokenizer.NewCache().Get(enc)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		tok.Count("hello world")
		elapsed := time.Since(start)
		runtime.GC()
		runtime.ReadMemStats(&after)
		fmt.Printf("%d %d\n", elapsed.Nanoseconds(), after.HeapAlloc-before.HeapAlloc)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// sample returns about n bytes of what a request holds: English
// instructions and Go code, cut at a line end.
func sample(n int) string {
	const prose = `Skills are folders of instructions, scripts and resources that an agent discovers and loads only when a task needs them.
The catalog lists each skill's name and description; activating a skill puts its SKILL.md into the conversation, and its files are
placed in the sandbox so that scripts can run. Budgets keep any one skill from crowding out the transcript: an entry may take at
most a tenth of the context window, and all active skills together at most three tenths. When a SKILL.md is larger than that, the
model receives a summary with its size in tokens, its opening lines, and the path of the full file, which it can read page by page.
`
	const code = `func (r *run) activate(ctx context.Context, name string) (string, error) {
	skill, ok := r.disclosed[name]
	if !ok {
		return "", fmt.Errorf("unknown skill %q: the catalog lists %s", name, strings.Join(r.names(), ", "))
	}
	body, err := r.packages.Read(ctx, skill.Digest, "SKILL.md")
	if err != nil {
		return "", fmt.Errorf("skill %s: %w", name, err)
	}
	tokens := r.count(string(body))
	if tokens > r.entryBudget() {
		return r.summary(skill, body, tokens), nil
	}
	return "<skill_content name=\"" + name + "\">\n" + string(body) + "\n</skill_content>", nil
}
`
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(prose)
		b.WriteString(code)
	}
	s := b.String()[:n]
	return s[:strings.LastIndexByte(s, '\n')+1]
}

func BenchmarkCount(b *testing.B) {
	text := sample(10 << 10)
	for _, name := range tokenizer.Encodings() {
		b.Run(name, func(b *testing.B) {
			tok, _ := tokenizer.NewCache().Get(name)
			tok.Count("warm up") // load outside the measured loop
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			var tokens int
			for b.Loop() {
				tokens = tok.Count(text)
			}
			b.ReportMetric(float64(tokens), "tokens")
		})
	}
}

// BenchmarkColdLoad measures the first use of an encoding in a fresh
// process: building the vocabulary, compiling the split pattern, counting
// "hello world". ns/op includes starting the process; load-ms and heap-MB
// are what the child measured around the load itself.
func BenchmarkColdLoad(b *testing.B) {
	for _, name := range tokenizer.Encodings() {
		b.Run(name, func(b *testing.B) {
			var total time.Duration
			var heap uint64
			n := 0
			for b.Loop() {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), coldEnv+"="+name)
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				var ns int64
				var h uint64
				if _, err := fmt.Sscan(string(out), &ns, &h); err != nil {
					b.Fatalf("child said %q: %v", out, err)
				}
				total += time.Duration(ns)
				heap = h
				n++
			}
			b.ReportMetric(float64(total.Microseconds())/float64(n)/1000, "load-ms")
			b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
		})
	}
}
