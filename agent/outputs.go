package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
)

// Outputs stores tool outputs too large to keep in the transcript, so
// read_tool_output can page through them.
type Outputs interface {
	Put(ctx context.Context, text string) (id string, err error)
	Get(ctx context.Context, id string) (string, error)
}

// MemoryOutputs keeps outputs in memory.
type MemoryOutputs struct {
	mu sync.Mutex
	m  map[string]string
}

func (o *MemoryOutputs) Put(_ context.Context, text string) (string, error) {
	sum := sha256.Sum256([]byte(text))
	id := "out_" + hex.EncodeToString(sum[:8])
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]string{}
	}
	o.m[id] = text
	return id, nil
}

func (o *MemoryOutputs) Get(_ context.Context, id string) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if t, ok := o.m[id]; ok {
		return t, nil
	}
	return "", skilld.Errorf(skilld.ENOTFOUND, "no stored output %q", id)
}

// BlobOutputs keeps outputs in a blob store; the id is the blob digest, so
// every server process can read what another stored.
type BlobOutputs struct{ Blobs blob.Store }

func (o BlobOutputs) Put(ctx context.Context, text string) (string, error) {
	info, err := o.Blobs.Put(ctx, strings.NewReader(text))
	return info.Digest, err
}

func (o BlobOutputs) Get(ctx context.Context, id string) (string, error) {
	rc, err := o.Blobs.Open(ctx, id)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), err
}

// offload replaces a long output by its head and tail and an id to read
// the rest with.
func offload(ctx context.Context, o Outputs, text string) (string, string, error) {
	if utf8.RuneCountInString(text) <= OffloadThreshold {
		return text, "", nil
	}
	id, err := o.Put(ctx, text)
	if err != nil {
		return "", "", fmt.Errorf("storing a large output: %w", err)
	}
	r := []rune(text)
	return fmt.Sprintf("%s\n\n[… %d characters omitted: call read_tool_output with id %q (offset, limit) to read the whole output of %d characters …]\n\n%s",
		string(r[:OffloadHead]), len(r)-OffloadHead-OffloadTail, id, len(r), string(r[len(r)-OffloadTail:])), id, nil
}
