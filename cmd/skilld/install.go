package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/clientdirs"
	"github.com/skilld/skilld/importer"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/service"
)

func runInstall(ctx context.Context, e *env, args []string) int {
	c := &placeCmd{apiCmd: newAPICmd(e, "install", "SOURCE [--ref REF] [--lenient] [--sync --target T... [--user] [--force]]\n\n"+
		"Installs skills into the workspace from SOURCE, one of:\n"+
		"  OWNER/REPO[/PATH][@REF]   a GitHub repository (or a folder of it), imported by the\n"+
		"                            server under the workspace's install policy and the\n"+
		"                            importer's caps; without @REF, PATH must be one skill's folder\n"+
		"  GIT_URL[@REF]             https://…, file://… or a path ending in .git: cloned here\n"+
		"                            (git clone --depth 1), then pushed as 'skilld push' does,\n"+
		"                            within the importer's caps (10 skills, each 200 files and\n"+
		"                            10 MiB); github.com URLs go to the server's import instead\n"+
		"  DIR                       a local folder: the same as 'skilld push DIR'\n"+
		"With --sync, the skills installed are then written into --target folders, as\n"+
		"'skilld pull' writes them.")}
	ref := c.fs.String("ref", "", "branch or tag to install from (the same as @REF)")
	lenient := c.fs.Bool("lenient", false, "accept unknown frontmatter keys, reporting them as warnings")
	doSync := c.fs.Bool("sync", false, "also write the installed skills into the --target folders")
	c.fs.Var(&c.targets, "target", "with --sync: where to write ("+strings.Join(clientdirs.ClientNames(), ", ")+", or a folder); repeatable or comma-separated")
	c.fs.BoolVar(&c.user, "user", false, "with --sync: the clients' folders in the home directory")
	c.fs.BoolVar(&c.force, "force", false, "with --sync: replace folders edited locally or not written by skilld")
	if code, ok := c.parse(args, 1, 1); !ok {
		return code
	}
	var groups []group
	if *doSync {
		g, code, ok := c.groups()
		if !ok {
			return code
		}
		groups = g
	} else if len(c.targets) > 0 || c.user || c.force {
		return usageErrorf(c.fs, "--target, --user and --force go with --sync")
	}
	src, err := parseInstallSource(e, c.args[0], *ref)
	if err != nil {
		return usageErrorf(c.fs, "%s", skilld.ErrorMessage(err))
	}
	want, failed, err := c.install(ctx, src, *lenient)
	if err != nil {
		return c.fail(err)
	}
	for _, g := range groups {
		if len(want) > 0 && !c.syncGroup(ctx, g, want, nil) {
			failed = true
		}
	}
	if c.json {
		c.output(installReport{Items: c.installed, Placed: c.placed}, nil)
	}
	if failed {
		return exitFailure
	}
	return exitOK
}

// installReport is what install prints with --json: the skills installed
// and, with --sync, where they were written.
type installReport struct {
	Items  []pushed `json:"items"`
	Placed []placed `json:"placed,omitempty"`
}

// installSource is a parsed SOURCE argument: exactly one of github (an
// import URL, with skill to pick one folder), gitURL or dir is set.
type installSource struct {
	github, skill string
	gitURL, ref   string
	dir           string
}

// parseInstallSource tells the kinds of SOURCE apart: a URL or a path
// ending in .git is a repository to clone (github.com ones are imported by
// the server), an existing folder is pushed, and OWNER/REPO[/PATH] names a
// GitHub repository. @REF at the end of a URL or OWNER/REPO is the ref.
func parseInstallSource(e *env, arg, ref string) (installSource, error) {
	isURL := strings.Contains(arg, "://") || strings.HasPrefix(arg, "git@")
	if info, err := os.Stat(e.path(arg)); err == nil && info.IsDir() && !isURL && !strings.HasSuffix(arg, ".git") {
		if ref != "" {
			return installSource{}, skilld.Errorf(skilld.EINVALID, "%s is a local folder: it has no ref", arg)
		}
		return installSource{dir: arg}, nil
	}
	base, atRef := splitRef(arg)
	if ref != "" && atRef != "" && ref != atRef {
		return installSource{}, skilld.Errorf(skilld.EINVALID, "%s names ref %q and --ref %q", arg, atRef, ref)
	}
	ref = cmp.Or(ref, atRef)
	if isURL || strings.HasSuffix(base, ".git") {
		if gh, err := importer.ParseGitHubURL(base); err == nil {
			return githubSource(gh.Owner, gh.Repo, gh.Path, cmp.Or(ref, gh.Ref)), nil
		}
		if !isURL {
			abs, err := filepath.Abs(e.path(base))
			if err != nil {
				return installSource{}, err
			}
			base = (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
		}
		return installSource{gitURL: base, ref: ref}, nil
	}
	segs := strings.Split(strings.Trim(base, "/"), "/")
	if len(segs) >= 2 && !strings.HasPrefix(base, ".") && !strings.HasPrefix(base, "/") {
		src := githubSource(segs[0], segs[1], strings.Join(segs[2:], "/"), ref)
		if _, err := importer.ParseGitHubURL(src.github); err != nil {
			return installSource{}, err
		}
		return src, nil
	}
	return installSource{}, skilld.Errorf(skilld.EINVALID, "%s is not a folder, a git URL or OWNER/REPO[/PATH][@REF]", arg)
}

// splitRef cuts "@REF" off the last path segment ("git@host:x" keeps its
// @, as does a URL's user).
func splitRef(s string) (string, string) {
	i := strings.LastIndexAny(s, "/:")
	if j := strings.LastIndex(s, "@"); j > i && i >= 0 {
		return s[:j], s[j+1:]
	}
	return s, ""
}

// githubSource is the server import of a repository, or of PATH in it:
// with a ref, as a /tree/ URL (every skill below PATH); without one, the
// default branch with PATH as the one skill to pick.
func githubSource(owner, repo, path, ref string) installSource {
	u := "https://github.com/" + owner + "/" + repo
	switch {
	case ref != "":
		u += "/tree/" + ref
		if path != "" {
			u += "/" + path
		}
		return installSource{github: u}
	default:
		return installSource{github: u, skill: path}
	}
}

// install puts the skills of src into the workspace and returns them as
// skills a sync places; failed says some were skipped.
func (c *placeCmd) install(ctx context.Context, src installSource, lenient bool) ([]clientdirs.Want, bool, error) {
	if src.github != "" {
		fmt.Fprintf(c.e.stderr, "importing %s…\n", strings.TrimPrefix(src.github, "https://"))
		p := service.ImportGitHubParams{URL: src.github, SkillName: src.skill, ImportAll: src.skill == "", Lenient: lenient}
		res, err := request(ctx, c.apiCmd, service.OpSkillsImportGitHub, p)
		if err != nil {
			return nil, false, err
		}
		var want []clientdirs.Want
		for _, sk := range res.Items {
			c.installed = append(c.installed, pushed{Path: sk.SourceURL, Name: sk.Name, Action: "installed", ID: sk.ID, Version: sk.Version, Digest: sk.Digest})
			want = append(want, clientdirs.Want{Name: sk.Name, ID: sk.ID, Version: sk.Version, Digest: sk.Digest, Source: c.lockSource()})
		}
		if !c.json {
			printPushReport(c.e.stdout, c.installed)
		}
		return want, false, nil
	}
	dir, caps := src.dir, false
	if src.gitURL != "" {
		tmp, err := os.MkdirTemp("", "skilld-install-")
		if err != nil {
			return nil, false, err
		}
		defer os.RemoveAll(tmp)
		if dir, err = cloneShallow(ctx, src.gitURL, src.ref, tmp); err != nil {
			return nil, false, err
		}
		caps = true
	}
	locals, code, ok := findLocalSkills(ctx, c.apiCmd, []string{dir}, lenient)
	if !ok {
		return nil, false, skilld.Errorf(skilld.EINVALID, "%s (exit %d)", dir, code)
	}
	if caps {
		// Named as in the repository, not by the temporary clone.
		for i, l := range locals {
			switch rel, err := filepath.Rel(dir, l.path); {
			case err == nil && rel == ".":
				locals[i].path = src.gitURL
			case err == nil:
				locals[i].path = src.gitURL + ":" + filepath.ToSlash(rel)
			}
		}
		if err := importCaps(locals); err != nil {
			return nil, false, err
		}
	}
	p, err := newPusher(ctx, c.apiCmd, lenient, "", false)
	if err != nil {
		return nil, false, err
	}
	report, failed := p.pushAll(ctx, locals)
	c.installed = report
	if !c.json {
		printPushReport(c.e.stdout, report)
	}
	var want []clientdirs.Want
	for _, r := range report {
		if r.ID != "" && r.Digest != "" {
			want = append(want, clientdirs.Want{Name: r.Name, ID: r.ID, Version: r.Version, Digest: r.Digest, Source: c.lockSource()})
		}
	}
	return want, failed, nil
}

// importCaps holds skills cloned from a repository to what the server's
// GitHub importer takes from one: at most importer.MaxPackagesPerImport
// skills, each within pack.GitHubLimits(). A skill over them is skipped.
func importCaps(locals []pushSkill) error {
	if len(locals) > importer.MaxPackagesPerImport {
		return skilld.Errorf(skilld.ETOOLARGE, "the repository holds %d skills; an install takes at most %d (push a clone's folders with 'skilld push' instead)",
			len(locals), importer.MaxPackagesPerImport)
	}
	for i, l := range locals {
		if l.skip != "" || l.pkg == nil {
			continue
		}
		if _, err := pack.New(l.pkg.Files(), pack.GitHubLimits()); err != nil {
			locals[i].skip = "over the importer's limits: " + errorText(err)
		}
	}
	return nil
}

// cloneShallow clones ref (a branch or tag; the default branch when "")
// of the repository at rawURL into a folder under tmp, with the git
// binary, and removes the clone's .git so that only the tracked files
// remain to push.
func cloneShallow(ctx context.Context, rawURL, ref, tmp string) (string, error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return "", skilld.Errorf(skilld.EUNAVAILABLE, "installing from a git URL needs the git program: %w", err)
	}
	dir := filepath.Join(tmp, "repo")
	args := []string{"-c", "protocol.ext.allow=never", "clone", "--quiet", "--depth", "1", "--no-tags"}
	if ref != "" {
		args = append(args, "--branch", ref)
	}
	args = append(args, "--", rawURL, dir)
	cmd := exec.CommandContext(ctx, git, args...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", skilld.Errorf(skilld.EINVALID, "git clone %s failed: %s", rawURL, strings.TrimSpace(string(out)))
		}
		return "", fmt.Errorf("git clone %s: %w", rawURL, err)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
		return "", err
	}
	return dir, nil
}
