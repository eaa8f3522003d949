package rootfs

import (
	"errors"
	"fmt"
	"path"
	"runtime"
	"strings"
)

// Media types the layouts use. A descriptor's media type is optional, so
// the document itself (or, failing that, its fields) tells an index from a
// manifest.
const (
	mediaOCIIndex       = "application/vnd.oci.image.index.v1+json"
	mediaDockerList     = "application/vnd.docker.distribution.manifest.list.v2+json"
	mediaOCIManifest    = "application/vnd.oci.image.manifest.v1+json"
	mediaDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
	mediaOCIConfig      = "application/vnd.oci.image.config.v1+json"
	mediaDockerConfig   = "application/vnd.docker.container.image.v1+json"
)

// errNoImage is an index.json that lists nothing, which a manifest.json
// next to it may make up for.
var errNoImage = errors.New("the archive's index.json lists no image")

// maxIndexDepth bounds indexes within indexes (skopeo's oci-archive of a
// multi-platform image: index.json → the image index → manifests).
const maxIndexDepth = 4

// descriptor points at a blob (OCI image spec, descriptor.md).
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *platform         `json:"platform"`
	Annotations map[string]string `json:"annotations"`
}

type platform struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Variant      string `json:"variant"`
}

func (p platform) String() string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// document is an image index or an image manifest: the fields of both.
type document struct {
	MediaType string       `json:"mediaType"`
	Manifests []descriptor `json:"manifests"`
	Config    *descriptor  `json:"config"`
	Layers    []descriptor `json:"layers"`
}

// config is what the store reads of an image configuration.
type config struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	RootFS       struct {
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// legacyManifest is one image of docker save's manifest.json.
type legacyManifest struct {
	Config   string   `json:"Config"`
	RepoTags []string `json:"RepoTags"`
	Layers   []string `json:"Layers"`
}

// image is what an archive holds, checked as far as it can be without
// reading its layers.
type image struct {
	digest string // names the image in the store
	layers []layerBlob
}

// layerBlob is one layer: where its blob is and the digest it must hash to.
type layerBlob struct {
	name   string // its path in the archive, for messages
	digest string
	span   span
}

// image finds the one image of the archive. An OCI layout (index.json) is
// preferred: docker 25 and later write both layouts, and the OCI one names
// layers by the digest of their blobs.
func (a *archive) image(lim Limits) (*image, error) {
	_, legacy := a.lookup("manifest.json")
	if _, ok := a.lookup("index.json"); ok {
		img, err := a.ociImage(lim)
		if err == errNoImage && !legacy {
			return nil, invalidf("%v", err)
		}
		if err != errNoImage {
			return img, err
		}
		// docker 25 and later save an image without a tag (by id) in
		// manifest.json only, with an empty index.json.
	}
	if legacy {
		return a.legacyImage(lim)
	}
	return nil, invalidf("not an image archive: it has neither index.json (an OCI image layout) nor manifest.json (docker save)")
}

func (a *archive) ociImage(lim Limits) (*image, error) {
	var idx document
	if err := a.readJSON("index.json", "the archive's index", "", 0, &idx); err != nil {
		return nil, err
	}
	tops := distinct(idx.Manifests)
	switch {
	case len(tops) == 0:
		return nil, errNoImage
	case len(tops) == 1:
		return a.resolve(tops[0], lim, 0)
	case platformIndex(tops):
		d, err := pick(tops, "the archive's index.json")
		if err != nil {
			return nil, err
		}
		return a.resolve(d, lim, 0)
	}
	names := make([]string, len(tops))
	for i, d := range tops {
		names[i] = describe(d)
	}
	return nil, invalidf("the archive holds %d images (%s); save one image per archive", len(tops), strings.Join(names, ", "))
}

// resolve follows d to an image manifest, picking this machine's platform
// from each index on the way.
func (a *archive) resolve(d descriptor, lim Limits, depth int) (*image, error) {
	hexSum, err := parseDigest(d.Digest)
	if err != nil {
		return nil, err
	}
	var doc document
	if err := a.readJSON(blobPath(hexSum), "the image manifest", d.Digest, d.Size, &doc); err != nil {
		return nil, err
	}
	mt := doc.MediaType
	if mt == "" {
		mt = d.MediaType
	}
	switch {
	case mt == mediaOCIIndex || mt == mediaDockerList || mt == "" && doc.Manifests != nil:
		if depth >= maxIndexDepth {
			return nil, invalidf("image index %s: indexes nest more than %d deep", d.Digest, maxIndexDepth)
		}
		next, err := pick(distinct(doc.Manifests), "the image index "+d.Digest)
		if err != nil {
			return nil, err
		}
		return a.resolve(next, lim, depth+1)
	case mt == mediaOCIManifest || mt == mediaDockerManifest || mt == "" && doc.Config != nil:
		return a.manifestImage(d.Digest, doc, lim)
	}
	return nil, invalidf("blob %s is neither an image manifest nor an image index (media type %q)", d.Digest, mt)
}

func (a *archive) manifestImage(digest string, m document, lim Limits) (*image, error) {
	c := m.Config
	if c == nil {
		return nil, invalidf("image manifest %s has no config", digest)
	}
	if c.MediaType != "" && c.MediaType != mediaOCIConfig && c.MediaType != mediaDockerConfig {
		return nil, invalidf("image manifest %s is not a container image: its config is %q", digest, c.MediaType)
	}
	hexSum, err := parseDigest(c.Digest)
	if err != nil {
		return nil, err
	}
	var cfg config
	if err := a.readJSON(blobPath(hexSum), "the image config", c.Digest, c.Size, &cfg); err != nil {
		return nil, err
	}
	if err := checkPlatform(cfg); err != nil {
		return nil, err
	}
	if len(m.Layers) > lim.MaxLayers {
		return nil, tooLargef("the image has %d layers, over the limit of %d (Limits.MaxLayers)", len(m.Layers), lim.MaxLayers)
	}
	img := &image{digest: digest}
	for i, l := range m.Layers {
		hexSum, err := parseDigest(l.Digest)
		if err != nil {
			return nil, wrap(err, "layer %d", i+1)
		}
		name := blobPath(hexSum)
		s, ok := a.lookup(name)
		if !ok {
			return nil, invalidf("layer %d (%s) is not in the archive", i+1, name)
		}
		if l.Size != 0 && s.size != l.Size {
			return nil, invalidf("layer %d (%s) is %d bytes, its descriptor says %d", i+1, name, s.size, l.Size)
		}
		img.layers = append(img.layers, layerBlob{name: name, digest: l.Digest, span: s})
	}
	return img, nil
}

// legacyImage reads docker save's own layout, in which layers are plain
// tars checked against the config's diff_ids (the digests of the tars),
// and the config file is named by its digest, which names the image.
func (a *archive) legacyImage(lim Limits) (*image, error) {
	var all []legacyManifest
	if err := a.readJSON("manifest.json", "the archive's manifest.json", "", 0, &all); err != nil {
		return nil, err
	}
	var ms []legacyManifest
	seen := map[string]bool{}
	for _, m := range all {
		if !seen[m.Config] {
			seen[m.Config] = true
			ms = append(ms, m)
		}
	}
	switch len(ms) {
	case 0:
		return nil, invalidf("the archive's manifest.json lists no image")
	case 1:
	default:
		names := make([]string, len(ms))
		for i, m := range ms {
			tags := strings.Join(m.RepoTags, " ")
			if tags == "" {
				tags = "untagged"
			}
			names[i] = fmt.Sprintf("%s (config %s)", tags, m.Config)
		}
		return nil, invalidf("the archive holds %d images (%s); save one image per archive", len(ms), strings.Join(names, ", "))
	}
	m := ms[0]
	hexSum := strings.TrimSuffix(path.Base(m.Config), ".json")
	if !isHex64(hexSum) {
		return nil, invalidf("manifest.json names the config %q, whose name is not its digest", m.Config)
	}
	digest := "sha256:" + hexSum
	var cfg config
	if err := a.readJSON(archiveName(m.Config), "the image config", digest, 0, &cfg); err != nil {
		return nil, err
	}
	if err := checkPlatform(cfg); err != nil {
		return nil, err
	}
	if len(m.Layers) > lim.MaxLayers {
		return nil, tooLargef("the image has %d layers, over the limit of %d (Limits.MaxLayers)", len(m.Layers), lim.MaxLayers)
	}
	if len(cfg.RootFS.DiffIDs) != len(m.Layers) {
		return nil, invalidf("the image config lists %d layer digests (rootfs.diff_ids) for %d layers", len(cfg.RootFS.DiffIDs), len(m.Layers))
	}
	img := &image{digest: digest}
	for i, name := range m.Layers {
		want := cfg.RootFS.DiffIDs[i]
		if _, err := parseDigest(want); err != nil {
			return nil, wrap(err, "layer %d", i+1)
		}
		// A layer stored as an OCI blob (docker 25's manifest.json, read
		// here when index.json is missing) may be compressed: its name
		// is the digest its bytes have.
		if hexSum, ok := strings.CutPrefix(archiveName(name), "blobs/sha256/"); ok && isHex64(hexSum) {
			want = "sha256:" + hexSum
		}
		s, ok := a.lookup(archiveName(name))
		if !ok {
			return nil, invalidf("layer %d (%s) is not in the archive", i+1, name)
		}
		img.layers = append(img.layers, layerBlob{name: name, digest: want, span: s})
	}
	return img, nil
}

// checkPlatform refuses an image this machine cannot run: its programs
// would fail in the sandbox with "exec format error", far from the cause.
func checkPlatform(c config) error {
	if c.OS != "" && c.OS != "linux" {
		return invalidf("the image is for %s, not linux", c.OS)
	}
	if c.Architecture != "" && c.Architecture != runtime.GOARCH {
		return invalidf("the image is for linux/%s; this machine is linux/%s", c.Architecture, runtime.GOARCH)
	}
	return nil
}

// distinct drops descriptors of a digest already listed (docker lists an
// image once per tag).
func distinct(ds []descriptor) []descriptor {
	var out []descriptor
	seen := map[string]bool{}
	for _, d := range ds {
		if !seen[d.Digest] {
			seen[d.Digest] = true
			out = append(out, d)
		}
	}
	return out
}

// platformIndex reports whether index.json's several entries are the
// platforms of one image rather than several images: every one is a
// manifest with a platform, and no platform comes twice.
func platformIndex(ds []descriptor) bool {
	seen := map[platform]bool{}
	for _, d := range ds {
		if d.Platform == nil || d.MediaType == mediaOCIIndex || d.MediaType == mediaDockerList || seen[*d.Platform] {
			return false
		}
		seen[*d.Platform] = true
	}
	return true
}

// pick chooses the linux image of this machine's architecture from an
// index. When several match (variants), the baseline one runs everywhere
// the architecture does: no variant, amd64's v1 or arm64's v8; else the
// first listed.
func pick(ds []descriptor, where string) (descriptor, error) {
	var found []descriptor
	var have []string
	for _, d := range ds {
		if d.Platform == nil || d.Platform.OS == "unknown" { // buildx attestations
			continue
		}
		have = append(have, d.Platform.String())
		if d.Platform.OS == "linux" && d.Platform.Architecture == runtime.GOARCH {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		if len(have) == 0 {
			have = []string{"no platform named"}
		}
		return descriptor{}, invalidf("%s has no image for linux/%s; it has %s", where, runtime.GOARCH, strings.Join(have, ", "))
	}
	for _, d := range found {
		switch d.Platform.Variant {
		case "", "v1", "v8":
			return d, nil
		}
	}
	return found[0], nil
}

// describe names an image of an index for a message.
func describe(d descriptor) string {
	name := d.Annotations["io.containerd.image.name"]
	if name == "" {
		name = d.Annotations["org.opencontainers.image.ref.name"]
	}
	if name == "" {
		name = "untagged"
	}
	s := name + " (" + d.Digest
	if d.Platform != nil {
		s += ", " + d.Platform.String()
	}
	return s + ")"
}
