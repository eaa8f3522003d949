package rootfs_test

// The image archive builder the tests use: layer tars (plain, gzip, zstd)
// from a list of entries, then an OCI image layout (as podman save, skopeo
// and docker 25+ write it) or a legacy docker save layout around them, in a
// tar. Everything is deterministic (fixed times, sorted names), so that the
// fuzz seeds written from it can be checked against it.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// goarch is the architecture of the images the tests unpack.
const goarch = runtime.GOARCH

// testTime is the time of every entry.
var testTime = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// tarEntry is one entry of a layer's tar.
type tarEntry struct {
	name string
	typ  byte
	mode int64
	body string
	size int64 // for a regular file with no body: that many zero bytes
	link string
}

func file(name, body string) tarEntry {
	return tarEntry{name: name, typ: tar.TypeReg, mode: 0o644, body: body}
}

func fileMode(name, body string, mode int64) tarEntry {
	return tarEntry{name: name, typ: tar.TypeReg, mode: mode, body: body}
}

func zeros(name string, size int64) tarEntry {
	return tarEntry{name: name, typ: tar.TypeReg, mode: 0o644, size: size}
}

func dir(name string) tarEntry { return dirMode(name, 0o755) }

func dirMode(name string, mode int64) tarEntry {
	return tarEntry{name: name + "/", typ: tar.TypeDir, mode: mode}
}

func symlink(name, target string) tarEntry {
	return tarEntry{name: name, typ: tar.TypeSymlink, mode: 0o777, link: target}
}

func hardlink(name, target string) tarEntry {
	return tarEntry{name: name, typ: tar.TypeLink, mode: 0o644, link: target}
}

func node(name string, typ byte) tarEntry {
	return tarEntry{name: name, typ: typ, mode: 0o666}
}

// whiteout hides name of lower layers.
func whiteout(name string) tarEntry {
	d, base := path.Split(name)
	return file(d+".wh."+base, "")
}

// opaque hides everything lower layers have in folder d.
func opaque(d string) tarEntry { return file(path.Join(d, ".wh..wh..opq"), "") }

// layer is one layer blob as stored, and the digest of its tar.
type layer struct {
	blob   []byte
	diffID string
}

// Compressions of a layer.
const (
	plain = ""
	gz    = "gzip"
	zst   = "zstd"
)

// buildLayer writes entries as a tar, compressed with comp, streaming (so
// that a bomb of zeros never exists uncompressed in memory).
func buildLayer(tb testing.TB, comp string, entries ...tarEntry) layer {
	tb.Helper()
	var out bytes.Buffer
	var w io.WriteCloser = nopCloser{&out}
	switch comp {
	case gz:
		w = gzip.NewWriter(&out)
	case zst:
		zw, err := zstd.NewWriter(&out, zstd.WithEncoderConcurrency(1))
		if err != nil {
			tb.Fatal(err)
		}
		w = zw
	}
	diff := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(w, diff))
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link, ModTime: testTime}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.body)) + e.size
		}
		if err := tw.WriteHeader(h); err != nil {
			tb.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			if _, err := io.WriteString(tw, e.body); err != nil {
				tb.Fatal(err)
			}
			if _, err := io.CopyN(tw, zeroReader{}, e.size); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return layer{blob: out.Bytes(), diffID: "sha256:" + hex.EncodeToString(diff.Sum(nil))}
}

// digest is the layer blob's digest.
func (l layer) digest() string { return digestOf(l.blob) }

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// ociDesc and ociPlatform are written here independently of the package's
// own types, so that a wrong JSON name there fails the tests.
type ociDesc struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *ociPlatform      `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type ociPlatform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Variant      string `json:"variant,omitempty"`
}

type ociIndex struct {
	SchemaVersion int       `json:"schemaVersion"`
	MediaType     string    `json:"mediaType"`
	Manifests     []ociDesc `json:"manifests"`
}

type ociManifest struct {
	SchemaVersion int       `json:"schemaVersion"`
	MediaType     string    `json:"mediaType"`
	Config        ociDesc   `json:"config"`
	Layers        []ociDesc `json:"layers"`
}

type imageConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	RootFS       struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

func configOf(arch string, layers []layer) imageConfig {
	c := imageConfig{Architecture: arch, OS: "linux"}
	c.RootFS.Type = "layers"
	c.RootFS.DiffIDs = []string{}
	for _, l := range layers {
		c.RootFS.DiffIDs = append(c.RootFS.DiffIDs, l.diffID)
	}
	return c
}

type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

const (
	mtIndex    = "application/vnd.oci.image.index.v1+json"
	mtManifest = "application/vnd.oci.image.manifest.v1+json"
	mtConfig   = "application/vnd.oci.image.config.v1+json"
)

// ociLayout collects the blobs of an OCI image layout.
type ociLayout struct {
	blobs map[string][]byte // digest → bytes
}

func newOCI() *ociLayout { return &ociLayout{blobs: map[string][]byte{}} }

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// blob stores b and returns its descriptor.
func (o *ociLayout) blob(mediaType string, b []byte) ociDesc {
	d := digestOf(b)
	o.blobs[d] = b
	return ociDesc{MediaType: mediaType, Digest: d, Size: int64(len(b))}
}

// image stores an image of arch made of layers (its config, its
// manifest) and returns the manifest's descriptor, with its platform.
func (o *ociLayout) image(tb testing.TB, arch string, layers ...layer) ociDesc {
	tb.Helper()
	m := ociManifest{SchemaVersion: 2, MediaType: mtManifest, Config: o.blob(mtConfig, mustJSON(tb, configOf(arch, layers)))}
	for _, l := range layers {
		mt := "application/vnd.oci.image.layer.v1.tar"
		switch {
		case bytes.HasPrefix(l.blob, []byte{0x1f, 0x8b}):
			mt += "+gzip"
		case bytes.HasPrefix(l.blob, []byte{0x28, 0xb5, 0x2f, 0xfd}):
			mt += "+zstd"
		}
		m.Layers = append(m.Layers, o.blob(mt, l.blob))
	}
	d := o.blob(mtManifest, mustJSON(tb, m))
	d.Platform = &ociPlatform{Architecture: arch, OS: "linux"}
	return d
}

// index stores an image index (a manifest list) of ms.
func (o *ociLayout) index(tb testing.TB, ms ...ociDesc) ociDesc {
	tb.Helper()
	return o.blob(mtIndex, mustJSON(tb, ociIndex{SchemaVersion: 2, MediaType: mtIndex, Manifests: ms}))
}

// archive writes the layout as a tar: oci-layout, index.json listing top,
// and every blob.
func (o *ociLayout) archive(tb testing.TB, top ...ociDesc) []byte {
	tb.Helper()
	files := map[string][]byte{
		"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`),
		"index.json": mustJSON(tb, ociIndex{SchemaVersion: 2, MediaType: mtIndex, Manifests: top}),
	}
	for d, b := range o.blobs {
		files["blobs/sha256/"+d[len("sha256:"):]] = b
	}
	return tarOf(tb, files, nil)
}

// ociArchive is the usual case: one image of this machine's architecture.
func ociArchive(tb testing.TB, layers ...layer) []byte {
	tb.Helper()
	o := newOCI()
	d := o.image(tb, runtime.GOARCH, layers...)
	d.Annotations = map[string]string{"org.opencontainers.image.ref.name": "latest"}
	return o.archive(tb, d)
}

// dockerArchive writes docker save's legacy layout of one image: a folder
// per layer holding layer.tar (plain tars: their digests are the config's
// diff_ids), the config named <hex>.json, and manifest.json. A layer
// listed twice is stored once, the second folder's layer.tar a symbolic
// link to the first, as docker does.
func dockerArchive(tb testing.TB, layers ...layer) []byte {
	tb.Helper()
	cfg := mustJSON(tb, configOf(runtime.GOARCH, layers))
	cfgName := digestOf(cfg)[len("sha256:"):] + ".json"
	files := map[string][]byte{cfgName: cfg}
	links := map[string]string{}
	var names []string
	first := map[string]string{}
	for i, l := range layers {
		id := fmt.Sprintf("%064x", i+1)
		name := id + "/layer.tar"
		files[id+"/VERSION"] = []byte("1.0")
		files[id+"/json"] = []byte(`{"id":"` + id + `"}`)
		if prev, ok := first[l.diffID]; ok {
			links[name] = "../" + prev
		} else {
			first[l.diffID] = name
			files[name] = l.blob
		}
		names = append(names, name)
	}
	files["manifest.json"] = mustJSON(tb, []dockerManifest{{Config: cfgName, RepoTags: []string{"test:latest"}, Layers: names}})
	return tarOf(tb, files, links)
}

// tarOf writes files and symbolic links, sorted by name, as a tar.
func tarOf(tb testing.TB, files map[string][]byte, links map[string]string) []byte {
	tb.Helper()
	var names []string
	for n := range files {
		names = append(names, n)
	}
	for n := range links {
		names = append(names, n)
	}
	slices.Sort(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		h := &tar.Header{Name: n, Mode: 0o644, ModTime: testTime, Typeflag: tar.TypeReg, Size: int64(len(files[n]))}
		if l, ok := links[n]; ok {
			h = &tar.Header{Name: n, Mode: 0o777, ModTime: testTime, Typeflag: tar.TypeSymlink, Linkname: l}
		}
		if err := tw.WriteHeader(h); err != nil {
			tb.Fatal(err)
		}
		if _, err := tw.Write(files[n]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// filesOf reads the regular files of a tar, to build an archive from
// parts of others.
func filesOf(tb testing.TB, b []byte) map[string][]byte {
	tb.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			tb.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			data, err := io.ReadAll(tr)
			if err != nil {
				tb.Fatal(err)
			}
			files[h.Name] = data
		}
	}
}
