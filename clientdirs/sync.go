package clientdirs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// Want is one skill a sync places: a version the workspace names now, or
// the one a lockfile pinned.
type Want struct {
	Name    string
	ID      string
	Version int
	Digest  string
	Source  Source
}

// Outcome is what a sync did with one skill.
type Outcome string

const (
	Written  Outcome = "written"    // its folders now hold the wanted version
	UpToDate Outcome = "up to date" // every folder already held it
	Removed  Outcome = "removed"    // gone from the workspace, so from its folders too
	Refused  Outcome = "refused"    // a folder was edited locally, or is not skilld's: nothing of the skill was touched
	Failed   Outcome = "failed"     // fetching or writing failed
)

// Result is one skill's outcome. Folders are the folders involved (those
// written, removed, or refused), relative to the lockfile's folder.
type Result struct {
	Name    string
	Version int
	Outcome Outcome
	Folders []string
	Reason  string
}

// Sync places skills into the targets sharing one lockfile folder.
type Sync struct {
	// Root is the folder of the lockfile; every target's Root.
	Root    string
	Targets []Target
	// Force overwrites (or removes) folders edited locally or not
	// written by skilld, instead of refusing the skill.
	Force bool
	// RemoveGone, when set, removes from every folder holding them the
	// skills the lockfile names from that source and the wanted list does
	// not: the wanted list is all that source has. Skills from other
	// servers or workspaces are left alone.
	RemoveGone *Source
	// Fetch returns the package of a wanted skill; it is only called for
	// skills a folder of which must be written.
	Fetch func(ctx context.Context, w Want) (*pack.Package, error)
}

// folderState is one folder of a skill and what is in it.
type folderState struct {
	p        Placement
	dir      string
	recorded bool // the lockfile lists it for this skill
	exists   bool
	digest   string
	err      error // reading it failed
}

// Run places every wanted skill (each at most once) in every target and in
// every folder the lockfile already records for it, updates the lockfile
// and writes it. A skill with a folder edited since skilld wrote it, or
// one skilld did not write, is refused whole unless Force. The error is
// for the lockfile itself; what happened to each skill is in the results.
func (s *Sync) Run(ctx context.Context, want []Want) ([]Result, error) {
	lock, _, err := ReadLockfile(s.Root)
	if err != nil {
		return nil, err
	}
	for _, t := range s.Targets {
		if t.Root != s.Root {
			return nil, skilld.Errorf(skilld.EINVALID, "target %q is recorded in %s, not in %s", t.Name, t.Root, s.Root)
		}
	}
	s.cleanLeftovers(lock)
	var results []Result
	wanted := map[string]bool{}
	for _, w := range want {
		if wanted[w.Name] {
			continue
		}
		wanted[w.Name] = true
		r, entry := s.place(ctx, lock.Find(w.Name), w)
		results = append(results, r)
		if entry != nil {
			setSkill(lock, *entry)
		}
	}
	if s.RemoveGone != nil {
		for _, e := range slices.Clone(lock.Skills) {
			if wanted[e.Name] || e.Source != *s.RemoveGone {
				continue
			}
			r := s.remove(ctx, e)
			results = append(results, r)
			if r.Outcome == Removed {
				lock.Skills = slices.DeleteFunc(lock.Skills, func(o Skill) bool { return o.Name == e.Name })
			}
		}
	}
	if err := WriteLockfile(s.Root, lock); err != nil {
		return results, err
	}
	return results, nil
}

// place brings one skill's folders to the wanted version. It returns the
// lockfile entry to record, or nil to keep the old one.
func (s *Sync) place(ctx context.Context, old *Skill, w Want) (Result, *Skill) {
	r := Result{Name: w.Name, Version: w.Version}
	fail := func(o Outcome, format string, args ...any) (Result, *Skill) {
		r.Outcome, r.Reason = o, fmt.Sprintf(format, args...)
		return r, nil
	}
	if err := CheckName(w.Name); err != nil {
		return fail(Failed, "%s", skilld.ErrorMessage(err))
	}
	if !ValidDigest(w.Digest) {
		return fail(Failed, "the server named no valid package digest for version %d", w.Version)
	}
	folders, err := s.folders(ctx, old, w.Name)
	if err != nil {
		return fail(Failed, "%s", skilld.ErrorMessage(err))
	}
	if len(folders) == 0 {
		return fail(Failed, "no folder to write it to: give a target")
	}
	var write, conflicts []folderState
	for _, f := range folders {
		switch {
		case !f.exists:
			write = append(write, f)
		case f.err == nil && f.digest == w.Digest:
			// already the wanted files, whoever wrote them
		case f.err == nil && f.recorded && f.digest == old.Digest:
			write = append(write, f)
		default:
			conflicts = append(conflicts, f)
			write = append(write, f)
		}
	}
	if len(conflicts) > 0 && !s.Force {
		r.Folders = folderNames(conflicts)
		return fail(Refused, "%s (pass --force to replace)", describeConflicts(conflicts))
	}
	entry := &Skill{Name: w.Name, ID: w.ID, Version: w.Version, Digest: w.Digest, Source: w.Source}
	for _, f := range folders {
		entry.Targets = append(entry.Targets, f.p)
	}
	if len(write) == 0 {
		r.Outcome, r.Folders = UpToDate, folderNames(folders)
		return r, entry
	}
	pkg, err := s.Fetch(ctx, w)
	if err != nil {
		return fail(Failed, "%s", errText(err))
	}
	if pkg.Digest() != w.Digest {
		return fail(Failed, "the files fetched have digest %s, not %s", pkg.Digest(), w.Digest)
	}
	for _, f := range write {
		if err := WriteSkill(ctx, f.dir, pkg); err != nil {
			r.Folders = []string{f.p.Folder}
			return fail(Failed, "writing %s: %s", f.p.Folder, errText(err))
		}
	}
	r.Outcome, r.Folders = Written, folderNames(write)
	return r, entry
}

// folders lists the folders of skill name: those the lockfile records and
// one per target, each read.
func (s *Sync) folders(ctx context.Context, old *Skill, name string) ([]folderState, error) {
	var out []folderState
	add := func(p Placement, recorded bool) {
		if i := slices.IndexFunc(out, func(f folderState) bool { return f.p.Folder == p.Folder }); i >= 0 {
			out[i].recorded = out[i].recorded || recorded
			return
		}
		out = append(out, folderState{p: p, dir: filepath.Join(s.Root, filepath.FromSlash(p.Folder)), recorded: recorded})
	}
	if old != nil {
		for _, p := range old.Targets {
			add(p, true)
		}
	}
	for _, t := range s.Targets {
		p, err := t.placement(name)
		if err != nil {
			return nil, err
		}
		add(p, false)
	}
	for i := range out {
		out[i].digest, out[i].exists, out[i].err = FolderDigest(ctx, out[i].dir)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return out, nil
}

// remove deletes the folders of a skill the workspace no longer has, unless
// one was edited since skilld wrote it (and not Force).
func (s *Sync) remove(ctx context.Context, e Skill) Result {
	r := Result{Name: e.Name, Version: e.Version}
	var gone, conflicts []folderState
	for _, p := range e.Targets {
		f := folderState{p: p, dir: filepath.Join(s.Root, filepath.FromSlash(p.Folder)), recorded: true}
		f.digest, f.exists, f.err = FolderDigest(ctx, f.dir)
		switch {
		case !f.exists:
		case f.err == nil && f.digest == e.Digest:
			gone = append(gone, f)
		default:
			conflicts = append(conflicts, f)
			gone = append(gone, f)
		}
	}
	if len(conflicts) > 0 && !s.Force {
		r.Outcome, r.Folders = Refused, folderNames(conflicts)
		r.Reason = "the workspace no longer has it, but " + describeConflicts(conflicts) + " (pass --force to remove)"
		return r
	}
	for _, f := range gone {
		if err := RemoveSkill(f.dir); err != nil {
			r.Outcome, r.Folders, r.Reason = Failed, []string{f.p.Folder}, "removing: "+errText(err)
			return r
		}
	}
	r.Outcome, r.Folders = Removed, folderNames(gone)
	return r
}

// cleanLeftovers removes the temporary folders an interrupted sync left in
// the skills folders this one touches. Failing to is not fatal: the
// leftovers only take room.
func (s *Sync) cleanLeftovers(lock *Lockfile) {
	dirs := map[string]bool{}
	for _, t := range s.Targets {
		dirs[t.Dir] = true
	}
	for _, e := range lock.Skills {
		for _, p := range e.Targets {
			dirs[filepath.Dir(filepath.Join(s.Root, filepath.FromSlash(p.Folder)))] = true
		}
	}
	for d := range dirs {
		CleanLeftovers(d)
	}
}

func setSkill(l *Lockfile, s Skill) {
	if old := l.Find(s.Name); old != nil {
		*old = s
		return
	}
	l.Skills = append(l.Skills, s)
}

func folderNames(fs []folderState) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.p.Folder
	}
	return out
}

// describeConflicts says why each folder may not be replaced.
func describeConflicts(fs []folderState) string {
	var parts []string
	for _, f := range fs {
		switch {
		case f.err != nil:
			parts = append(parts, fmt.Sprintf("%s cannot be read as a skill (%s)", f.p.Folder, errText(f.err)))
		case f.recorded:
			parts = append(parts, f.p.Folder+" was edited locally")
		default:
			parts = append(parts, f.p.Folder+" exists and was not written by skilld")
		}
	}
	return strings.Join(parts, "; ")
}

func errText(err error) string {
	var se *skilld.Error
	if errors.As(err, &se) && se.Code != skilld.EINTERNAL {
		return skilld.ErrorMessage(err)
	}
	return err.Error()
}
