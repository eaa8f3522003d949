package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox/bwrap"
	"github.com/skilld/skilld/sandbox/rootfs"
)

// rootfsRef is one --sandbox-rootfs: [NAME=]REF, REF a folder, an OCI
// image archive, or "host" (the host's own system folders).
type rootfsRef struct{ name, ref string }

// parseRootfs reads the flag's values; the first is the default root.
func parseRootfs(values []string) ([]rootfsRef, error) {
	var out []rootfsRef
	for _, v := range values {
		name, ref, ok := strings.Cut(v, "=")
		if !ok {
			name, ref = "", v
		}
		if ref == "" {
			return nil, skilld.Errorf(skilld.EINVALID, "--sandbox-rootfs %q: give a folder, an image archive or host", v)
		}
		if name == "" {
			name = rootfsName(ref)
		}
		if !skilld.ValidRootfsName(name) {
			return nil, skilld.Errorf(skilld.EINVALID, "--sandbox-rootfs %q: a root's name is letters, digits, '.', '_' and '-' (NAME=REF names one)", v)
		}
		for _, o := range out {
			if o.name == name {
				return nil, skilld.Errorf(skilld.EINVALID, "--sandbox-rootfs: two roots are named %q; name them with NAME=REF", name)
			}
		}
		out = append(out, rootfsRef{name, ref})
	}
	return out, nil
}

// rootfsName is a root's name from its reference: "host", or the file or
// folder name without its archive endings.
func rootfsName(ref string) string {
	if ref == bwrap.HostRootName {
		return ref
	}
	base := filepath.Base(filepath.Clean(ref))
	for _, ext := range []string{".tar", ".oci"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// openRoots resolves the roots: folders used where they are, archives
// unpacked once into the store at storeDir (keyed by image digest). It says
// what it does on w, as unpacking a large image takes a while.
func openRoots(ctx context.Context, w io.Writer, refs []rootfsRef, storeDir string) ([]bwrap.Root, error) {
	var out []bwrap.Root
	var store *rootfs.Store
	for _, r := range refs {
		if r.ref == bwrap.HostRootName {
			root := bwrap.HostRoot()
			root.Name = r.name
			out = append(out, root)
			continue
		}
		info, err := os.Stat(r.ref)
		if err != nil {
			return nil, skilld.Errorf(skilld.EINVALID, "--sandbox-rootfs %s: %v", r.ref, err)
		}
		if info.IsDir() {
			root, err := bwrap.DirRoot(r.name, r.ref)
			if err != nil {
				return nil, err
			}
			out = append(out, root)
			continue
		}
		if store == nil {
			if store, err = rootfs.Open(storeDir, rootfs.Limits{}); err != nil {
				return nil, err
			}
		}
		fmt.Fprintf(w, "skilld: unpacking the root file system %s from %s (once per image)\n", r.name, r.ref)
		img, err := store.Unpack(ctx, r.ref)
		if err != nil {
			return nil, fmt.Errorf("--sandbox-rootfs %s: %w", r.ref, err)
		}
		out = append(out, bwrap.Root{Name: r.name, Dir: img.Dir, Digest: img.Digest})
	}
	return out, nil
}
