package rootfs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox/rootfs"
)

// otherArch is an architecture this machine is not.
func otherArch() string {
	if goarch == "s390x" {
		return "riscv64"
	}
	return "s390x"
}

// archImage stores an image whose only file, arch, names its architecture.
func archImage(t *testing.T, o *ociLayout, arch string) ociDesc {
	return o.image(t, arch, buildLayer(t, gz, file("arch", arch)))
}

func checkArch(t *testing.T, r *rootfs.Root, want string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Dir, "arch"))
	if err != nil || string(b) != want {
		t.Errorf("unpacked the image for %q (%v), want %q", b, err, want)
	}
}

// TestPlatformIndex: an image index, as skopeo copy --all or docker's
// containerd store write it (index.json → the index → manifests), with a
// buildx attestation among them.
func TestPlatformIndex(t *testing.T) {
	o := newOCI()
	attestation := o.blob(mtManifest, []byte(`{"schemaVersion":2}`))
	attestation.Platform = &ociPlatform{OS: "unknown", Architecture: "unknown"}
	idx := o.index(t, archImage(t, o, otherArch()), attestation, archImage(t, o, goarch))
	e := newEnv(t, rootfs.Limits{})
	r := e.mustUnpack(t, o.archive(t, idx))
	checkArch(t, r, goarch)
	if want := idx.Digest; r.Digest == want {
		t.Errorf("digest %s is the index's, want the picked manifest's", r.Digest)
	}
}

// TestPlatformsInIndexJSON: index.json may itself be the platform index.
func TestPlatformsInIndexJSON(t *testing.T) {
	o := newOCI()
	mine := archImage(t, o, goarch)
	e := newEnv(t, rootfs.Limits{})
	r := e.mustUnpack(t, o.archive(t, archImage(t, o, otherArch()), mine))
	checkArch(t, r, goarch)
	if r.Digest != mine.Digest {
		t.Errorf("digest %s, want the manifest's %s", r.Digest, mine.Digest)
	}
}

// TestPlatformVariant: of several variants, the baseline one.
func TestPlatformVariant(t *testing.T) {
	o := newOCI()
	fancy := o.image(t, goarch, buildLayer(t, gz, file("arch", "fancy")))
	fancy.Platform.Variant = "v99"
	base := archImage(t, o, goarch)
	e := newEnv(t, rootfs.Limits{})
	checkArch(t, e.mustUnpack(t, o.archive(t, o.index(t, fancy, base))), goarch)
}

func TestNoImageForThisPlatform(t *testing.T) {
	o := newOCI()
	other := archImage(t, o, otherArch())
	arm := archImage(t, o, "arm")
	arm.Platform.Variant = "v7"
	idx := o.index(t, other, arm)
	e := newEnv(t, rootfs.Limits{})
	e.refused(t, o.archive(t, idx), skilld.EINVALID,
		"the image index "+idx.Digest+" has no image for linux/"+goarch, "it has linux/"+otherArch()+", linux/arm/v7")
}

func TestImageOfAnotherArchitecture(t *testing.T) {
	o := newOCI()
	e := newEnv(t, rootfs.Limits{})
	e.refused(t, o.archive(t, archImage(t, o, otherArch())), skilld.EINVALID, "the image is for linux/"+otherArch())
}

func TestSeveralImagesRefused(t *testing.T) {
	t.Run("oci", func(t *testing.T) {
		o := newOCI()
		a := o.image(t, goarch, buildLayer(t, gz, file("a", "a")))
		b := o.image(t, goarch, buildLayer(t, gz, file("b", "b")))
		a.Annotations = map[string]string{"io.containerd.image.name": "docker.io/library/alpine:3.20"}
		b.Annotations = map[string]string{"org.opencontainers.image.ref.name": "busybox"}
		e := newEnv(t, rootfs.Limits{})
		e.refused(t, o.archive(t, a, b), skilld.EINVALID,
			"holds 2 images", "docker.io/library/alpine:3.20 ("+a.Digest, "busybox ("+b.Digest, "save one image per archive")
	})
	t.Run("oci-no-platforms", func(t *testing.T) {
		o := newOCI()
		a := o.image(t, goarch, buildLayer(t, gz, file("a", "a")))
		b := o.image(t, goarch, buildLayer(t, gz, file("b", "b")))
		a.Platform, b.Platform = nil, nil
		e := newEnv(t, rootfs.Limits{})
		e.refused(t, o.archive(t, a, b), skilld.EINVALID, "holds 2 images", "untagged ("+a.Digest)
	})
	t.Run("docker", func(t *testing.T) {
		a := dockerArchive(t, buildLayer(t, plain, file("a", "a")))
		b := dockerArchive(t, buildLayer(t, plain, file("b", "b")))
		files := filesOf(t, a)
		for n, data := range filesOf(t, b) {
			if n != "manifest.json" {
				files[n] = data
			}
		}
		files["manifest.json"] = append(files["manifest.json"][:len(files["manifest.json"])-1], ',')
		files["manifest.json"] = append(files["manifest.json"], filesOf(t, b)["manifest.json"][1:]...)
		e := newEnv(t, rootfs.Limits{})
		e.refused(t, tarOf(t, files, nil), skilld.EINVALID, "holds 2 images", "test:latest (config ")
	})
}

// TestOneImageTwoTags: docker lists an image once per tag.
func TestOneImageTwoTags(t *testing.T) {
	o := newOCI()
	d := archImage(t, o, goarch)
	a, b := d, d
	a.Annotations = map[string]string{"org.opencontainers.image.ref.name": "1.0"}
	b.Annotations = map[string]string{"org.opencontainers.image.ref.name": "latest"}
	e := newEnv(t, rootfs.Limits{})
	checkArch(t, e.mustUnpack(t, o.archive(t, a, b)), goarch)
}

// TestDockerSharedLayer: docker save stores a layer used twice once, and
// links the second layer.tar to the first.
func TestDockerSharedLayer(t *testing.T) {
	l1 := buildLayer(t, plain, file("f", "1"))
	l2 := buildLayer(t, plain, file("f", "2"))
	e := newEnv(t, rootfs.Limits{})
	r := e.mustUnpack(t, dockerArchive(t, l1, l2, l1))
	diffTrees(t, treeOf(t, r.Dir), map[string]string{".": "d 0755", "f": "f 0644 1"})
}

// TestOCIPreferred: docker 25 and later write both layouts; the image is
// named by its manifest.
func TestOCIPreferred(t *testing.T) {
	l := buildLayer(t, gz, file("f", "1"))
	o := newOCI()
	d := o.image(t, goarch, l)
	files := filesOf(t, o.archive(t, d))
	for n, b := range filesOf(t, dockerArchive(t, l)) {
		files[n] = b
	}
	e := newEnv(t, rootfs.Limits{})
	if r := e.mustUnpack(t, tarOf(t, files, nil)); r.Digest != d.Digest {
		t.Errorf("digest %s, want the manifest's %s", r.Digest, d.Digest)
	}
}

// TestDockerManifestOfBlobs: docker 25 and later save an image without a
// tag in manifest.json only, next to an index.json listing nothing
// ("manifests":null); manifest.json then names OCI blobs, which may be
// compressed, and each layer is checked against its blob's digest.
func TestDockerManifestOfBlobs(t *testing.T) {
	l1 := buildLayer(t, gz, file("f", "1"), file("g", "g"))
	l2 := buildLayer(t, zst, whiteout("g"))
	o := newOCI()
	o.image(t, goarch, l1, l2)
	files := filesOf(t, o.archive(t))
	files["index.json"] = []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":null}`)
	var cfg string
	for n, b := range files {
		if bytes.Contains(b, []byte(`"diff_ids"`)) {
			cfg = n
		}
	}
	files["manifest.json"] = mustJSON(t, []dockerManifest{{
		Config: cfg,
		Layers: []string{"blobs/sha256/" + l1.digest()[len("sha256:"):], "blobs/sha256/" + l2.digest()[len("sha256:"):]},
	}})
	e := newEnv(t, rootfs.Limits{})
	r := e.mustUnpack(t, tarOf(t, files, nil))
	diffTrees(t, treeOf(t, r.Dir), map[string]string{".": "d 0755", "f": "f 0644 1"})
	if want := "sha256:" + filepath.Base(cfg); r.Digest != want {
		t.Errorf("digest %s, want the config's %s", r.Digest, want)
	}
}
