package blob

import (
	"context"
	"errors"
	"io"
	"iter"
)

// TempCleaner is implemented by stores that keep local temp files of
// uploads in progress: RemoveStaleTemp removes those that crashed uploads
// left (older than an hour) and says how many it removed.
type TempCleaner interface {
	RemoveStaleTemp(ctx context.Context) (int, error)
}

// Checked is one blob as Check found it: Damaged is set (wrapping
// ErrIntegrity) when its stored bytes do not match its digest.
type Checked struct {
	Info
	Damaged error
}

// Check reads every blob of s whose digest starts with prefix and verifies
// it against its digest, in digest order. A blob that cannot be read for
// another reason (storage unreachable) ends the sequence with that error;
// damage does not: it is reported in Checked and the walk goes on.
func Check(ctx context.Context, s Store, prefix string) iter.Seq2[Checked, error] {
	return func(yield func(Checked, error) bool) {
		for info, err := range s.List(ctx, prefix) {
			if err != nil {
				yield(Checked{}, err)
				return
			}
			damaged, err := Verify(ctx, s, info.Digest)
			if err != nil && !errors.Is(err, ErrNotFound) {
				yield(Checked{Info: info}, err)
				return
			}
			if errors.Is(err, ErrNotFound) {
				continue // deleted since it was listed
			}
			if !yield(Checked{Info: info, Damaged: damaged}, nil) {
				return
			}
		}
	}
}

// Verify reads one blob to its end. damaged (wrapping ErrIntegrity) says
// its bytes do not match its digest; err is any other failure.
func Verify(ctx context.Context, s Store, digest string) (damaged, err error) {
	rc, err := s.Open(ctx, digest)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if _, err := io.Copy(io.Discard, rc); err != nil {
		if errors.Is(err, ErrIntegrity) {
			return err, nil
		}
		return nil, err
	}
	return nil, nil
}
