package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/units"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/service"
)

// skills is the "skilld skills" command group; the commands that send
// files are in skills_write.go (and edit below), the ones that read files
// in skills_files.go.
func skillsCommands() []command {
	return []command{
		{"list", "list the workspace's skills", runSkillsList},
		{"get", "show one skill", runSkillsGet},
		{"create", "create a skill from a folder or files (text only)", runSkillsCreate},
		{"upload", "create a skill from an archive or a folder (any files)", runSkillsUpload},
		{"import", "import skills from a GitHub repository", runSkillsImport},
		{"install", "install a catalog item (registry/name)", runSkillsInstall},
		{"edit", "replace a skill's files with a folder, files or an archive, making a new version", runSkillsEditAny},
		{"versions", "list a skill's versions", runSkillsVersions},
		{"diff", "show what changed between two versions of a skill, as a unified diff", runSkillsDiff},
		{"restore", "make an old version current again", runSkillsRestore},
		{"delete", "delete a skill and its versions", runSkillsDelete},
		{"files", "list the files of a skill version", runSkillsFiles},
		{"cat", "print one file of a skill (SKILL.md by default)", runSkillsCat},
		{"update", "move an installed skill to another catalog version (admins)", runSkillsUpdate},
		{"stats", "what finished tasks did with each skill: offers, activations, refusals, unloads", runSkillsStats},
		{"findings", "show what the security scanner found in a skill version (table, --json or --sarif)", runSkillsFindings},
		{"permissions", "show what a skill's package asks for (network, secrets) and whether it is approved", runSkillsPermissions},
		{"approve", "approve what a package of a skill asks for (admins)", runSkillsApprove},
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
	page, ok := call(ctx, c, service.OpSkillsList, p)
	if !ok {
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
	sk, ok := call(ctx, c, service.OpSkillsGet, service.GetSkillParams{SkillRef: service.SkillRef{ID: c.args[0]}})
	if !ok {
		return exitFailure
	}
	return c.printSkill(sk)
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
		if sk.Unchanged {
			row(w, "unchanged", fmt.Sprintf("yes: the same as version %d, so no version was made", sk.Version))
		}
	})
}

// runSkillsEditAny is "skills edit": inline text files when they can be
// (a folder of text files, or files named one by one), and an archive
// otherwise: an archive file as is, or a folder with binary files (or too
// big to send inline) zipped on the way. A skill holding binary files can
// thus get new versions like any other.
func runSkillsEditAny(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills edit", "ID DIR | ID ARCHIVE | ID FILE... [--message TEXT] [--expected-version N]\n\n"+
		"Replaces every file of the skill, making a new version, with:\n"+
		"  DIR      a skill folder: its files (binary ones included)\n"+
		"  ARCHIVE  a .zip, .skill, .tar, .tar.gz or .tgz archive of the skill\n"+
		"  FILE...  text files, under their paths relative to the current folder\n"+
		"An archive, or a folder with binary files, must hold this skill: its SKILL.md\n"+
		"names it (or pass --name with the name to keep). Files the same as the\n"+
		"current version's make no version. Editing an installed catalog skill forks it.")
	var o service.SkillOptions
	optionFlags(c, &o)
	var message string
	c.fs.StringVar(&message, "message", "", "what changed, kept with the version")
	expected := c.fs.Int("expected-version", 0, "fail with a conflict unless the skill is still at version N")
	if code, ok := c.parse(args, 2, -1); !ok {
		return code
	}
	var expectedVersion *int
	if given(c.fs)("expected-version") {
		expectedVersion = expected
	}
	id, paths := c.args[0], c.args[1:]
	if len(paths) == 1 && isArchiveName(paths[0]) {
		data, err := os.ReadFile(paths[0])
		if err != nil {
			return c.localError(err)
		}
		return c.editFromArchive(ctx, id, data, o, message, expectedVersion)
	}
	files, err := readTextFiles(ctx, paths)
	if dir, ok := sendAsArchive(paths, err); ok {
		// Without a top folder: the folder's name is not compared with
		// the skill's, as for the inline edit of the same folder.
		pkg, _, err := readLocalDir(ctx, dir, pack.ArchiveLimits())
		if err != nil {
			return c.localError(err)
		}
		data, err := zipPackage(pkg, "")
		if err != nil {
			return c.localError(err)
		}
		return c.editFromArchive(ctx, id, data, o, message, expectedVersion)
	}
	if be := (*binaryFileError)(nil); errors.As(err, &be) {
		return usageErrorf(c.fs, "%s is not UTF-8 text: files named one by one are sent as text; give the skill's folder, or an archive of it, instead", be.path)
	}
	if err != nil {
		return c.localError(err)
	}
	p := service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: id}, Files: files, ExpectedVersion: expectedVersion, Message: message, SkillOptions: o}
	sk, ok := call(ctx, c, service.OpSkillsEditContent, p)
	if !ok {
		return exitFailure
	}
	return c.printSkill(sk)
}

// sendAsArchive reports whether an edit of one folder whose inline read
// failed with err should go as an archive instead: a binary file, or more
// files, bytes or depth than the inline limits allow (the archive limits
// are wider). A folder the archive limits refuse too gets their error.
func sendAsArchive(paths []string, err error) (string, bool) {
	if err == nil || len(paths) != 1 {
		return "", false
	}
	if info, serr := os.Stat(paths[0]); serr != nil || !info.IsDir() {
		return "", false
	}
	be := (*binaryFileError)(nil)
	return paths[0], errors.As(err, &be) || skilld.ErrorCode(err) == skilld.ETOOLARGE || errors.Is(err, pack.ErrUnsafePath)
}

// isArchiveName reports whether a file is named as an archive, as 'skills
// upload' documents them.
func isArchiveName(p string) bool {
	name := strings.ToLower(filepath.Base(p))
	for _, ext := range []string{".zip", ".skill", ".tar", ".tar.gz", ".tgz"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

func (c *apiCmd) editFromArchive(ctx context.Context, id string, archive []byte, o service.SkillOptions, message string, expected *int) int {
	fmt.Fprintf(c.e.stderr, "uploading a new version of %s (%s)…\n", id, units.Bytes(int64(len(archive))))
	p := service.ReplaceSkillFilesFromArchiveParams{SkillRef: service.SkillRef{ID: id}, Archive: archive, ExpectedVersion: expected, Message: message, SkillOptions: o}
	sk, ok := call(ctx, c, service.OpSkillsEditFromArchive, p)
	if !ok {
		return exitFailure
	}
	return c.printSkill(sk)
}

func runSkillsDelete(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills delete", "ID [--yes]\n\n"+
		"Deletes a skill with all its versions, for good (members and up). The agents that\n"+
		"have the skill lose it; they are named first. On a terminal it asks before deleting,\n"+
		"unless --yes; from a script it does not ask, as tasks delete does not.")
	yes := c.fs.Bool("yes", false, "delete without asking")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	sk, ok := call(ctx, c, service.OpSkillsGet, service.GetSkillParams{SkillRef: service.SkillRef{ID: c.args[0]}})
	if !ok {
		return exitFailure
	}
	users, err := agentsWithSkill(ctx, c, sk.ID)
	if err != nil {
		return c.fail(err)
	}
	question := fmt.Sprintf("delete skill %q and its versions?", sk.Name)
	if len(users) > 0 {
		fmt.Fprintf(e.stderr, "skill %q is used by %s: %s\n", sk.Name, plural(len(users), "agent"), listNames(users))
		question = fmt.Sprintf("delete skill %q and its versions, and remove it from those agents?", sk.Name)
	}
	if !*yes && e.interactive && e.stdin != nil && !ask(e, bufio.NewReader(e.stdin), question) {
		fmt.Fprintln(e.stderr, "not deleted")
		return exitFailure
	}
	if _, ok := call(ctx, c, service.OpSkillsDelete, service.DeleteSkillParams{SkillRef: service.SkillRef{ID: sk.ID}}); !ok {
		return exitFailure
	}
	removed := ""
	if len(users) > 0 {
		removed = "; removed from agents " + listNames(users)
	}
	fmt.Fprintf(e.stderr, "deleted skill %q (%s)%s\n", sk.Name, sk.ID, removed)
	return exitOK
}

// agentsWithSkill names the workspace's agents that have the skill.
func agentsWithSkill(ctx context.Context, c *apiCmd, skillID string) ([]string, error) {
	var names []string
	p := service.ListAgentsParams{Skill: skillID, PageSize: service.MaxPageSize}
	for {
		page, err := request(ctx, c, service.OpAgentsList, p)
		if err != nil {
			return nil, err
		}
		for _, a := range page.Items {
			names = append(names, a.Name)
		}
		if page.NextPageToken == "" {
			return names, nil
		}
		p.PageToken = page.NextPageToken
	}
}

// plural is "1 agent", "2 agents".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// listNames joins names, the first 20 of them.
func listNames(names []string) string {
	const shown = 20
	if len(names) <= shown {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:shown], ", ") + fmt.Sprintf(" and %d more", len(names)-shown)
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
	list, ok := call(ctx, c, service.OpSkillsVersionsList, p)
	if !ok {
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
	sk, ok := call(ctx, c, service.OpSkillsVersionsRestore, service.RestoreSkillVersionParams{SkillRef: service.SkillRef{ID: c.args[0]}, Number: n})
	if !ok {
		return exitFailure
	}
	return c.printSkill(sk)
}

func runSkillsInstall(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "skills install", "REGISTRY/NAME [--version N]")
	var p service.InstallSkillParams
	c.fs.IntVar(&p.Version, "version", 0, "item version to pin (default: the latest)")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	p.Item = c.args[0]
	sk, ok := call(ctx, c, service.OpSkillsInstall, p)
	if !ok {
		return exitFailure
	}
	return c.printSkill(sk)
}

func runSkillsUpdate(ctx context.Context, e *env, args []string) int {
	return updateInstalled(ctx, e, "skills update", args)
}

// updateInstalled is "skilld skills update" and "skilld catalog update":
// an installed skill moved to another catalog version, after its trigger
// evals are compared with --eval.
func updateInstalled(ctx context.Context, e *env, name string, args []string) int {
	c := newAPICmd(e, name, "ID [--version N] [--reset] [--eval [--agent NAME] [--runs N] [--model REF]]")
	var p service.UpdateInstalledSkillParams
	var g service.EvalGateParams
	c.fs.IntVar(&p.Version, "version", 0, "catalog version to pin (default: the latest)")
	c.fs.BoolVar(&p.Reset, "reset", false, "also update a skill edited in this workspace, replacing its edits")
	eval := c.fs.Bool("eval", false, "first compare the candidate version's trigger evals with the pinned version's (an install rule's eval_max_regression refuses a regression)")
	c.fs.StringVar(&g.Agent, "agent", "", "with --eval: this agent's catalog and model (default: every agent following the skill)")
	c.fs.IntVar(&g.Runs, "runs", 0, "with --eval: times each query is asked (default 3)")
	c.fs.StringVar(&g.Model, "model", "", "with --eval: a model reference instead of each agent's")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	if *eval {
		p.Eval = &g
	} else if g != (service.EvalGateParams{}) {
		return usageErrorf(c.fs, "--agent, --runs and --model go with --eval")
	}
	p.ID = c.args[0]
	sk, ok := call(ctx, c, service.OpSkillsUpdateInstalled, p)
	if !ok {
		return exitFailure
	}
	if !c.json {
		for _, g := range sk.EvalGate {
			fmt.Fprintf(c.e.stdout, "evals with agent %s (%s): precision %.2f → %.2f, recall %.2f → %.2f\n", g.Agent, g.Model,
				g.Pinned.Precision, g.Candidate.Precision, g.Pinned.Recall, g.Candidate.Recall)
		}
	}
	return c.printSkill(sk)
}
