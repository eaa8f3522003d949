package bwrap

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/internal/volume"
)

// HostRootName names the host's own system folders as a root.
const HostRootName = "host"

// Root is a root file system commands may run on.
type Root struct {
	// Name is how an agent picks it (config.sandbox.rootfs).
	Name string
	// Dir is its folder on the host; "/" is the host's own system
	// folders, shown as the curated view (systemDirs and etcEntries).
	Dir string
	// Digest identifies its content: "host", an image's manifest digest,
	// or TreeDigest of a folder.
	Digest string
}

// HostRoot is the host's own system folders: the default when no root is
// configured.
func HostRoot() Root { return Root{Name: HostRootName, Dir: "/", Digest: HostRootName} }

// DirRoot is the folder dir as a root named name, with its TreeDigest.
func DirRoot(name, dir string) (Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Root{}, err
	}
	d, err := TreeDigest(abs)
	if err != nil {
		return Root{}, skilld.Errorf(skilld.EINVALID, "root file system %s: %v", dir, err)
	}
	return Root{Name: name, Dir: abs, Digest: d}, nil
}

// TreeDigest is "tree-sha256:" over a listing of the folder (each entry's
// path, type and mode, size, modification time and link target): it
// changes when anything in the tree does, and costs a walk, not a read.
func TreeDigest(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		var target string
		if info.Mode()&fs.ModeSymlink != 0 {
			target, _ = os.Readlink(p)
		}
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00%d\x00%s\n", rel, info.Mode(), info.Size(), info.ModTime().UnixNano(), target)
		return nil
	})
	if err != nil {
		return "", err
	}
	return "tree-sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// rootView is a configured root with the bwrap arguments that show it,
// computed once.
type rootView struct {
	Root
	// args show the root's folders; etc its /etc; extra the operator's
	// read-only paths, bound after /etc.
	args  []string
	etc   *etcView
	extra []string
	// env is env(1) inside this root, for handing the agent's variables
	// past a helper, and prlimit util-linux's prlimit, which sets a
	// command's process limit inside its namespace ("" when the root has
	// none).
	env, prlimit string
}

// skippedTop are a root's top-level entries the sandbox makes itself or
// never shows.
var skippedTop = map[string]bool{"proc": true, "dev": true, "sys": true, "tmp": true, "run": true, "etc": true, "workspace": true, "lost+found": true, "boot": true, "root": true, "home": true}

// ownEtc are the /etc entries the sandbox brings itself, whatever the
// root has: its user database, and no password hashes.
var ownEtc = map[string]bool{"passwd": true, "group": true, "shadow": true, "gshadow": true, "subuid": true, "subgid": true, "passwd-": true, "group-": true, "shadow-": true, "gshadow-": true}

// newRootView checks a root and computes its arguments. A root must have
// a shell at /bin/sh. prlimit is the host's; src is where bwrap finds the
// root's folder (Dir, or its bind in the hub); etcDir is where its /etc is
// made ready.
func newRootView(r Root, src string, extra []string, prlimit, etcDir string) (*rootView, error) {
	v := &rootView{Root: r}
	own := []ownFile{{"passwd", []byte(passwd)}, {"group", []byte(group)}}
	if r.Dir == "/" {
		v.args, v.extra = systemArgs(), extraArgs(extra)
		v.env, v.prlimit = hostEnv(), prlimit
		var err error
		v.etc, err = newEtcView(etcDir, hostEtc(), own)
		return v, err
	}
	ro, err := os.OpenRoot(r.Dir)
	if err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "root file system %q (%s): %v", r.Name, r.Dir, err)
	}
	defer ro.Close()
	if !executableIn(ro, "bin/sh") {
		return nil, skilld.Errorf(skilld.EINVALID, "root file system %q (%s) has no /bin/sh: commands run with sh -c", r.Name, r.Dir)
	}
	for _, env := range []string{"usr/bin/env", "bin/env"} {
		if executableIn(ro, env) {
			v.env = "/" + env
			break
		}
	}
	if prlimit != "" && executableIn(ro, strings.TrimPrefix(prlimit, "/")) {
		v.prlimit = prlimit
	}
	top, err := os.ReadDir(r.Dir)
	if err != nil {
		return nil, err
	}
	for _, e := range top {
		if skippedTop[e.Name()] {
			continue
		}
		a, err := entryArgs(r.Dir, src, e.Name())
		if err != nil {
			return nil, err
		}
		v.args = append(v.args, a...)
	}
	etc, err := os.ReadDir(filepath.Join(r.Dir, "etc"))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	var entries []etcEntry
	for _, e := range etc {
		if !ownEtc[e.Name()] {
			entries = append(entries, etcEntry{name: e.Name(), src: filepath.Join(r.Dir, "etc", e.Name()), bind: filepath.Join(src, "etc", e.Name())})
		}
	}
	v.etc, err = newEtcView(etcDir, entries, own)
	return v, err
}

// executableIn reports whether rel is an executable file in the root,
// following links as the sandbox will: within the root, an absolute
// target starting from the root's top.
func executableIn(ro *os.Root, rel string) bool {
	for range 40 {
		info, err := ro.Lstat(rel)
		if err != nil {
			return false
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return info.Mode().IsRegular() && info.Mode()&0o111 != 0
		}
		target, err := ro.Readlink(rel)
		if err != nil {
			return false
		}
		if filepath.IsAbs(target) {
			rel = strings.TrimPrefix(filepath.Clean(target), "/")
		} else {
			rel = filepath.Join(filepath.Dir(rel), target)
		}
		// A link may climb above the top: inside the sandbox, / is its
		// own parent.
		for strings.HasPrefix(rel, "../") || rel == ".." {
			rel = strings.TrimPrefix(strings.TrimPrefix(rel, ".."), "/")
		}
	}
	return false
}

// entryArgs shows one entry of the root at the same place: a link as the
// same link, a folder or file bound read-only (from src, where bwrap finds
// the root).
func entryArgs(root, src, rel string) ([]string, error) {
	p := filepath.Join(root, rel)
	info, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			return nil, err
		}
		return []string{"--symlink", target, "/" + rel}, nil
	case info.IsDir() || info.Mode().IsRegular():
		return []string{"--ro-bind", filepath.Join(src, rel), "/" + rel}, nil
	}
	return nil, nil // devices, sockets and FIFOs of a root are not shown
}

// hostEnv is env(1) among the host's system folders, "" when there is
// none where the sandbox shows them.
func hostEnv() string {
	for _, env := range []string{"/usr/bin/env", "/bin/env"} {
		if info, err := os.Stat(env); err == nil && info.Mode()&0o111 != 0 {
			return env
		}
	}
	return ""
}

// roots checks the configured roots (the host's when none is) and returns
// their views, the first the default. prlimit is the host's; a root
// server's hub holds each root's folder within the task uids' reach.
func roots(cfg Config, prlimit string, h *hub, vol volume.Support) ([]*rootView, error) {
	etcDir := cfg.Root
	if h != nil {
		etcDir = h.dir
	}
	var out []*rootView
	ok := false
	defer func() {
		if !ok {
			closeRoots(out)
		}
	}()
	rs := cfg.Roots
	if len(rs) == 0 {
		rs = []Root{HostRoot()}
	}
	for _, r := range rs {
		if r.Name == "" || r.Dir == "" || r.Digest == "" {
			return nil, skilld.Errorf(skilld.EINVALID, "bwrap: a root needs a name, a folder and a digest: %+v", r)
		}
		if slices.ContainsFunc(out, func(v *rootView) bool { return v.Name == r.Name }) {
			return nil, skilld.Errorf(skilld.EINVALID, "bwrap: two roots are named %q", r.Name)
		}
		src := r.Dir
		if h != nil && r.Dir != "/" {
			src = filepath.Join(h.dir, ".roots", strconv.Itoa(len(out)))
			if err := os.MkdirAll(src, 0o755); err != nil {
				return nil, err
			}
			if err := vol.Bind(r.Dir, src, true); err != nil {
				return nil, fmt.Errorf("bwrap: the root file system %q: %w", r.Name, err)
			}
		}
		v, err := newRootView(r, src, cfg.ReadOnlyPaths, prlimit, etcDir)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	ok = true
	return out, nil
}

// closeRoots removes the roots' /etc folders.
func closeRoots(rs []*rootView) {
	for _, v := range rs {
		if v.etc != nil {
			v.etc.close()
		}
	}
}

// root finds a configured root by name ("" the default).
func (p *Provider) rootNamed(name string) (*rootView, error) {
	if name == "" {
		return p.roots[0], nil
	}
	for _, v := range p.roots {
		if v.Name == name {
			return v, nil
		}
	}
	names := make([]string, len(p.roots))
	for i, v := range p.roots {
		names[i] = v.Name
	}
	return nil, skilld.Errorf(skilld.EUNAVAILABLE, "the root file system %q is not one this server offers (it offers: %s)", name, strings.Join(names, ", "))
}

// info is the root as Info says it.
func (v *rootView) info() *sandbox.RootfsInfo {
	return &sandbox.RootfsInfo{Name: v.Name, Digest: v.Digest}
}
