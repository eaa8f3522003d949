// Package deps installs what a skill package's scripts import: a package
// that carries requirements.txt (Python, installed with pip --target) or
// package.json with its lockfile (Node.js, installed with npm ci) gets a
// layer, built once per package digest, root file system and package
// index, then read-only and shared by every task, of every workspace, that
// places the package on that root. Installs run in a sandbox like any
// command (the provider builds them), with the network only to the
// package indexes; this package says what to run, and keeps the layers.
package deps

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/pack"
)

// Kind is an ecosystem of dependencies.
type Kind string

const (
	Python Kind = "python"
	Node   Kind = "node"
)

// Layer folders: where each kind's install lands in a layer.
const (
	PythonDir = "python"       // pip --target: import path; scripts in python/bin
	NodeDir   = "node_modules" // npm ci: require path; programs in node_modules/.bin
)

// Needs lists what pkg declares, in a fixed order: requirements.txt at its
// root, and package.json with package-lock.json or npm-shrinkwrap.json (npm
// ci installs exactly a lockfile; without one the install would float).
func Needs(pkg *pack.Package) []Kind {
	var out []Kind
	if _, ok := pkg.File("requirements.txt"); ok {
		out = append(out, Python)
	}
	if _, ok := pkg.File("package.json"); ok {
		_, lock := pkg.File("package-lock.json")
		_, shrink := pkg.File("npm-shrinkwrap.json")
		if lock || shrink {
			out = append(out, Node)
		}
	}
	return out
}

// Indexes are where installs come from; empty fields take the installer's
// own default (PyPI, the npm registry).
type Indexes struct {
	// Python is pip's --index-url (a simple index: https://pypi.org/simple).
	Python string
	// NPM is npm's --registry (https://registry.npmjs.org/).
	NPM string
}

// Defaults of Indexes' hosts, when a field is empty.
const (
	DefaultPythonIndex = "https://pypi.org/simple"
	DefaultNPMRegistry = "https://registry.npmjs.org/"
)

// Check refuses an index that is not an http or https URL with a host.
func (ix Indexes) Check() error {
	for name, u := range map[string]string{"--python-index-url": ix.Python, "--npm-registry": ix.NPM} {
		if u == "" {
			continue
		}
		if _, err := hostOf(u); err != nil {
			return skilld.Errorf(skilld.EINVALID, "%s %q: %v", name, u, err)
		}
	}
	return nil
}

func hostOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("give an http or https URL")
	}
	if u.Port() == "" {
		return u.Hostname(), nil
	}
	return u.Host, nil
}

// Hosts are what installs of kinds may reach: the indexes' hosts (and, for
// PyPI, the host its files are served from).
func (ix Indexes) Hosts(kinds []Kind) []string {
	var out []string
	for _, k := range kinds {
		switch k {
		case Python:
			if ix.Python == "" {
				out = append(out, "pypi.org", "files.pythonhosted.org")
			} else if h, err := hostOf(ix.Python); err == nil {
				out = append(out, h)
			}
		case Node:
			if h, err := hostOf(orDefault(ix.NPM, DefaultNPMRegistry)); err == nil {
				out = append(out, h)
			}
		}
	}
	return out
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// Key names a layer: the same package on the same root from the same
// indexes installs the same files.
func Key(pkgDigest, rootDigest string, kinds []Kind, ix Indexes) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s", pkgDigest, rootDigest, strings.Join(kindNames(kinds), ","), ix.Python, ix.NPM)
	return hex.EncodeToString(h.Sum(nil))
}

func kindNames(kinds []Kind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = string(k)
	}
	return out
}

// Script is the shell command that installs kinds for the package placed
// at dir (relative to /workspace) into /workspace/out: Python packages
// with pip --target out/python, Node packages with npm ci (its bin links
// as files) and node_modules moved to out/node_modules. It prints what it
// does; its last lines say why when it fails.
func Script(dir string, kinds []Kind, ix Indexes) string {
	var b strings.Builder
	b.WriteString("set -e\nmkdir -p /workspace/out\n")
	for _, k := range kinds {
		switch k {
		case Python:
			args := "--no-cache-dir --disable-pip-version-check --no-input --progress-bar off"
			if ix.Python != "" {
				args += " --index-url " + shellQuote(ix.Python)
				if u, err := url.Parse(ix.Python); err == nil && u.Scheme == "http" {
					// pip ignores an http index it is not told to trust.
					args += " --trusted-host " + shellQuote(u.Hostname())
				}
			}
			fmt.Fprintf(&b, "echo 'installing Python packages (requirements.txt)'\npython3 -m pip install %s --target /workspace/out/%s -r %s/requirements.txt\n", args, PythonDir, shellQuote(dir))
		case Node:
			reg := ""
			if ix.NPM != "" {
				reg = " --registry " + shellQuote(ix.NPM)
			}
			fmt.Fprintf(&b, "echo 'installing Node.js packages (package.json)'\nmkdir -p /workspace/build && cp %[1]s/package.json /workspace/build/ && cp %[1]s/package-lock.json %[1]s/npm-shrinkwrap.json /workspace/build/ 2>/dev/null || true\n"+
				"cd /workspace/build && npm ci --omit=dev --no-audit --no-fund --no-bin-links --cache /tmp/npm-cache%s && mv node_modules /workspace/out/%s && cd /workspace\n", shellQuote(dir), reg, NodeDir)
		}
	}
	b.WriteString("echo installed\n")
	return b.String()
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
