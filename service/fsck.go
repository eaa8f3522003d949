package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/store"
)

// DefaultFsckGrace is how old an unreferenced blob must be before a repair
// removes it: younger ones may belong to an upload whose package row is not
// committed yet.
const DefaultFsckGrace = 24 * time.Hour

// fsckBatch is how many blob digests one reference query checks.
const fsckBatch = 500

type FsckParams struct {
	// Repair removes unreferenced blobs older than Grace, and temp files
	// that crashed uploads left. Damaged and missing blobs are reported
	// only: their bytes must come from an upload.
	Repair bool `json:"repair,omitempty" jsonschema:"remove unreferenced blobs older than the grace period, and stale temp files"`
	// Grace is a duration such as "24h" (default DefaultFsckGrace).
	Grace string `json:"grace,omitempty" jsonschema:"how old an unreferenced blob must be to be removed, such as 24h (the default)"`
	// Progress, when set, is called now and then while blobs are checked.
	Progress func(FsckProgress) `json:"-"`
}

// FsckProgress is how far a check has come.
type FsckProgress struct {
	Blobs int   `json:"blobs"`
	Bytes int64 `json:"bytes"`
}

// FsckReport is what a storage check found.
type FsckReport struct {
	Blobs    int   `json:"blobs"`
	Bytes    int64 `json:"bytes"`
	Packages int   `json:"packages"`
	// Damaged blobs read back different from their digest; UsedBy names
	// the package files holding them.
	Damaged []FsckBlob `json:"damaged"`
	// Missing blobs are named by a package file but absent.
	Missing []FsckBlob `json:"missing"`
	// BadPackages have a file list that does not add up to their digest.
	BadPackages []FsckPackage `json:"bad_packages"`
	// Unreferenced blobs no package and no task refers to.
	Unreferenced []FsckBlob `json:"unreferenced"`
	// Removed are the unreferenced blobs a repair deleted; the others were
	// younger than the grace period (or became referenced meanwhile).
	Removed          []string `json:"removed"`
	TempFilesRemoved int      `json:"temp_files_removed"`
	Seconds          float64  `json:"seconds"`
}

// OK reports whether nothing is damaged, missing or inconsistent.
func (r *FsckReport) OK() bool {
	return len(r.Damaged) == 0 && len(r.Missing) == 0 && len(r.BadPackages) == 0
}

// FsckBlob is one blob a check reports.
type FsckBlob struct {
	Digest  string    `json:"digest"`
	Size    int64     `json:"size,omitempty"`
	ModTime time.Time `json:"mod_time,omitzero"`
	Error   string    `json:"error,omitempty"`
	UsedBy  []string  `json:"used_by,omitempty"`
}

// FsckPackage is a package whose file list is inconsistent.
type FsckPackage struct {
	Digest  string `json:"digest"`
	Problem string `json:"problem"`
}

// Fsck checks the whole storage (instance admins only): every blob read
// back and verified against its digest, every package's file list against
// its digest and manifest, every file's blob present; and it reports
// blobs nothing refers to, removing those older than the grace period when
// asked to repair.
func (s *Service) Fsck(ctx context.Context, a Actor, p FsckParams) (*FsckReport, error) {
	if err := a.requireInstanceAdmin(); err != nil {
		return nil, err
	}
	grace := DefaultFsckGrace
	if p.Grace != "" {
		d, err := time.ParseDuration(p.Grace)
		if err != nil || d < 0 {
			return nil, invalidField("grace", "grace must be a duration such as 24h, not %q", p.Grace)
		}
		grace = d
	}
	start := s.cfg.Now()
	rep := &FsckReport{Damaged: []FsckBlob{}, Missing: []FsckBlob{}, BadPackages: []FsckPackage{}, Unreferenced: []FsckBlob{}, Removed: []string{}}
	present := map[string]blob.Info{}
	var batch []blob.Info
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		digests := make([]string, len(batch))
		for i, b := range batch {
			digests[i] = b.Digest
		}
		used, err := s.db.BlobReferenced(ctx, &store.BlobReferencedParams{Digests: digests})
		if err != nil {
			return err
		}
		for _, b := range batch {
			if !used[b.Digest] {
				rep.Unreferenced = append(rep.Unreferenced, FsckBlob{Digest: b.Digest, Size: b.Size, ModTime: b.ModTime})
			}
		}
		batch = batch[:0]
		return nil
	}
	damaged := map[string]string{}
	lastReport := time.Now()
	for c, err := range blob.Check(ctx, s.blobs, "") {
		if err != nil {
			return nil, fmt.Errorf("fsck: reading blobs: %w", err)
		}
		rep.Blobs++
		rep.Bytes += c.Size
		present[c.Digest] = c.Info
		if c.Damaged != nil {
			damaged[c.Digest] = c.Damaged.Error()
		}
		if batch = append(batch, c.Info); len(batch) == fsckBatch {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		if p.Progress != nil && (rep.Blobs%1000 == 0 || time.Since(lastReport) > 2*time.Second) {
			p.Progress(FsckProgress{Blobs: rep.Blobs, Bytes: rep.Bytes})
			lastReport = time.Now()
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	usedBy, err := s.fsckPackages(ctx, rep)
	if err != nil {
		return nil, err
	}
	for d, msg := range damaged {
		rep.Damaged = append(rep.Damaged, FsckBlob{Digest: d, Size: present[d].Size, Error: msg, UsedBy: usedBy[d]})
	}
	for d, users := range usedBy {
		if _, ok := present[d]; !ok {
			rep.Missing = append(rep.Missing, FsckBlob{Digest: d, UsedBy: users})
		}
	}
	sortBlobs(rep.Damaged)
	sortBlobs(rep.Missing)
	if p.Repair {
		if err := s.fsckRepair(ctx, rep, start.Add(-grace)); err != nil {
			return nil, err
		}
	}
	rep.Seconds = s.cfg.Now().Sub(start).Seconds()
	return rep, nil
}

// fsckPackages checks every package's file list against its digest and
// stored manifest, and returns which package files use each blob.
func (s *Service) fsckPackages(ctx context.Context, rep *FsckReport) (map[string][]string, error) {
	usedBy := map[string][]string{}
	after := ""
	for {
		page, err := s.db.PackageList(ctx, &store.PackageListParams{After: after, Limit: 500})
		if err != nil {
			return nil, err
		}
		for _, info := range page {
			rep.Packages++
			files, err := s.db.PackageFileList(ctx, &store.PackageFileListParams{Digest: info.Digest})
			if err != nil {
				return nil, err
			}
			_, manifest, err := s.db.PackageGet(ctx, &store.PackageGetParams{Digest: info.Digest})
			if err != nil {
				return nil, err
			}
			entries := make([]pack.Entry, len(files))
			for i, f := range files {
				entries[i] = pack.Entry{Path: f.Path, Size: f.Size, Digest: f.Digest, Exec: f.Exec}
				usedBy[f.Digest] = append(usedBy[f.Digest], info.Digest+":"+f.Path)
			}
			built, digest := pack.BuildManifest(entries)
			switch {
			case digest != info.Digest:
				rep.BadPackages = append(rep.BadPackages, FsckPackage{Digest: info.Digest, Problem: fmt.Sprintf("its %d files add up to %s", len(files), digest)})
			case !bytes.Equal(built, manifest):
				rep.BadPackages = append(rep.BadPackages, FsckPackage{Digest: info.Digest, Problem: "its stored manifest differs from its files"})
			case len(files) != info.FileCount:
				rep.BadPackages = append(rep.BadPackages, FsckPackage{Digest: info.Digest, Problem: fmt.Sprintf("it records %d files and lists %d", info.FileCount, len(files))})
			}
		}
		if len(page) < 500 {
			return usedBy, nil
		}
		after = page[len(page)-1].Digest
	}
}

// fsckRepair removes the unreferenced blobs stored before cutoff, checking
// the references again under the exclusive blob guard (an upload may have
// committed a package using one meanwhile), and stale temp files.
func (s *Service) fsckRepair(ctx context.Context, rep *FsckReport, cutoff time.Time) error {
	var old []string
	for _, b := range rep.Unreferenced {
		if !b.ModTime.IsZero() && b.ModTime.Before(cutoff) {
			old = append(old, b.Digest)
		}
	}
	if len(old) > 0 {
		err := s.packages.exclusively(ctx, func(ctx context.Context, q store.Querier) error {
			used, err := q.BlobReferenced(ctx, &store.BlobReferencedParams{Digests: old})
			if err != nil {
				return err
			}
			var errs []error
			for _, d := range old {
				if used[d] {
					continue
				}
				if err := s.blobs.Delete(ctx, d); err != nil {
					errs = append(errs, err)
					continue
				}
				rep.Removed = append(rep.Removed, d)
			}
			return errors.Join(errs...)
		})
		if err != nil {
			return fmt.Errorf("fsck: removing unreferenced blobs: %w", err)
		}
	}
	if tc, ok := s.blobs.(blob.TempCleaner); ok {
		n, err := tc.RemoveStaleTemp(ctx)
		if err != nil {
			return fmt.Errorf("fsck: removing stale temp files: %w", err)
		}
		rep.TempFilesRemoved = n
	}
	return nil
}

func sortBlobs(b []FsckBlob) {
	slices.SortFunc(b, func(x, y FsckBlob) int { return strings.Compare(x.Digest, y.Digest) })
}
