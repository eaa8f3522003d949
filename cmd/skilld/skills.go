package main

import (
	"context"
	"fmt"
	"io"

	"github.com/skilld/skilld/service"
)

// skills is the "skilld skills" command group; the commands that send
// files are in skills_write.go, the ones that read files in skills_files.go.
func skillsCommands() []command {
	return []command{
		{"list", "list the workspace's skills", runSkillsList},
		{"get", "show one skill", runSkillsGet},
		{"create", "create a skill from a folder or files (text only)", runSkillsCreate},
		{"upload", "create a skill from an archive or a folder (any files)", runSkillsUpload},
		{"import", "import skills from a GitHub repository", runSkillsImport},
		{"install", "install a catalog item (registry/name)", runSkillsInstall},
		{"edit", "replace a skill's files, making a new version", runSkillsEdit},
		{"versions", "list a skill's versions", runSkillsVersions},
		{"restore", "make an old version current again", runSkillsRestore},
		{"delete", "delete a skill and its versions", runSkillsDelete},
		{"files", "list the files of a skill version", runSkillsFiles},
		{"cat", "print one file of a skill (SKILL.md by default)", runSkillsCat},
		{"update", "move an installed skill to another catalog version (admins)", runSkillsUpdate},
	}
}

func runSkillsList(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills list", "[--search TEXT] [--source-type TYPE] [--include-catalog] [--page N] [--page-size N]")
	var p service.ListSkillsParams
	c.fs.StringVar(&p.Search, "search", "", "only skills whose name or description contains TEXT")
	c.fs.StringVar((*string)(&p.SourceType), "source-type", "", "only skills from content, zip, github, path or catalog")
	c.fs.BoolVar(&p.IncludeCatalog, "include-catalog", false, "also list catalog items not installed yet")
	c.fs.IntVar(&p.Page, "page", 1, "page number")
	c.fs.IntVar(&p.PageSize, "page-size", service.DefaultPageSize, fmt.Sprintf("skills per page (at most %d)", service.MaxPageSize))
	if code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	var page service.SkillPage
	if !c.call(ctx, "skills.list", p, &page) {
		return exitFailure
	}
	return c.output(page, func(w io.Writer) {
		row(w, "ID", "NAME", "VERSION", "SOURCE", "DESCRIPTION")
		for _, it := range page.Items {
			if it.CatalogItem != nil {
				ci := it.CatalogItem
				row(w, ci.ID, ci.Registry+"/"+ci.Name, ci.LatestVersion, "catalog (not installed)", short(ci.Description, 60))
				continue
			}
			source := string(it.SourceType)
			if it.UpdateAvailable {
				source += " (update available)"
			}
			row(w, it.ID, it.Name, it.Version, source, short(it.Description, 60))
		}
		first := (page.Page-1)*page.PageSize + 1
		fmt.Fprintf(w, "\n%d–%d of %d\n", min(first, page.Total), min(first+len(page.Items)-1, page.Total), page.Total)
	})
}

func runSkillsGet(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills get", "ID")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	var sk service.SkillView
	if !c.call(ctx, "skills.get", service.GetSkillParams{SkillRef: service.SkillRef{ID: c.args[0]}}, &sk) {
		return exitFailure
	}
	return c.printSkill(&sk)
}

// printSkill shows one skill as "field  value" lines.
func (c *apiCmd) printSkill(sk *service.SkillView) int {
	return c.output(sk, func(w io.Writer) {
		row(w, "id", sk.ID)
		row(w, "name", sk.Name)
		row(w, "slug", sk.Slug)
		row(w, "description", sk.Description)
		row(w, "version", sk.Version)
		row(w, "digest", sk.Digest)
		row(w, "source", sk.SourceType)
		if sk.SourceURL != "" {
			row(w, "source url", sk.SourceURL)
		}
		if sk.CatalogItem != "" {
			row(w, "catalog item", fmt.Sprintf("%s version %d (latest %d)", sk.CatalogItem, sk.CatalogVersion, sk.CatalogLatestVersion))
			row(w, "update available", sk.UpdateAvailable)
		}
		if sk.Forked {
			row(w, "forked", "yes: edited in this workspace")
		}
		row(w, "updated", when(&sk.UpdatedAt))
		for _, warn := range sk.Warnings {
			row(w, "warning", warn.Field+": "+warn.Message)
		}
	})
}

func runSkillsDelete(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills delete", "ID")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	if !c.call(ctx, "skills.delete", service.DeleteSkillParams{SkillRef: service.SkillRef{ID: c.args[0]}}, nil) {
		return exitFailure
	}
	fmt.Fprintf(e.stderr, "deleted %s\n", c.args[0])
	return exitOK
}

func runSkillsVersions(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills versions", "ID [--page N] [--page-size N]")
	p := service.ListSkillVersionsParams{}
	c.fs.IntVar(&p.Page, "page", 1, "page number")
	c.fs.IntVar(&p.PageSize, "page-size", service.DefaultPageSize, "versions per page")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	p.ID = c.args[0]
	var list service.VersionList
	if !c.call(ctx, "skills.versions.list", p, &list) {
		return exitFailure
	}
	return c.output(list, func(w io.Writer) {
		row(w, "VERSION", "DIGEST", "CREATED", "BY", "MESSAGE")
		for _, v := range list.Items {
			row(w, v.Number, shortDigest(v.Digest), when(&v.CreatedAt), v.CreatedBy, short(v.Message, 50))
		}
	})
}

func runSkillsRestore(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills restore", "ID VERSION")
	if code, ok := c.parse(args, 2, 2); !ok {
		return code
	}
	n, ok := c.atoi(c.args[1], "VERSION")
	if !ok {
		return exitUsage
	}
	var sk service.SkillView
	if !c.call(ctx, "skills.versions.restore", service.RestoreSkillVersionParams{SkillRef: service.SkillRef{ID: c.args[0]}, Number: n}, &sk) {
		return exitFailure
	}
	return c.printSkill(&sk)
}

func runSkillsInstall(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills install", "REGISTRY/NAME [--version N]")
	var p service.InstallSkillParams
	c.fs.IntVar(&p.Version, "version", 0, "item version to pin (default: the latest)")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	p.Item = c.args[0]
	var sk service.SkillView
	if !c.call(ctx, "skills.install", p, &sk) {
		return exitFailure
	}
	return c.printSkill(&sk)
}

func runSkillsUpdate(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills update", "ID [--version N] [--reset]")
	var p service.UpdateInstalledSkillParams
	c.fs.IntVar(&p.Version, "version", 0, "catalog version to pin (default: the latest)")
	c.fs.BoolVar(&p.Reset, "reset", false, "also update a skill edited in this workspace, replacing its edits")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	p.ID = c.args[0]
	var sk service.SkillView
	if !c.call(ctx, "skills.update_installed", p, &sk) {
		return exitFailure
	}
	return c.printSkill(&sk)
}
