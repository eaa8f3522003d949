package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/skilld/skilld/internal/units"
	"github.com/skilld/skilld/service"
)

// optionFlags registers the flags every create-like command shares.
func optionFlags(c *apiCmd, o *service.SkillOptions) {
	c.fs.StringVar(&o.Name, "name", "", "name to use instead of the one in SKILL.md")
	c.fs.StringVar(&o.Description, "description", "", "description to use instead of the one in SKILL.md")
	c.fs.BoolVar(&o.Lenient, "lenient", false, "accept unknown frontmatter keys, reporting them as warnings")
}

func runSkillsCreate(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills create", "DIR | FILE... [--name NAME] [--description TEXT] [--lenient]\n\n"+
		"Sends the text files of a skill folder (or the files given, under their paths\n"+
		"relative to the current folder) inline. For binary files use 'skills upload'.")
	var p service.CreateSkillParams
	optionFlags(c, &p.SkillOptions)
	if code, ok := c.parse(args, 1, -1); !ok {
		return code
	}
	files, err := readTextFiles(ctx, c.args)
	if err != nil {
		return c.localError(err)
	}
	p.Files = files
	sk, ok := call(ctx, c, service.OpSkillsCreate, p)
	if !ok {
		return exitFailure
	}
	return c.printSkill(sk)
}

func runSkillsUpload(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills upload", "PATH [--name NAME] [--description TEXT] [--lenient]\n\n"+
		"PATH is a .zip, .skill, .tar, .tar.gz or .tgz archive, or a skill folder\n"+
		"(zipped on the way, binary files included).")
	var o service.SkillOptions
	optionFlags(c, &o)
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	archive, size, done, err := localArchive(ctx, c.args[0])
	if err != nil {
		return c.localError(err)
	}
	defer done()
	fmt.Fprintf(e.stderr, "uploading %s (%s)…\n", c.args[0], units.Bytes(size))
	cl, err := c.client(ctx, service.OpSkillsCreateFromArchive.Operation)
	var sk *service.SkillView
	if err == nil {
		sk, err = cl.Upload(ctx, archive, size, o)
	}
	if err != nil {
		return c.fail(err)
	}
	return c.printSkill(sk)
}

func runSkillsImport(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills import", "GITHUB_URL [--skill NAME] [--all] [--lenient]\n\n"+
		"GITHUB_URL is https://github.com/OWNER/REPO, a /tree/REF/PATH or /blob/REF/PATH/SKILL.md\n"+
		"URL, or git@github.com:OWNER/REPO.git.")
	var p service.ImportGitHubParams
	c.fs.StringVar(&p.SkillName, "skill", "", "which skill to import when the repository holds several")
	c.fs.BoolVar(&p.ImportAll, "all", false, "import every skill found (at most 10)")
	c.fs.BoolVar(&p.Lenient, "lenient", false, "accept unknown frontmatter keys, reporting them as warnings")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	p.URL = c.args[0]
	fmt.Fprintf(e.stderr, "importing %s…\n", strings.TrimPrefix(strings.TrimPrefix(p.URL, "https://"), "http://"))
	res, ok := call(ctx, c, service.OpSkillsImportGitHub, p)
	if !ok {
		return exitFailure
	}
	if len(res.Items) == 1 && !c.json {
		return c.printSkill(res.Items[0])
	}
	return c.output(res, func(w io.Writer) {
		row(w, "ID", "NAME", "VERSION", "SOURCE URL")
		for _, sk := range res.Items {
			row(w, sk.ID, sk.Name, sk.Version, sk.SourceURL)
		}
	})
}
