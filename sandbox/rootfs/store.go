package rootfs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skilld/skilld/sandbox/internal/hostfs"
)

// Defaults of Limits' zero fields.
const (
	DefaultMaxBytes  = 8 << 30
	DefaultMaxFiles  = 500_000
	DefaultMaxLayers = 128
)

// Limits bound an image while it is unpacked. Zero (or negative) fields
// take the defaults. They apply when an image is unpacked, not when an
// image unpacked earlier is found in the store.
type Limits struct {
	// MaxBytes bounds the bytes of file content of all layers together,
	// as written: a file a later layer replaces counts twice. Default
	// DefaultMaxBytes (8 GiB).
	MaxBytes int64
	// MaxFiles bounds the tar entries of all layers together (files,
	// folders, links, whiteouts, dropped devices). Default
	// DefaultMaxFiles (500,000).
	MaxFiles int
	// MaxLayers bounds the image's layers. Default DefaultMaxLayers (128).
	MaxLayers int
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxLayers <= 0 {
		l.MaxLayers = DefaultMaxLayers
	}
	return l
}

// Names inside a store folder.
const (
	treeName   = "rootfs"        // <hex>/rootfs: the unpacked tree
	markerName = "unpacked.json" // <hex>/unpacked.json: written last, before the rename
)

// Store is a folder of unpacked images, <dir>/<hex>, one per image digest.
// It is safe for concurrent use, and several processes may share a folder
// (servers on one machine, say): an image appears only by the rename of a
// complete folder. Two that unpack the same image at once both finish;
// the first rename wins, the other removes its copy and returns the
// winner's. Within one Store, calls for the same image wait for each other
// instead.
type Store struct {
	dir string
	lim Limits

	mu   sync.Mutex
	busy map[string]*sync.Mutex // image digest → held while it is unpacked
}

// Root is one unpacked image.
type Root struct {
	// Digest names the image: "sha256:<hex>" of its manifest in an OCI
	// layout, of its config when only docker's manifest.json lists it
	// (docker save before version 25, or of an untagged image since).
	Digest string
	// Dir is the unpacked tree, <dir>/<hex>/rootfs. It must not be
	// changed: every Unpack of the image returns it as it was made.
	Dir string
}

// marker is the content of unpacked.json: proof that the folder is
// complete, and what it took.
type marker struct {
	Digest   string    `json:"digest"`
	Unpacked time.Time `json:"unpacked"`
	stats
}

// Open opens (creating, mode 0700) a store in dir, and removes what
// unpacks that stopped half-way left there (see sweep).
func Open(dir string, l Limits) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, unavailablef("rootfs store: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, unavailablef("rootfs store: %w", err)
	}
	if err := sweep(dir); err != nil {
		return nil, unavailablef("rootfs store: %w", err)
	}
	return &Store{dir: dir, lim: l.withDefaults(), busy: map[string]*sync.Mutex{}}, nil
}

// Unpack unpacks the image archive at path once per image digest and
// returns its root; a later call (from this process or another sharing
// the folder) finds it and returns at once, having read only the
// archive's index and manifest. A refused or failed unpack leaves nothing
// in the store. Errors: EINVALID for an archive that is not one image or
// breaks a rule (message naming the blob or entry), ETOOLARGE for one over
// the Limits (naming the limit), EUNAVAILABLE when the store cannot be
// written or ctx ends.
func (s *Store) Unpack(ctx context.Context, path string) (*Root, error) {
	r, err := s.unpack(ctx, path)
	if err != nil {
		return nil, wrap(err, "rootfs: %s", path)
	}
	return r, nil
}

func (s *Store) unpack(ctx context.Context, path string) (*Root, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a, err := openArchive(ctx, path)
	if err != nil {
		return nil, err
	}
	defer a.close()
	img, err := a.image(s.lim)
	if err != nil {
		return nil, err
	}
	unlock := s.lock(img.digest)
	defer unlock()
	if r, ok := s.find(img.digest); ok {
		return r, nil
	}
	if err := s.discard(img.digest); err != nil {
		return nil, err
	}
	t, err := newTemp(s.dir)
	if err != nil {
		return nil, err
	}
	defer t.release()
	st, err := unpackTree(ctx, a, img, filepath.Join(t.dir, treeName), s.lim)
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(marker{Digest: img.digest, Unpacked: time.Now().UTC(), stats: st})
	if err := os.WriteFile(filepath.Join(t.dir, markerName), b, 0o600); err != nil {
		return nil, unavailablef("writing the marker: %w", err)
	}
	return s.commit(t, img.digest)
}

// lock holds the image digest for this Store, so that two calls for one
// image unpack it once.
func (s *Store) lock(digest string) (unlock func()) {
	s.mu.Lock()
	m := s.busy[digest]
	if m == nil {
		m = &sync.Mutex{}
		s.busy[digest] = m
	}
	s.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// folder is where the image of digest (checked: "sha256:" and 64 hex
// digits) lives.
func (s *Store) folder(digest string) string {
	return filepath.Join(s.dir, strings.TrimPrefix(digest, "sha256:"))
}

// find returns the image of digest when its folder is complete.
func (s *Store) find(digest string) (*Root, bool) {
	dir := s.folder(digest)
	b, err := os.ReadFile(filepath.Join(dir, markerName))
	if err != nil {
		return nil, false
	}
	var m marker
	if json.Unmarshal(b, &m) != nil || m.Digest != digest {
		return nil, false
	}
	return &Root{Digest: digest, Dir: filepath.Join(dir, treeName)}, true
}

// discard removes a folder of digest that find did not take: one damaged
// after it was made (an interrupted rm -r, say), since a folder appears
// only complete.
func (s *Store) discard(digest string) error {
	dir := s.folder(digest)
	if _, err := os.Lstat(dir); err != nil {
		return nil
	}
	if _, ok := s.find(digest); ok {
		return nil // renamed into place by another store just now
	}
	if err := hostfs.RemoveAll(dir); err != nil {
		return unavailablef("removing a damaged copy of %s: %w", digest, err)
	}
	return nil
}

// commit makes the complete folder t the image of digest. Its content is
// flushed to disk first, so that after a crash a folder with a marker is
// never one with empty files.
func (s *Store) commit(t *temp, digest string) (*Root, error) {
	if err := unix.Syncfs(int(t.lock.Fd())); err != nil {
		return nil, unavailablef("flushing the new tree: %w", err)
	}
	final := s.folder(digest)
	if err := os.Rename(t.dir, final); err != nil {
		// Another store sharing the folder got there first: its copy is
		// as good as this one, which release removes.
		if r, ok := s.find(digest); ok {
			return r, nil
		}
		return nil, unavailablef("placing the image: %w", err)
	}
	t.committed(final)
	return &Root{Digest: digest, Dir: filepath.Join(final, treeName)}, nil
}
