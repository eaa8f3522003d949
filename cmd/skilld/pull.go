package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/clientdirs"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/service"
)

// placeCmd is pull or sync: the flags they share, parsed.
type placeCmd struct {
	*apiCmd
	targets stringList
	user    bool
	agent   string
	force   bool
	locked  bool
	// What --json prints: the skills placed, and for install the
	// skills installed.
	placed    []placed
	installed []pushed
}

// placed is one skill's outcome in one lockfile, as --json prints it.
type placed struct {
	Name     string   `json:"name"`
	Version  int      `json:"version"`
	Outcome  string   `json:"outcome"`
	Folders  []string `json:"folders"`
	Reason   string   `json:"reason,omitempty"`
	Lockfile string   `json:"lockfile"`
}

// placeReport is what pull and sync print with --json.
type placeReport struct {
	Items []placed `json:"items"`
}

func runPull(ctx context.Context, e *env, args []string) int {
	return runPlace(ctx, e, args, "pull", "[NAME[@VERSION]...] [--agent NAME] --target T... [--user] [--force]\n\n"+
		"Writes the workspace's skills (all of them, the ones an agent has attached, or the\n"+
		"ones named), each at its pinned or current version, into the skills folders of\n"+
		"agent clients, and records them in skills.lock.json. A folder edited since skilld\n"+
		"wrote it, or one skilld did not write, is not replaced unless --force; then that\n"+
		"skill is left as it is and the exit status is 1. Pull never removes a skill;\n"+
		"sync does. See docs/CLIENTS.md.")
}

func runSync(ctx context.Context, e *env, args []string) int {
	return runPlace(ctx, e, args, "sync", "[NAME[@VERSION]...] [--agent NAME] [--target T...] [--user] [--force] [--locked]\n\n"+
		"Pull, and also remove from the folders the skills in the lockfile the workspace\n"+
		"no longer has (when syncing all of them). Without --target it writes where the\n"+
		"lockfile says. With --locked it writes exactly the versions the lockfile names,\n"+
		"verifying every package digest, from the server and workspace it names (unless\n"+
		"--server or --workspace say otherwise). See docs/CLIENTS.md.")
}

func runPlace(ctx context.Context, e *env, args []string, name, synopsis string) int {
	c := &placeCmd{apiCmd: newAPICmd(e, name, synopsis)}
	c.fs.Var(&c.targets, "target", "where to write: "+strings.Join(clientdirs.ClientNames(), ", ")+", or a skills folder's path; repeatable or comma-separated")
	c.fs.BoolVar(&c.user, "user", false, "use the clients' folders in the home directory (~/.claude/skills, …) instead of the project's")
	c.fs.StringVar(&c.agent, "agent", "", "only the skills attached to this agent, at the versions it pins")
	c.fs.BoolVar(&c.force, "force", false, "replace (or remove) folders edited locally or not written by skilld")
	if name == "sync" {
		c.fs.BoolVar(&c.locked, "locked", false, "write exactly what skills.lock.json names, verifying each package digest")
	}
	if code, ok := c.parse(args, 0, -1); !ok {
		return code
	}
	if c.locked && (len(c.args) > 0 || c.agent != "") {
		return usageErrorf(c.fs, "--locked writes what the lockfile names: give no skill names and no --agent")
	}
	if c.agent != "" && len(c.args) > 0 {
		return usageErrorf(c.fs, "give skill names or --agent, not both")
	}
	groups, code, ok := c.groups()
	if !ok {
		return code
	}
	var want []clientdirs.Want
	if !c.locked {
		w, err := c.selection(ctx)
		if err != nil {
			return c.fail(err)
		}
		want = w
	}
	failed := false
	for _, g := range groups {
		var removeGone *clientdirs.Source
		if name == "sync" && !c.locked && c.agent == "" && len(c.args) == 0 {
			src := c.lockSource()
			removeGone = &src
		}
		if !c.syncGroup(ctx, g, want, removeGone) {
			failed = true
		}
	}
	if c.json {
		c.output(placeReport{Items: c.placed}, nil)
	}
	if failed {
		return exitFailure
	}
	return exitOK
}

// group is the targets of one lockfile.
type group struct {
	root    string
	targets []clientdirs.Target
}

// groups resolves --target in scope, one group per lockfile. Without
// --target, the folders the lockfile records: the project's, or with
// --user, those of every client's lockfile in the home directory.
func (c *placeCmd) groups() ([]group, int, bool) {
	cwd, err := c.e.workDir()
	if err != nil {
		return nil, c.fail(err), false
	}
	home := ""
	if c.user {
		if home, err = c.e.homeDir(); err != nil {
			return nil, c.fail(err), false
		}
	}
	scope := clientdirs.Project
	if c.user {
		scope = clientdirs.User
	}
	specs := clientdirs.SplitTargets(c.targets)
	if len(specs) > 0 {
		var targets []clientdirs.Target
		for _, s := range specs {
			t, err := clientdirs.Resolve(s, scope, cwd, home)
			if err != nil {
				return nil, usageErrorf(c.fs, "--target %s: %s", s, skilld.ErrorMessage(err)), false
			}
			targets = append(targets, t)
		}
		var out []group
		for _, g := range clientdirs.GroupByRoot(targets) {
			out = append(out, group{root: g[0].Root, targets: g})
		}
		return out, exitOK, true
	}
	roots := []string{cwd}
	if c.user {
		roots = roots[:0]
		for _, n := range clientdirs.ClientNames() {
			t, err := clientdirs.Resolve(n, scope, cwd, home)
			if err != nil {
				return nil, c.fail(err), false
			}
			roots = append(roots, t.Root)
		}
	}
	var out []group
	for _, root := range roots {
		lock, exists, err := clientdirs.ReadLockfile(root)
		if err != nil {
			return nil, c.fail(err), false
		}
		if ts := clientdirs.RecordedTargets(root, lock); exists && len(ts) > 0 {
			out = append(out, group{root: root, targets: ts})
		}
	}
	if len(out) == 0 {
		where := filepath.Join(cwd, clientdirs.LockfileName)
		if c.user {
			where = "the clients' folders in " + home
		}
		return nil, usageErrorf(c.fs, "no --target, and no %s in %s records a folder: give --target (%s, or a folder)",
			clientdirs.LockfileName, where, strings.Join(clientdirs.ClientNames(), ", ")), false
	}
	return out, exitOK, true
}

// selection lists the skills to place: those named (NAME or NAME@VERSION),
// the agent's, or every skill of the workspace.
func (c *placeCmd) selection(ctx context.Context) ([]clientdirs.Want, error) {
	var refs []skilld.AgentSkill
	switch {
	case c.agent != "":
		ag, err := request(ctx, c.apiCmd, service.OpAgentsGet, service.GetAgentParams{AgentRef: service.AgentRef{ID: c.agent}})
		if err != nil {
			return nil, err
		}
		refs = ag.Skills
	case len(c.args) > 0:
		for _, a := range c.args {
			ref, v, pinned := strings.Cut(a, "@")
			n, err := strconv.Atoi(v)
			if pinned && (err != nil || n < 1) {
				return nil, skilld.Errorf(skilld.EINVALID, "%q: the version after @ must be a positive number", a)
			}
			refs = append(refs, skilld.AgentSkill{SkillID: ref, Version: n})
		}
	default:
		all, err := listWorkspaceSkills(ctx, c.apiCmd)
		if err != nil {
			return nil, err
		}
		var out []clientdirs.Want
		for _, sk := range all {
			out = append(out, clientdirs.Want{Name: sk.Name, ID: sk.ID, Version: sk.Version, Digest: sk.Digest, Source: c.lockSource()})
		}
		return out, nil
	}
	var out []clientdirs.Want
	for _, r := range refs {
		sk, err := request(ctx, c.apiCmd, service.OpSkillsGet, service.GetSkillParams{SkillRef: service.SkillRef{ID: r.SkillID}})
		if err != nil {
			return nil, err
		}
		w := clientdirs.Want{Name: sk.Name, ID: sk.ID, Version: sk.Version, Digest: sk.Digest, Source: c.lockSource()}
		if r.Version > 0 && r.Version != sk.Version {
			v, err := request(ctx, c.apiCmd, service.OpSkillsVersionsGet, service.GetSkillVersionParams{SkillRef: service.SkillRef{ID: sk.ID}, Number: r.Version})
			if err != nil {
				return nil, err
			}
			w.Version, w.Digest = v.Number, v.Digest
		}
		out = append(out, w)
	}
	return out, nil
}

// syncGroup places the skills in one lockfile's targets and prints what
// happened; ok is false when a skill was refused or failed.
func (c *placeCmd) syncGroup(ctx context.Context, g group, want []clientdirs.Want, removeGone *clientdirs.Source) bool {
	if c.locked {
		lock, exists, err := clientdirs.ReadLockfile(g.root)
		if err != nil {
			c.fail(err)
			return false
		}
		if !exists {
			c.fail(skilld.Errorf(skilld.ENOTFOUND, "--locked: there is no %s", filepath.Join(g.root, clientdirs.LockfileName)))
			return false
		}
		for _, s := range lock.Skills {
			want = append(want, clientdirs.Want{Name: s.Name, ID: s.ID, Version: s.Version, Digest: s.Digest, Source: s.Source})
		}
	}
	s := &clientdirs.Sync{Root: g.root, Targets: g.targets, Force: c.force, RemoveGone: removeGone, Fetch: c.fetch}
	results, err := s.Run(ctx, want)
	lockfile := filepath.Join(g.root, clientdirs.LockfileName)
	for _, r := range results {
		c.placed = append(c.placed, placed{Name: r.Name, Version: r.Version, Outcome: string(r.Outcome), Folders: r.Folders, Reason: r.Reason, Lockfile: lockfile})
	}
	stdout := c.e.stdout
	if c.json {
		stdout = io.Discard
	}
	ok := printPlaced(stdout, c.e.stderr, c.fs.Name(), results)
	if err != nil {
		c.fail(err)
		return false
	}
	fmt.Fprintf(c.e.stderr, "lockfile %s\n", lockfile)
	return ok
}

// fetch downloads a skill version. The lockfile's source is where a
// --locked sync fetches from, unless --server or --workspace (or their
// variables) were given.
func (c *placeCmd) fetch(ctx context.Context, w clientdirs.Want) (*pack.Package, error) {
	if !c.locked {
		cl, err := c.client(ctx, service.OpSkillsListFiles.Operation)
		if err != nil {
			return nil, err
		}
		return fetchVersion(ctx, cl, w)
	}
	set := given(c.fs)
	cl := &httpapi.Client{BaseURL: w.Source.Server, Token: c.token, Workspace: w.Source.Workspace}
	if set("server") || os.Getenv("SKILLD_SERVER") != "" {
		cl.BaseURL = c.server
	}
	if c.workspace != "" { // only --workspace or SKILLD_WORKSPACE set it here
		cl.Workspace = c.workspace
	}
	return fetchVersion(ctx, cl, w)
}

// printPlaced writes one line per skill to stdout, and refusals and
// failures to stderr; ok is false when there were any.
func printPlaced(stdout, stderr io.Writer, cmd string, results []clientdirs.Result) bool {
	ok := true
	for _, r := range results {
		switch r.Outcome {
		case clientdirs.Refused, clientdirs.Failed:
			ok = false
			fmt.Fprintf(stderr, "skilld %s: %s %s: %s\n", cmd, r.Outcome, r.Name, r.Reason)
		default:
			line := fmt.Sprintf("%-10s %s", r.Outcome, r.Name)
			if r.Outcome != clientdirs.Removed {
				line += fmt.Sprintf("  version %d", r.Version)
			}
			if len(r.Folders) > 0 {
				line += "  " + strings.Join(r.Folders, ", ")
			}
			fmt.Fprintln(stdout, line)
		}
	}
	return ok
}
