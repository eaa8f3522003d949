package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/skilld/skilld/sandbox/bwrap/bwraptest"
)

// TestRootfsBuildAndServe: `skilld sandbox rootfs build` makes a Debian
// root from a package list; `skilld serve` runs tasks on it by default, on
// an OCI image archive of it and on the host's folders when agents pick
// them by name, says which in every task.started, and fails a task that
// names a root it does not offer.
func TestRootfsBuildAndServe(t *testing.T) {
	bwraptest.Require(t)
	if os.Geteuid() != 0 {
		t.Skip("mmdebstrap builds a root as root here (its unshare mode needs subordinate ids)")
	}
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("mmdebstrap is not installed (scripts/test installs it)")
		}
		t.Skip("mmdebstrap is not installed")
	}
	dir := t.TempDir()
	list := filepath.Join(dir, "packages.txt")
	os.WriteFile(list, []byte("# the smallest root that still says hello\nhello\n"), 0o644)
	out := filepath.Join(dir, "hello-root")
	code, stdout, stderr := runCLI(t, "sandbox", "rootfs", "build", "--packages", list, "--out", out)
	if code != exitOK || !strings.Contains(stdout, "tree-sha256:") {
		t.Fatalf("build: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "sandbox", "rootfs", "build", "--packages", list, "--out", out); code != exitUsage || !strings.Contains(stderr, "exists") {
		t.Errorf("building over a folder: exit %d, %s", code, stderr)
	}
	os.WriteFile(filepath.Join(dir, "bad.txt"), []byte("hello; rm -rf /\n"), 0o644)
	if code, _, stderr := runCLI(t, "sandbox", "rootfs", "build", "--packages", filepath.Join(dir, "bad.txt"), "--out", filepath.Join(dir, "x")); code != exitUsage || !strings.Contains(stderr, "not a Debian package name") {
		t.Errorf("a bad list: exit %d, %s", code, stderr)
	}
	archive := filepath.Join(dir, "hello.tar")
	writeOCIArchive(t, out, archive)

	secret := "skd_rootfs" + strings.Repeat("r", 24)
	t.Setenv("SKILLD_BOOTSTRAP_TOKEN", secret)
	t.Setenv("SKILLD_ALLOW_SCRIPTED_MODELS", "1")
	base, serveErr, stop := startServe(t, "--data", t.TempDir(), "--sandbox-rootfs", out, "--sandbox-rootfs", "image="+archive, "--sandbox-rootfs", "host")
	defer stop()
	// The sandbox is described once its check, after listening, is done.
	serveErr.await(t, "root file system: hello-root (tree-sha256:")
	script := writeModel(t, []string{shellStep("cat /etc/skilld-rootfs.json | grep -c hello; hello; test -e /usr/bin/gcc && echo host-usr || echo no-host-usr"), `{"text": "done"}`})
	for name, want := range map[string]string{"": "1\nHello, world!\nno-host-usr\n", "image": "1\nHello, world!\nno-host-usr\n", "host": "0\n/bin/sh: 1: hello: not found\nhost-usr\n"} {
		cfg := map[string]any{"model": "scripted:" + script, "context": map[string]any{"window": 100000}, "sandbox": map[string]any{"rootfs": name}}
		agent := "on-" + name
		body, _ := json.Marshal(map[string]any{"name": agent, "config": cfg})
		apiDo(t, base, secret, "default", "POST", "/agents", body)
		task, events := runTaskEvents(t, base, secret, "default", agent)
		if task["status"] != "completed" {
			t.Errorf("root %q: %v", name, task)
			continue
		}
		var result string
		var started map[string]any
		for _, e := range events {
			if e["type"] == "message" && e["role"] == "tool" {
				result, _ = e["content"].(string)
			}
			if e["type"] == "task.started" {
				started, _ = e["rootfs"].(map[string]any)
			}
		}
		if !strings.Contains(result, want) {
			t.Errorf("root %q: %q, want %q", name, result, want)
		}
		digest, _ := started["digest"].(string)
		switch name {
		case "":
			if started["name"] != "hello-root" || !strings.HasPrefix(digest, "tree-sha256:") {
				t.Errorf("task.started of the default root: %v", started)
			}
		case "image":
			if started["name"] != "image" || !strings.HasPrefix(digest, "sha256:") {
				t.Errorf("task.started of the image: %v", started)
			}
		case "host":
			if started["name"] != "host" {
				t.Errorf("task.started of the host: %v", started)
			}
		}
	}
	body, _ := json.Marshal(map[string]any{"name": "nowhere", "config": map[string]any{"model": "scripted:" + script, "context": map[string]any{"window": 100000}, "sandbox": map[string]any{"rootfs": "ubuntu"}}})
	apiDo(t, base, secret, "default", "POST", "/agents", body)
	task, _ := runTaskEvents(t, base, secret, "default", "nowhere")
	if msg := fmt.Sprint(task["error"]); task["status"] != "failed" || !strings.Contains(msg, `"ubuntu"`) || !strings.Contains(msg, "hello-root, image, host") {
		t.Errorf("a root the server does not offer: %v", task)
	}
}

// writeOCIArchive writes the folder root as a one-layer OCI image archive,
// the layout `skopeo copy … oci-archive:` writes.
func writeOCIArchive(t *testing.T, root, path string) {
	t.Helper()
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			link, _ = os.Readlink(p)
		} else if !info.Mode().IsRegular() && !info.IsDir() {
			return nil
		}
		h, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		h.Name, _ = filepath.Rel(root, p)
		if info.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			tw.Write(b)
		}
		return nil
	})
	if err != nil || tw.Close() != nil {
		t.Fatalf("tarring %s: %v", root, err)
	}
	blobs := map[string][]byte{}
	put := func(b []byte) (string, int) {
		sum := sha256.Sum256(b)
		d := hex.EncodeToString(sum[:])
		blobs["blobs/sha256/"+d] = b
		return "sha256:" + d, len(b)
	}
	layerDigest, layerSize := put(layer.Bytes())
	config, _ := json.Marshal(map[string]any{"architecture": runtime.GOARCH, "os": "linux", "rootfs": map[string]any{"type": "layers", "diff_ids": []string{layerDigest}}})
	configDigest, configSize := put(config)
	manifest, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": configDigest, "size": configSize},
		"layers": []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layerDigest, "size": layerSize}}})
	manifestDigest, manifestSize := put(manifest)
	index, _ := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []any{map[string]any{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifestDigest, "size": manifestSize}}})
	blobs["index.json"] = index
	blobs["oci-layout"] = []byte(`{"imageLayoutVersion":"1.0.0"}`)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	aw := tar.NewWriter(f)
	for name, b := range blobs {
		aw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
		aw.Write(b)
	}
	if err := aw.Close(); err != nil || f.Close() != nil {
		t.Fatal(err)
	}
}
