package blob

import (
	"context"
	"errors"
	"io"
	"iter"

	"github.com/skilld/skilld"
)

// Marked returns s with every error it returns, including those of its
// readers but not io.EOF, marked as skilld.BackendBlob, so that metrics
// and logs can tell a blob store fault from a database one (the database
// drivers mark theirs). It keeps s's TempCleaner.
func Marked(s Store) Store { return marked{s} }

type marked struct{ s Store }

func mark(err error) error { return skilld.FromBackend(skilld.BackendBlob, err) }

func (m marked) Put(ctx context.Context, r io.Reader) (Info, error) {
	info, err := m.s.Put(ctx, r)
	return info, mark(err)
}

func (m marked) Open(ctx context.Context, digest string) (io.ReadCloser, error) {
	rc, err := m.s.Open(ctx, digest)
	if err != nil {
		return nil, mark(err)
	}
	return markedReader{rc}, nil
}

func (m marked) Stat(ctx context.Context, digest string) (Info, error) {
	info, err := m.s.Stat(ctx, digest)
	return info, mark(err)
}

func (m marked) Delete(ctx context.Context, digest string) error {
	return mark(m.s.Delete(ctx, digest))
}

func (m marked) List(ctx context.Context, prefix string) iter.Seq2[Info, error] {
	return func(yield func(Info, error) bool) {
		for info, err := range m.s.List(ctx, prefix) {
			if !yield(info, mark(err)) {
				return
			}
		}
	}
}

func (m marked) Close() error { return mark(m.s.Close()) }

// RemoveStaleTemp forwards to the wrapped store when it keeps temp files,
// and has nothing to remove otherwise.
func (m marked) RemoveStaleTemp(ctx context.Context) (int, error) {
	tc, ok := m.s.(TempCleaner)
	if !ok {
		return 0, nil
	}
	n, err := tc.RemoveStaleTemp(ctx)
	return n, mark(err)
}

type markedReader struct{ rc io.ReadCloser }

func (r markedReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = mark(err)
	}
	return n, err
}

func (r markedReader) Close() error { return mark(r.rc.Close()) }
