package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/skillmd"
)

// pushSkill is one skill found on disk for push: valid, or skipped with
// the reason.
type pushSkill struct {
	path string
	dir  string // the folder name its skill name must match ("" for none)
	name string // "" when its SKILL.md names none
	pkg  *pack.Package
	skip string
}

// pushed is one line of push's plan or report, the shape --json prints.
type pushed struct {
	Path    string `json:"path"`
	Name    string `json:"name,omitempty"`
	Action  string `json:"action"` // create(d), edit(ed), unchanged, skip(ped), delete(d)
	ID      string `json:"id,omitempty"`
	Version int    `json:"version,omitempty"`
	Digest  string `json:"digest,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// pushReport is what push --json prints.
type pushReport struct {
	Items []pushed `json:"items"`
}

func runPush(ctx context.Context, e *env, args []string) int {
	c := newAPICmd(e, "push", "DIR... [--dry-run] [--prune [--yes]] [--lenient] [--message TEXT]\n\n"+
		"Creates or edits, in the workspace, every skill found under the folders given\n"+
		"(found as 'skilld validate' finds them: skill folders, archives, or folders\n"+
		"searched for skills, .claude/skills and the like included). A skill whose files\n"+
		"are the workspace's already makes no version and is reported unchanged. An\n"+
		"invalid skill is named on stderr with the reason and skipped; the exit status\n"+
		"is then 1. --prune also deletes the workspace's own skills (made from files or\n"+
		"archives, as push makes them) that no folder given holds, after asking.")
	dryRun := c.fs.Bool("dry-run", false, "show what would be created, edited, left unchanged, skipped or deleted, and change nothing")
	prune := c.fs.Bool("prune", false, "delete the workspace's own skills that are gone locally (asks first)")
	yes := c.fs.Bool("yes", false, "with --prune, delete without asking (needed without a terminal)")
	lenient := c.fs.Bool("lenient", false, "accept unknown frontmatter keys, reporting them as warnings")
	message := c.fs.String("message", "", "what changed, kept with each new version")
	if code, ok := c.parse(args, 1, -1); !ok {
		return code
	}
	locals, code, ok := findLocalSkills(ctx, c, c.args, *lenient)
	if !ok {
		return code
	}
	p, err := newPusher(ctx, c, *lenient, *message, *dryRun)
	if err != nil {
		return c.fail(err)
	}
	report, failed := p.pushAll(ctx, locals)
	if *prune {
		rs, ok := p.prune(ctx, locals, *yes)
		report = append(report, rs...)
		failed = failed || !ok
	}
	if c.json {
		c.output(pushReport{Items: report}, nil)
	} else {
		printPushReport(e.stdout, report)
	}
	if failed {
		return exitFailure
	}
	return exitOK
}

// findLocalSkills reads and checks every skill under the arguments. A path
// that does not exist is a usage error (ok false); anything else wrong
// with a skill skips that skill alone.
func findLocalSkills(ctx context.Context, c *apiCmd, args []string, lenient bool) ([]pushSkill, int, bool) {
	var sources []source
	for _, a := range args {
		sources = append(sources, resolveSources(ctx, c.e.path(a))...)
	}
	if s, ok := missingPath(sources); ok {
		return nil, usageErrorf(c.fs, "%s does not exist", s.path), false
	}
	var out []pushSkill
	for _, ls := range forEach(ctx, sources, func(ctx context.Context, s source) []pushSkill {
		return loadLocal(ctx, s, skillmd.Options{Lenient: lenient})
	}) {
		out = append(out, ls...)
	}
	// Two folders holding the same skill: the first is pushed, the
	// others named.
	first := map[string]string{}
	for i, l := range out {
		if l.skip != "" {
			continue
		}
		if p, ok := first[l.name]; ok {
			out[i].skip = fmt.Sprintf("skill %q is also in %s, which is pushed instead", l.name, p)
			continue
		}
		first[l.name] = l.path
	}
	return out, exitOK, true
}

// loadLocal reads one source: a skill folder, or an archive holding one
// skill or several.
func loadLocal(ctx context.Context, s source, opts skillmd.Options) []pushSkill {
	skip := func(path string, err error) []pushSkill { return []pushSkill{{path: path, skip: errorText(err)}} }
	if s.err != nil {
		return skip(s.path, s.err)
	}
	if !s.archive {
		if _, err := os.Lstat(filepath.Join(s.path, ".git")); err == nil {
			return skip(s.path, &checkoutError{s.path, filepath.Base(s.path)})
		}
	}
	p, dir, err := s.load(ctx)
	if err != nil {
		return skip(s.path, err)
	}
	dirs := p.SkillDirs()
	if !s.archive || len(dirs) == 0 || dirs[0] == "." {
		return []pushSkill{checkLocal(s.path, p, dir, opts)}
	}
	var out []pushSkill
	for _, d := range dirs {
		sub, err := p.Sub(d)
		if err != nil {
			out = append(out, pushSkill{path: s.path + ":" + d, skip: errorText(err)})
			continue
		}
		out = append(out, checkLocal(s.path+":"+d, sub, sub.TopDir(), opts))
	}
	return out
}

// checkLocal checks a skill's SKILL.md as the server will.
func checkLocal(path string, p *pack.Package, dir string, opts skillmd.Options) pushSkill {
	opts.Dir = dir
	l := pushSkill{path: path, dir: dir, pkg: p}
	r := checkPackage(p, opts)
	if r.Skill != nil {
		l.name = r.Skill.Name
	}
	if len(r.Errors) > 0 {
		var msgs []string
		for _, d := range r.Errors {
			msgs = append(msgs, d.Field+": "+d.Message)
		}
		l.skip = strings.Join(msgs, "; ")
	}
	return l
}

// pusher sends local skills to the workspace, whose skills remote lists.
type pusher struct {
	c       *apiCmd
	remote  []*service.SkillView
	byName  map[string]*service.SkillView
	lenient bool
	message string
	dryRun  bool
}

func newPusher(ctx context.Context, c *apiCmd, lenient bool, message string, dryRun bool) (*pusher, error) {
	remote, err := listWorkspaceSkills(ctx, c)
	if err != nil {
		return nil, err
	}
	p := &pusher{c: c, remote: remote, byName: map[string]*service.SkillView{}, lenient: lenient, message: message, dryRun: dryRun}
	for _, sk := range remote {
		p.byName[sk.Name] = sk
	}
	return p, nil
}

// pushAll pushes every skill, naming each skipped one on stderr; failed
// says some were.
func (p *pusher) pushAll(ctx context.Context, locals []pushSkill) (report []pushed, failed bool) {
	for _, l := range locals {
		r := p.push(ctx, l)
		if r.Action == "skip" || r.Action == "skipped" {
			failed = true
			fmt.Fprintf(p.c.e.stderr, "skilld %s: skipped %s: %s\n", p.c.fs.Name(), r.Path, r.Reason)
		}
		report = append(report, r)
	}
	return report, failed
}

// push creates, edits or skips one skill (or says which it would).
func (p *pusher) push(ctx context.Context, l pushSkill) pushed {
	r := pushed{Path: l.path, Name: l.name}
	skip := func(reason string) pushed {
		r.Action, r.Reason = "skipped", reason
		if p.dryRun {
			r.Action = "skip"
		}
		return r
	}
	if l.skip != "" {
		return skip(l.skip)
	}
	remote := p.byName[l.name]
	if p.dryRun {
		switch {
		case remote == nil:
			r.Action = "create"
		case remote.Digest == l.pkg.Digest():
			r.Action, r.ID, r.Version = "unchanged", remote.ID, remote.Version
		default:
			r.Action, r.ID, r.Version = "edit", remote.ID, remote.Version+1
		}
		return r
	}
	archive, err := zipPackage(l.pkg, l.dir)
	if err != nil {
		return skip(errorText(err))
	}
	opts := service.SkillOptions{Lenient: p.lenient}
	var sk *service.SkillView
	if remote == nil {
		var cl *httpapi.Client
		if cl, err = p.c.client(ctx, service.OpSkillsCreateFromArchive.Operation); err == nil {
			sk, err = cl.Upload(ctx, bytes.NewReader(archive), int64(len(archive)), opts)
		}
		r.Action = "created"
	} else {
		expected := remote.Version
		sk, err = request(ctx, p.c, service.OpSkillsEditFromArchive, service.ReplaceSkillFilesFromArchiveParams{
			SkillRef: service.SkillRef{ID: remote.ID}, Archive: archive, ExpectedVersion: &expected, Message: p.message, SkillOptions: opts})
		r.Action = "edited"
	}
	if err != nil {
		return skip(serverReason(err))
	}
	if sk.Unchanged {
		r.Action = "unchanged"
	}
	r.Name, r.ID, r.Version, r.Digest = sk.Name, sk.ID, sk.Version, sk.Digest
	return r
}

// serverReason is a server's refusal as one line, with its details.
func serverReason(err error) string {
	msg := errorText(err)
	for _, d := range skilld.ErrorDetails(err) {
		if d.Message != msg {
			msg += "; " + d.Field + ": " + d.Message
		}
	}
	return msg
}

// prune deletes the workspace's own skills (content or zip: what push
// makes) that no local folder holds, by name; a skipped local skill
// counts as held, by its name or else its folder's. ok is false when
// something was to be deleted and was not.
func (p *pusher) prune(ctx context.Context, locals []pushSkill, yes bool) ([]pushed, bool) {
	held := map[string]bool{}
	for _, l := range locals {
		held[l.name] = true
		held[filepath.Base(strings.SplitN(l.path, ":", 2)[0])] = true
		if l.dir != "" {
			held[l.dir] = true
		}
	}
	var gone []*service.SkillView
	for _, sk := range p.remote {
		if !held[sk.Name] && (sk.SourceType == skilld.SourceContent || sk.SourceType == skilld.SourceZip) {
			gone = append(gone, sk)
		}
	}
	if len(gone) == 0 {
		return nil, true
	}
	var out []pushed
	names := make([]string, len(gone))
	for i, sk := range gone {
		names[i] = sk.Name
		out = append(out, pushed{Name: sk.Name, ID: sk.ID, Version: sk.Version, Action: "delete"})
	}
	if p.dryRun {
		return out, true
	}
	e := p.c.e
	question := fmt.Sprintf("delete %d skills from the workspace that no folder given holds (%s)?", len(gone), strings.Join(names, ", "))
	switch {
	case yes:
	case e.interactive && e.stdin != nil:
		if !ask(e, bufio.NewReader(e.stdin), question) {
			fmt.Fprintln(e.stderr, "skilld push: nothing deleted")
			return nil, true
		}
	default:
		fmt.Fprintf(e.stderr, "skilld push: --prune would delete %d skills (%s); pass --yes to delete them without a terminal\n", len(gone), strings.Join(names, ", "))
		return nil, false
	}
	ok := true
	for i, sk := range gone {
		if _, err := request(ctx, p.c, service.OpSkillsDelete, service.DeleteSkillParams{SkillRef: service.SkillRef{ID: sk.ID}}); err != nil {
			out[i].Action, out[i].Reason = "not deleted", serverReason(err)
			fmt.Fprintf(e.stderr, "skilld push: could not delete %s: %s\n", sk.Name, out[i].Reason)
			ok = false
			continue
		}
		out[i].Action = "deleted"
	}
	return out, ok
}

func printPushReport(w io.Writer, report []pushed) {
	counts := map[string]int{}
	var order []string
	for _, r := range report {
		if counts[r.Action] == 0 {
			order = append(order, r.Action)
		}
		counts[r.Action]++
		line := fmt.Sprintf("%-10s %s", r.Action, cmp.Or(r.Name, "-"))
		if r.Version > 0 {
			line += fmt.Sprintf("  version %d", r.Version)
		}
		if r.Path != "" {
			line += "  " + r.Path
		}
		fmt.Fprintln(w, line)
	}
	slices.Sort(order)
	parts := make([]string, len(order))
	for i, a := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[a], a)
	}
	if len(parts) > 0 {
		fmt.Fprintln(w, strings.Join(parts, ", "))
	}
}
