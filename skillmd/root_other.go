//go:build !unix

package skillmd

import (
	"os"
	"path/filepath"
)

// osRoot reads skill files under a directory of the operating system.
type osRoot struct{ path string }

func openRoot(root string) (osRoot, error) {
	if _, err := os.Stat(root); err != nil {
		return osRoot{}, err
	}
	return osRoot{path: root}, nil
}

func (r osRoot) close() {}

// read reads the file at rel when it is a regular file and not a link:
// regular reports that it is one.
func (r osRoot) read(rel string) (data []byte, regular bool, err error) {
	p := filepath.Join(r.path, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false, nil
	}
	data, err = os.ReadFile(p)
	return data, true, err
}
