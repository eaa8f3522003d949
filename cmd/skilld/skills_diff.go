package main

import (
	"context"
	"fmt"
	"io"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/versiondiff"
)

// fileChange is one changed file as skills diff --json prints it.
type fileChange struct {
	Path   string             `json:"path"`
	Status versiondiff.Status `json:"status"`
	Binary bool               `json:"binary,omitempty"`
	Diff   string             `json:"diff,omitempty"`
}

func runSkillsDiff(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills diff", "NAME V1 V2\n\n"+
		"Prints a unified diff per file from version V1 of the skill NAME (or ID) to\n"+
		"version V2: headers --- a/NAME@V1/PATH and +++ b/NAME@V2/PATH (/dev/null for\n"+
		"the side of an added or removed file), \"Binary files differ\" for files that\n"+
		"are not text. Identical versions print nothing (a note on stderr); exit 0\n"+
		"either way, 1 when a version or the skill is not found.")
	if code, ok := c.parse(args, 3, 3); !ok {
		return code
	}
	name := c.args[0]
	v1, ok := c.atoi(c.args[1], "V1")
	if !ok {
		return exitUsage
	}
	v2, ok := c.atoi(c.args[2], "V2")
	if !ok {
		return exitUsage
	}
	files := func(v int) (*service.SkillFiles, bool) {
		return call(ctx, c, service.OpSkillsListFiles, service.ListSkillFilesParams{SkillRef: service.SkillRef{ID: name}, Version: v})
	}
	a, ok := files(v1)
	if !ok {
		return exitFailure
	}
	b, ok := files(v2)
	if !ok {
		return exitFailure
	}
	cl, err := c.client(ctx, service.OpSkillsGetFile.Operation)
	if err != nil {
		return c.fail(err)
	}
	out := []fileChange{}
	for _, ch := range versiondiff.Changes(a.Files, b.Files) {
		fc, err := diffFile(ctx, cl, name, ch, v1, v2)
		if err != nil {
			return c.fail(err)
		}
		out = append(out, fc)
	}
	if c.json {
		return c.output(out, nil)
	}
	if len(out) == 0 {
		fmt.Fprintf(e.stderr, "versions %d and %d of %s have the same files\n", v1, v2, name)
	}
	for _, fc := range out {
		io.WriteString(e.stdout, fc.Diff)
	}
	return exitOK
}

// diffFile reads both sides of a changed file and diffs them.
func diffFile(ctx context.Context, cl *httpapi.Client, name string, ch versiondiff.Change, v1, v2 int) (fileChange, error) {
	oldLabel, newLabel := fmt.Sprintf("a/%s@%d/%s", name, v1, ch.Path), fmt.Sprintf("b/%s@%d/%s", name, v2, ch.Path)
	var old, cur []byte
	var err error
	switch ch.Status {
	case versiondiff.Added:
		oldLabel = "/dev/null"
	case versiondiff.Removed:
		newLabel = "/dev/null"
	}
	if ch.Status != versiondiff.Added {
		if old, err = readVersionFile(ctx, cl, name, ch.Old, v1); err != nil {
			return fileChange{}, err
		}
	}
	if ch.Status != versiondiff.Removed {
		if cur, err = readVersionFile(ctx, cl, name, ch.New, v2); err != nil {
			return fileChange{}, err
		}
	}
	fc := fileChange{Path: ch.Path, Status: ch.Status}
	fc.Diff, fc.Binary = versiondiff.Unified(oldLabel, newLabel, old, cur)
	if fc.Binary {
		fc.Diff = fmt.Sprintf("--- %s\n+++ %s\nBinary files differ\n", oldLabel, newLabel)
	}
	return fc, nil
}

// readVersionFile reads one file of a version, no more than the size its
// listing gave.
func readVersionFile(ctx context.Context, cl *httpapi.Client, name string, f skilld.PackageFile, v int) ([]byte, error) {
	body, _, err := cl.GetFileVersion(ctx, name, f.Path, v)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, f.Size+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s of version %d: %w", f.Path, v, err)
	}
	if int64(len(data)) != f.Size {
		return nil, fmt.Errorf("reading %s of version %d: got %d bytes, the listing says %d", f.Path, v, len(data), f.Size)
	}
	return data, nil
}
