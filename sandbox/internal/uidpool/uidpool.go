// Package uidpool hands out host user ids from a range, one to each
// sandbox, so that no two sandboxes that exist at the same time share a uid
// in the host's view, nor any kernel object tied to one (processes,
// keyrings, per-user limits and quotas).
//
// A claim is a symbolic link in the pool's folder, <dir>/<uid> → <sandbox
// id>. Creating a link is atomic and fails when the name is taken, so
// processes sharing the folder never hand out one uid twice; links survive
// a restart, so a resumed task keeps its uid.
package uidpool

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/skilld/skilld"
)

// Range is a span of host uids (and the gids of the same numbers).
type Range struct {
	First uint32
	Count uint32
}

// Last is the range's last uid.
func (r Range) Last() uint32 { return r.First + r.Count - 1 }

// String is "FIRST-LAST", as the flag takes it.
func (r Range) String() string { return fmt.Sprintf("%d-%d", r.First, r.Last()) }

// Contains reports whether uid is in the range.
func (r Range) Contains(uid uint32) bool { return uid >= r.First && uid-r.First < r.Count }

// ParseRange reads "FIRST-LAST". The range must not hold 0, the overflow
// ids 65534 and 65535, or (uid_t)-1.
func ParseRange(s string) (Range, error) {
	a, b, ok := strings.Cut(s, "-")
	first, err1 := strconv.ParseUint(a, 10, 32)
	last, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil || last < first {
		return Range{}, skilld.Errorf(skilld.EINVALID, "uid range %q: give FIRST-LAST, two numbers with FIRST <= LAST", s)
	}
	r := Range{First: uint32(first), Count: uint32(last-first) + 1}
	for _, bad := range []uint32{0, 65534, 65535, 1<<32 - 1} {
		if r.Contains(bad) {
			return Range{}, skilld.Errorf(skilld.EINVALID, "uid range %q holds %d, which no sandbox may run as", s, bad)
		}
	}
	return r, nil
}

// Pool hands out the uids of a range.
type Pool struct {
	dir string
	r   Range
}

// New opens the pool whose claims live in dir (created with mode 0700).
func New(dir string, r Range) (*Pool, error) {
	if r.Count == 0 {
		return nil, skilld.Errorf(skilld.EINVALID, "uid range is empty")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("uid pool: %w", err)
	}
	return &Pool{dir: dir, r: r}, nil
}

// Range is the pool's range.
func (p *Pool) Range() Range { return p.r }

func (p *Pool) link(uid uint32) string {
	return filepath.Join(p.dir, strconv.FormatUint(uint64(uid), 10))
}

// Claim gives sandbox id a uid no other claim holds. A full pool is
// EUNAVAILABLE.
func (p *Pool) Claim(id string) (uint32, error) {
	var b [4]byte
	rand.Read(b[:])
	start := binary.LittleEndian.Uint32(b[:]) % p.r.Count
	for i := range p.r.Count {
		uid := p.r.First + (start+i)%p.r.Count
		err := os.Symlink(id, p.link(uid))
		if err == nil {
			return uid, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return 0, fmt.Errorf("uid pool: claiming a uid: %w", err)
		}
	}
	return 0, skilld.Errorf(skilld.EUNAVAILABLE, "every uid of the sandbox range %s is in use by a sandbox; widen --sandbox-uids or let tasks end", p.r)
}

// Keep re-asserts id's claim on uid (a reopened sandbox): true when id
// holds it now, false when another sandbox does (or uid is outside the
// range), and the caller must claim another.
func (p *Pool) Keep(id string, uid uint32) (bool, error) {
	if !p.r.Contains(uid) {
		return false, nil
	}
	err := os.Symlink(id, p.link(uid))
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("uid pool: %w", err)
	}
	holder, err := os.Readlink(p.link(uid))
	return err == nil && holder == id, nil
}

// Release gives id's uid back, if id still holds it.
func (p *Pool) Release(id string, uid uint32) {
	if holder, err := os.Readlink(p.link(uid)); err == nil && holder == id {
		os.Remove(p.link(uid))
	}
}

// Sweep releases the claims of sandboxes that no longer exist (alive says
// whether one does): claims a process that died between removing its
// sandbox and releasing its uid left behind. Call it before handing out
// uids, with alive true for a sandbox being made (its folder exists before
// its claim).
func (p *Pool) Sweep(alive func(id string) bool) {
	entries, _ := os.ReadDir(p.dir)
	for _, e := range entries {
		uid, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil {
			continue
		}
		if holder, err := os.Readlink(p.link(uint32(uid))); err == nil && !alive(holder) {
			p.Release(holder, uint32(uid))
		}
	}
}
