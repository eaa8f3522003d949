package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox/bwrap"
)

func sandboxCommands() []command {
	return []command{
		{"rootfs", "build root file systems for the sandbox", runGroup("sandbox rootfs", []command{
			{"build", "build a root file system from a list of Debian packages, with mmdebstrap", runRootfsBuild},
		})},
	}
}

// debianPackage is what a package name may be (Debian policy 5.6.1).
var debianPackage = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)

// readPackages reads a package list: names separated by white space, #
// starting a comment.
func readPackages(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, skilld.Errorf(skilld.EINVALID, "--packages: %v", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		for _, p := range strings.Fields(line) {
			if !debianPackage.MatchString(p) {
				return nil, skilld.Errorf(skilld.EINVALID, "%s:%d: %q is not a Debian package name", path, n, p)
			}
			out = append(out, p)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, skilld.Errorf(skilld.EINVALID, "%s names no package", path)
	}
	return out, nil
}

// rootfsManifest is what a built root says of itself, in
// /etc/skilld-rootfs.json.
type rootfsManifest struct {
	Suite    string    `json:"suite"`
	Variant  string    `json:"variant"`
	Packages []string  `json:"packages"`
	Built    time.Time `json:"built"`
}

func runRootfsBuild(ctx context.Context, e *env, args []string) int {
	fl := flag.NewFlagSet("sandbox rootfs build", flag.ContinueOnError)
	fl.SetOutput(e.stderr)
	packages := fl.String("packages", "", "a file naming the Debian packages to install (sandbox/rootfs/skills-common.txt is the maintained list)")
	out := fl.String("out", "", "the folder to make (it must not exist); use it with --sandbox-rootfs")
	suite := fl.String("suite", "trixie", "the Debian release")
	mirror := fl.String("mirror", "", "the Debian mirror (default: deb.debian.org, with the release's updates and security mirrors)")
	variant := fl.String("variant", "essential", "mmdebstrap's variant: essential (Essential: yes packages and what the list needs), apt, minbase, important")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if *packages == "" || *out == "" || fl.NArg() > 0 {
		fmt.Fprintln(e.stderr, "skilld sandbox rootfs build: give --packages FILE and --out DIR")
		return exitUsage
	}
	pkgs, err := readPackages(*packages)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld sandbox rootfs build: %s\n", skilld.ErrorMessage(err))
		return exitUsage
	}
	if _, err := os.Lstat(*out); err == nil || !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(e.stderr, "skilld sandbox rootfs build: %s exists; give a folder to make\n", *out)
		return exitUsage
	}
	dir, err := buildRootfs(ctx, e, *out, rootfsManifest{Suite: *suite, Variant: *variant, Packages: pkgs}, *mirror)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld sandbox rootfs build: %s\n", skilld.ErrorMessage(err))
		return exitFailure
	}
	root, err := bwrap.DirRoot(filepath.Base(dir), dir)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld sandbox rootfs build: %s\n", skilld.ErrorMessage(err))
		return exitFailure
	}
	fmt.Fprintf(e.stdout, "built %s: %d packages asked for, %.1f MiB, %s\nuse it with: skilld serve --sandbox-rootfs %s\n", dir, len(pkgs), float64(treeSize(dir))/(1<<20), root.Digest, dir)
	return exitOK
}

// buildRootfs runs mmdebstrap into a folder next to out and renames it to
// out when it is complete: a failed build leaves nothing.
func buildRootfs(ctx context.Context, e *env, out string, m rootfsManifest, mirror string) (string, error) {
	mmdebstrap, err := exec.LookPath("mmdebstrap")
	if err != nil {
		return "", skilld.Errorf(skilld.EUNAVAILABLE, "mmdebstrap is not installed (Debian/Ubuntu: apt-get install mmdebstrap)")
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	var b [6]byte
	rand.Read(b[:])
	tmp := abs + ".building-" + hex.EncodeToString(b[:])
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return "", err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	args := []string{"--variant=" + m.Variant, "--include=" + strings.Join(m.Packages, ","),
		// Documentation and manuals are not what skills run; they are a
		// third of a root's size.
		"--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-include=/usr/share/doc/*/copyright",
		"--dpkgopt=path-exclude=/usr/share/man/*", "--dpkgopt=path-exclude=/usr/share/info/*",
		"--aptopt=APT::Install-Recommends \"false\"",
		m.Suite, tmp}
	if mirror != "" {
		args = append(args, mirror)
	}
	cmd := exec.CommandContext(ctx, mmdebstrap, args...)
	cmd.Stdout, cmd.Stderr = e.stderr, e.stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("mmdebstrap: %w", err)
	}
	m.Built = time.Now().UTC()
	b2, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, "etc", "skilld-rootfs.json"), append(b2, '\n'), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, abs); err != nil {
		return "", err
	}
	done = true
	return abs, nil
}

// treeSize adds up the sizes of the files under dir.
func treeSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
