package rootfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox/rootfs"
)

// The store's temporary tree is <base>/store/.tmp-x/rootfs, so a link to
// "../../../outside" from its top is <base>/outside, where env keeps
// secret: an escape would show there.
const outRel = "../../../outside"

// hostileLayers are layer stacks that try to write or link outside the
// tree. Each must be refused, leave nothing in the store, and leave
// <base>/outside alone. abs is <base>/outside.
func hostileLayers(t testing.TB, abs string) map[string]struct {
	layers [][]tarEntry
	want   string
} {
	return map[string]struct {
		layers [][]tarEntry
		want   string
	}{
		"dotdot":                  {[][]tarEntry{{file("../../outside/pwned", "x")}}, "leaves the root"},
		"dotdot-deep":             {[][]tarEntry{{file("a/../../outside/pwned", "x")}}, "leaves the root"},
		"absolute-dotdot":         {[][]tarEntry{{file("/../outside/pwned", "x")}}, "leaves the root"},
		"dotdot-dir":              {[][]tarEntry{{dir("../x")}}, "leaves the root"},
		"symlink-out-then-write":  {[][]tarEntry{{symlink("evil", outRel), file("evil/pwned", "x")}}, `"evil/pwned" goes through a link that leads out of the root`},
		"symlink-etc":             {[][]tarEntry{{symlink("evil", "../../../../etc"), file("evil/passwd", "x")}}, `"evil/passwd" goes through a link that leads out of the root`},
		"symlink-absolute":        {[][]tarEntry{{symlink("evil", abs), file("evil/pwned", "x")}}, `"evil/pwned" goes through a link that leads out of the root`},
		"symlink-across-layers":   {[][]tarEntry{{symlink("evil", outRel)}, {file("evil/pwned", "x")}}, `"evil/pwned" goes through a link that leads out of the root`},
		"symlink-dir-entry":       {[][]tarEntry{{symlink("evil", outRel), dir("evil/sub")}}, `"evil/sub" goes through a link that leads out of the root`},
		"symlink-then-link":       {[][]tarEntry{{symlink("evil", outRel), symlink("evil/l", "x")}}, `"evil/l" goes through a link that leads out of the root`},
		"symlink-then-whiteout":   {[][]tarEntry{{symlink("evil", outRel)}, {whiteout("evil/secret")}}, `"evil/secret" goes through a link that leads out of the root`},
		"hardlink-dotdot":         {[][]tarEntry{{hardlink("x", "../../../outside/secret")}}, "leaves the root"},
		"hardlink-through-link":   {[][]tarEntry{{symlink("evil", outRel), hardlink("x", "evil/secret")}}, `"x" goes through a link that leads out of the root`},
		"hardlink-absolute-link":  {[][]tarEntry{{symlink("evil", abs), hardlink("x", "evil/secret")}}, `"x" goes through a link that leads out of the root`},
		"hardlink-missing":        {[][]tarEntry{{hardlink("x", "nowhere")}}, "not in the image"},
		"hardlink-to-dir":         {[][]tarEntry{{dir("d"), hardlink("x", "d")}}, `"x"`},
		"whiteout-dotdot":         {[][]tarEntry{{file("a/.wh..", "")}}, "names no entry"},
		"whiteout-escaping":       {[][]tarEntry{{file("../.wh.outside", "")}}, "leaves the root"},
		"file-over-root":          {[][]tarEntry{{file(".", "x")}}, "root itself"},
		"file-where-dir-expected": {[][]tarEntry{{file("f", "x"), file("f/g", "y")}}, `"f/g"`},
	}
}

func TestHostileEntries(t *testing.T) {
	probe := newEnv(t, rootfs.Limits{})
	for name := range hostileLayers(t, probe.outside) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, rootfs.Limits{})
			// Each case's absolute links aim at its own env.
			c := hostileLayers(t, e.outside)[name]
			var layers []layer
			for _, entries := range c.layers {
				layers = append(layers, buildLayer(t, gz, entries...))
			}
			e.refused(t, ociArchive(t, layers...), skilld.EINVALID, c.want)
		})
	}
}

// TestSymlinkOutIsKept: a link leading out is made as it is (it resolves
// inside the sandbox later); only writing through it is refused.
func TestSymlinkOutIsKept(t *testing.T) {
	e := newEnv(t, rootfs.Limits{})
	r := e.mustUnpack(t, ociArchive(t,
		buildLayer(t, plain, symlink("evil", outRel), symlink("etc", "/etc")),
		// An opaque marker in a link is no folder of the tree: nothing to hide.
		buildLayer(t, plain, opaque("evil"), opaque("etc")),
	))
	diffTrees(t, treeOf(t, r.Dir), map[string]string{".": "d 0755", "evil": "l " + outRel, "etc": "l /etc"})
	e.checkOutside(t)
}

func TestDigestMismatch(t *testing.T) {
	// Plain tars, so that the bad layer has the good one's size and only
	// its digest tells them apart.
	good := buildLayer(t, plain, file("a", "good"))
	bad := buildLayer(t, plain, file("a", "evil"))
	t.Run("layer", func(t *testing.T) {
		o := newOCI()
		d := o.image(t, goarch, good)
		o.blobs[good.digest()] = bad.blob // stored under the good layer's name
		e := newEnv(t, rootfs.Limits{})
		e.refused(t, o.archive(t, d), skilld.EINVALID, "does not match its digest", good.digest(), "layer 1 of 1 (blobs/sha256/"+good.digest()[len("sha256:"):])
	})
	t.Run("layer-truncated", func(t *testing.T) {
		o := newOCI()
		d := o.image(t, goarch, good)
		o.blobs[good.digest()] = good.blob[:len(good.blob)/2]
		e := newEnv(t, rootfs.Limits{})
		e.refused(t, o.archive(t, d), skilld.EINVALID, good.digest()[len("sha256:"):], "is 1024 bytes, its descriptor says 2048")
	})
	t.Run("manifest", func(t *testing.T) {
		o := newOCI()
		d := o.image(t, goarch, good)
		o.blobs[d.Digest] = bytes.Replace(o.blobs[d.Digest], []byte(`"schemaVersion":2`), []byte(`"schemaVersion":3`), 1)
		e := newEnv(t, rootfs.Limits{})
		e.refused(t, o.archive(t, d), skilld.EINVALID, "image manifest", d.Digest, "does not match its digest")
	})
	t.Run("config", func(t *testing.T) {
		o := newOCI()
		d := o.image(t, goarch, good)
		for dg, b := range o.blobs {
			if bytes.Contains(b, []byte(`"diff_ids"`)) {
				o.blobs[dg] = bytes.Replace(b, []byte(`"linux"`), []byte(`"Linux"`), 1)
			}
		}
		e := newEnv(t, rootfs.Limits{})
		e.refused(t, o.archive(t, d), skilld.EINVALID, "image config", "does not match its digest")
	})
	t.Run("docker-layer", func(t *testing.T) {
		plainGood := buildLayer(t, plain, file("a", "good"))
		b := dockerArchive(t, plainGood)
		b = bytes.Replace(b, []byte("good"), []byte("evil"), 1)
		e := newEnv(t, rootfs.Limits{})
		e.refused(t, b, skilld.EINVALID, "/layer.tar): the blob does not match its digest", plainGood.diffID)
	})
}

func TestLimits(t *testing.T) {
	var many []tarEntry
	for i := range 20 {
		many = append(many, file(fmt.Sprintf("f%02d", i), "x"))
	}
	cases := map[string]struct {
		lim    rootfs.Limits
		layers []layer
		want   string
	}{
		"files":           {rootfs.Limits{MaxFiles: 10}, []layer{buildLayer(t, plain, many...)}, "more than 10 entries (Limits.MaxFiles)"},
		"files-in-layers": {rootfs.Limits{MaxFiles: 25}, []layer{buildLayer(t, plain, many...), buildLayer(t, gz, many...)}, "Limits.MaxFiles"},
		"bytes-bomb":      {rootfs.Limits{MaxBytes: 1 << 20}, []layer{buildLayer(t, gz, zeros("bomb", 8<<20))}, "more than 1048576 bytes of file content (Limits.MaxBytes)"},
		"bytes-zstd-bomb": {rootfs.Limits{MaxBytes: 1 << 20}, []layer{buildLayer(t, zst, zeros("bomb", 8<<20))}, "Limits.MaxBytes"},
		"bytes-in-layers": {rootfs.Limits{MaxBytes: 100}, []layer{buildLayer(t, gz, zeros("a", 60)), buildLayer(t, gz, zeros("a", 60))}, "Limits.MaxBytes"},
		"layers": {rootfs.Limits{MaxLayers: 2}, []layer{
			buildLayer(t, plain, file("a", "1")), buildLayer(t, plain, file("b", "2")), buildLayer(t, plain, file("c", "3")),
		}, "3 layers, over the limit of 2 (Limits.MaxLayers)"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, c.lim)
			e.refused(t, ociArchive(t, c.layers...), skilld.ETOOLARGE, c.want)
		})
	}
	t.Run("at-the-limits", func(t *testing.T) {
		e := newEnv(t, rootfs.Limits{MaxFiles: 20, MaxBytes: 20, MaxLayers: 1})
		e.mustUnpack(t, ociArchive(t, buildLayer(t, plain, many...)))
	})
}

func TestNotAnImage(t *testing.T) {
	var gzipped bytes.Buffer
	gzipped.Write(buildLayer(t, gz, file("x", "x")).blob)
	cases := map[string]struct {
		b    []byte
		want string
	}{
		"empty":          {nil, "holds no files"},
		"garbage":        {bytes.Repeat([]byte("not a tar "), 100), "not a valid tar file"},
		"gzip":           {gzipped.Bytes(), "gzip-compressed: decompress it first"},
		"no-index":       {tarOf(t, map[string][]byte{"hello": []byte("hi")}, nil), "neither index.json"},
		"bad-index-json": {tarOf(t, map[string][]byte{"index.json": []byte("{")}, nil), "not valid JSON"},
		"empty-index":    {tarOf(t, map[string][]byte{"index.json": []byte(`{"manifests":[]}`)}, nil), "lists no image"},
		"missing-blob":   {tarOf(t, map[string][]byte{"index.json": []byte(`{"manifests":[{"digest":"sha256:` + strings.Repeat("a", 64) + `","size":2}]}`)}, nil), "is not in the archive"},
		"sha512":         {tarOf(t, map[string][]byte{"index.json": []byte(`{"manifests":[{"digest":"sha512:` + strings.Repeat("a", 128) + `"}]}`)}, nil), "only sha256"},
		"layer-not-tar": {func() []byte {
			o := newOCI()
			l := layer{blob: []byte("this is no tar at all, not even close, padding padding padding")}
			return o.archive(t, o.image(t, goarch, l))
		}(), "not a valid layer"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, rootfs.Limits{})
			e.refused(t, c.b, skilld.EINVALID, c.want)
		})
	}
	t.Run("missing-file", func(t *testing.T) {
		e := newEnv(t, rootfs.Limits{})
		_, err := e.store.Unpack(t.Context(), filepath.Join(e.base, "nope.tar"))
		if skilld.ErrorCode(err) != skilld.EINVALID || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("got %v, want EINVALID wrapping not-exist", err)
		}
		e.checkEmpty(t)
	})
}
