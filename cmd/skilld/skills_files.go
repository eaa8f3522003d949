package main

import (
	"context"
	"io"

	"github.com/skilld/skilld/service"
)

func runSkillsFiles(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills files", "ID [--version N]")
	var p service.ListSkillFilesParams
	c.fs.IntVar(&p.Version, "version", 0, "version to list (default: the current one)")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	p.ID = c.args[0]
	files, ok := call(ctx, c, service.OpSkillsListFiles, p)
	if !ok {
		return exitFailure
	}
	return c.output(files, func(w io.Writer) {
		row(w, "PATH", "SIZE", "EXEC", "DIGEST")
		for _, f := range files.Files {
			exec := ""
			if f.Exec {
				exec = "x"
			}
			row(w, f.Path, f.Size, exec, shortDigest(f.Digest))
		}
	})
}

// runSkillsCat writes one file's bytes to stdout, unchanged: with no PATH,
// the version's SKILL.md.
func runSkillsCat(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills cat", "ID [PATH] [--version N]")
	version := c.fs.Int("version", 0, "version to read (default: the current one)")
	if code, ok := c.parse(args, 1, 2); !ok {
		return code
	}
	if len(c.args) == 1 {
		p := service.GetSkillContentParams{SkillRef: service.SkillRef{ID: c.args[0]}, Version: *version}
		content, ok := call(ctx, c, service.OpSkillsGetContent, p)
		if !ok {
			return exitFailure
		}
		if c.json {
			return c.output(content, nil)
		}
		io.WriteString(e.stdout, content.Content)
		return exitOK
	}
	cl, err := c.client(ctx, service.OpSkillsGetFile.Operation)
	var body io.ReadCloser
	if err == nil {
		body, _, err = cl.GetFileVersion(ctx, c.args[0], c.args[1], *version)
	}
	if err != nil {
		return c.fail(err)
	}
	defer body.Close()
	if _, err := io.Copy(e.stdout, body); err != nil {
		return c.fail(err)
	}
	return exitOK
}
