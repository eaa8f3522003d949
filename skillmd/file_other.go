//go:build !unix

package skillmd

import (
	"errors"
	"io/fs"
	"os"
)

// readText reads the file at path to its end.
func readText(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return "", readError(pe)
		}
		return "", err
	}
	if len(data) > MaxFileSize {
		return "", tooLarge(path)
	}
	return string(data), nil
}
