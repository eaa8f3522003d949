package clientdirs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/skillmd"
)

// LockfileName is the lockfile's name in its folder.
const LockfileName = "skills.lock.json"

// LockfileVersion is the format version this package reads and writes.
const LockfileVersion = 1

// maxLockfileSize bounds what Read loads: a lockfile names skills, not
// their files, so even thousands fit in far less.
const maxLockfileSize = 8 << 20

// Lockfile records which version of which skill a sync wrote into which
// folders (docs/CLIENTS.md). Skills are sorted by name when written.
type Lockfile struct {
	Version int     `json:"lockfile_version"`
	Skills  []Skill `json:"skills"`
}

// Skill is one skill in the lockfile: the workspace skill, the version and
// package digest written, where it came from, and the folders holding it.
// Every folder listed holds exactly that package, unless edited since.
type Skill struct {
	Name    string      `json:"name"`
	ID      string      `json:"id"`
	Version int         `json:"version"`
	Digest  string      `json:"digest"`
	Source  Source      `json:"source"`
	Targets []Placement `json:"targets"`
}

// Source is the server and workspace a skill was fetched from.
type Source struct {
	Server    string `json:"server"`
	Workspace string `json:"workspace"`
}

// Placement is one folder holding a skill: the target it was written for
// and the folder, slash-separated and relative to the lockfile's folder.
type Placement struct {
	Target string `json:"target"`
	Folder string `json:"folder"`
}

// Find returns the skill named name, or nil.
func (l *Lockfile) Find(name string) *Skill {
	for i := range l.Skills {
		if l.Skills[i].Name == name {
			return &l.Skills[i]
		}
	}
	return nil
}

// Parse reads a lockfile, refusing anything it would not write itself:
// unknown fields, a missing or newer format version, invalid names,
// digests, sources, or folders that are not a skill's folder inside the
// lockfile's own folder (a lockfile from elsewhere must not point a sync
// at other files).
func Parse(data []byte) (*Lockfile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var l Lockfile
	if err := dec.Decode(&l); err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "%s: not a valid lockfile: %w", LockfileName, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, skilld.Errorf(skilld.EINVALID, "%s: not a valid lockfile: something follows the JSON object", LockfileName)
	}
	if err := l.Check(); err != nil {
		return nil, err
	}
	return &l, nil
}

// Check reports the first thing wrong with the lockfile, naming it.
func (l *Lockfile) Check() error {
	switch {
	case l.Version == 0:
		return invalidLock("lockfile_version", "is missing")
	case l.Version > LockfileVersion:
		return invalidLock("lockfile_version", "is %d: this lockfile was written by a newer skilld (this one reads version %d)", l.Version, LockfileVersion)
	case l.Version != LockfileVersion:
		return invalidLock("lockfile_version", "is %d, not %d", l.Version, LockfileVersion)
	}
	names := map[string]bool{}
	for i, s := range l.Skills {
		field := fmt.Sprintf("skills[%d]", i)
		if err := s.check(field); err != nil {
			return err
		}
		if names[s.Name] {
			return invalidLock(field+".name", "%q is listed twice", s.Name)
		}
		names[s.Name] = true
	}
	return nil
}

func (s *Skill) check(field string) error {
	if err := CheckName(s.Name); err != nil {
		return invalidLock(field+".name", "%s", skilld.ErrorMessage(err))
	}
	switch {
	case s.ID == "" || strings.ContainsFunc(s.ID, isControl):
		return invalidLock(field+".id", "must be a skill ID")
	case s.Version < 1:
		return invalidLock(field+".version", "must be a version number, 1 or more, not %d", s.Version)
	case !ValidDigest(s.Digest):
		return invalidLock(field+".digest", "%q is not a package digest (sha256: and 64 lowercase hex digits)", s.Digest)
	case !validServer(s.Source.Server):
		return invalidLock(field+".source.server", "%q is not an http or https URL", s.Source.Server)
	case s.Source.Workspace == "" || strings.ContainsFunc(s.Source.Workspace, isControl):
		return invalidLock(field+".source.workspace", "must name a workspace")
	case len(s.Targets) == 0:
		return invalidLock(field+".targets", "is empty: a skill in the lockfile is in one folder at least")
	}
	folders := map[string]bool{}
	for j, p := range s.Targets {
		tf := fmt.Sprintf("%s.targets[%d]", field, j)
		if p.Target == "" || strings.ContainsFunc(p.Target, isControl) {
			return invalidLock(tf+".target", "must name the target")
		}
		if err := checkFolder(p.Folder, s.Name); err != nil {
			return invalidLock(tf+".folder", "%s", skilld.ErrorMessage(err))
		}
		if folders[p.Folder] {
			return invalidLock(tf+".folder", "%q is listed twice", p.Folder)
		}
		folders[p.Folder] = true
	}
	return nil
}

func invalidLock(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &skilld.Error{Code: skilld.EINVALID, Message: fmt.Sprintf("%s: %s %s", LockfileName, field, msg),
		Details: []skilld.Detail{{Field: field, Message: msg}}}
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// CheckName refuses a skill name that cannot be a folder of its own in a
// skills folder: the Agent Skills name rules (which leave only letters,
// digits and hyphens) and the package path rules.
func CheckName(name string) error {
	if name == "" {
		return skilld.Errorf(skilld.EINVALID, "the skill name is empty")
	}
	if problems := skillmd.NameProblems(name); len(problems) > 0 {
		return skilld.Errorf(skilld.EINVALID, "%q cannot name a skill folder: %s", name, problems[0])
	}
	if err := pack.CheckPath(name); err != nil || strings.Contains(name, "/") {
		return skilld.Errorf(skilld.EINVALID, "%q cannot name a skill folder", name)
	}
	return nil
}

// checkFolder refuses a recorded folder that is not "<skills folder>/name"
// strictly inside the lockfile's folder.
func checkFolder(folder, name string) error {
	if err := pack.CheckPath(folder); err != nil {
		return skilld.Errorf(skilld.EINVALID, "folder %q must be a relative path inside the lockfile's folder: %s", folder, skilld.ErrorMessage(err))
	}
	dir, base := path.Split(folder)
	if base != name || dir == "" {
		return skilld.Errorf(skilld.EINVALID, "folder %q must be a skills folder followed by the skill's name %q", folder, name)
	}
	return nil
}

// ValidDigest reports whether d is a package digest: "sha256:" and 64
// lowercase hex digits.
func ValidDigest(d string) bool {
	hex, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	for _, c := range hex {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func validServer(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

// Marshal returns the lockfile as written: indented JSON, skills sorted by
// name and their folders by path, so the same state always gives the same
// bytes and a diff shows only what changed.
func (l *Lockfile) Marshal() ([]byte, error) {
	out := Lockfile{Version: LockfileVersion, Skills: make([]Skill, len(l.Skills))}
	for i, s := range l.Skills {
		s.Targets = slices.Clone(s.Targets)
		slices.SortFunc(s.Targets, func(a, b Placement) int { return strings.Compare(a.Folder, b.Folder) })
		out.Skills[i] = s
	}
	slices.SortFunc(out.Skills, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	if err := out.Check(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ReadLockfile reads the lockfile in folder root. A missing one is an
// empty lockfile; exists says whether there was one.
func ReadLockfile(root string) (l *Lockfile, exists bool, err error) {
	p := filepath.Join(root, LockfileName)
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lockfile{Version: LockfileVersion, Skills: []Skill{}}, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the lockfile: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLockfileSize+1))
	if err != nil {
		return nil, true, fmt.Errorf("reading %s: %w", p, err)
	}
	if len(data) > maxLockfileSize {
		return nil, true, skilld.Errorf(skilld.ETOOLARGE, "%s is over %d MiB: not a lockfile skilld wrote", p, maxLockfileSize>>20)
	}
	l, err = Parse(data)
	if err != nil {
		return nil, true, skilld.Errorf(skilld.ErrorCode(err), "%s: %s", root, skilld.ErrorMessage(err))
	}
	return l, true, nil
}

// WriteLockfile writes l as the lockfile in root, atomically (a temporary
// file renamed over it), and only when its bytes change.
func WriteLockfile(root string, l *Lockfile) error {
	data, err := l.Marshal()
	if err != nil {
		return err
	}
	p := filepath.Join(root, LockfileName)
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("writing the lockfile: %w", err)
	}
	f, err := os.CreateTemp(root, ".skilld-new-"+LockfileName+"-")
	if err != nil {
		return fmt.Errorf("writing the lockfile: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return nil
}
