package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/callview"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/model/provider"
	"github.com/skilld/skilld/agent/tokenizer"
	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/pack"
	"github.com/skilld/skilld/sandbox"
	"github.com/skilld/skilld/sandbox/bwrap"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/skillmd"
	"github.com/skilld/skilld/skillsearch"
)

// runFlags are the settings of `skilld run`.
type runFlags struct {
	storage       storageFlags
	skills        pathList
	agent         string
	workspace     string
	model         string
	baseURL       string
	apiKey        string
	instruction   string
	sandbox       sandboxFlags
	keepSandbox   bool
	cacheDir      string
	context       contextFlags
	encoding      string
	approve       string
	maxIterations int
	json          bool
	verbose       *bool
}

func runRun(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "run", "[--skills DIR]... [--agent ID --workspace WS] --model REF [flags] TASK\n\n"+
		"Runs one task in this process and prints its events. With --skills, the agent\n"+
		"gets the skills found in the folders (no server or database needed); with\n"+
		"--agent, a stored agent runs on the storage given by --data/--db/--blobs, and\n"+
		"the task is recorded there. Exit status: 0 when the task completes, 1 when it\n"+
		"fails, 2 on usage errors.\n\n"+
		"Models: openai:<model> (OpenAI-compatible servers: OpenAI, Ollama, vLLM,\n"+
		"llama.cpp, LM Studio), anthropic:<model>, scripted:<file.json>.")
	var f runFlags
	f.storage.register(fs)
	fs.Var(&f.skills, "skills", "a skill folder or a folder of skills; repeatable")
	fs.StringVar(&f.agent, "agent", "", "run this stored agent (ID or name) instead")
	fs.StringVar(&f.workspace, "workspace", cmp.Or(os.Getenv("SKILLD_WORKSPACE"), service.BootstrapWorkspace), "workspace of --agent (env SKILLD_WORKSPACE)")
	fs.StringVar(&f.model, "model", "", "model reference, such as openai:gpt-4o-mini (with --agent: overrides the agent's)")
	fs.StringVar(&f.baseURL, "base-url", "", "the provider's API base URL (default: OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the public API)")
	fs.StringVar(&f.apiKey, "api-key", "", "API key (default: OPENAI_API_KEY / ANTHROPIC_API_KEY)")
	fs.StringVar(&f.instruction, "instruction", "You are a helpful agent. Use the available skills when a task matches one.", "the agent's instruction (with --skills)")
	f.sandbox.register(fs)
	fs.BoolVar(&f.keepSandbox, "keep-sandbox", false, "keep the task's sandbox folder when the run ends and print where it is\n"+
		"(by default it is removed; with --skills it is a new private folder in the temporary directory,\n"+
		"with --agent it is <work-dir>/sandboxes/<task id>)")
	fs.StringVar(&f.cacheDir, "cache-dir", "", "the skill cache of this command (default: <user cache dir>/skilld/skill-cache, mode 0700)")
	f.context.register(fs)
	fs.StringVar(&f.encoding, "tokenizer", "", "token encoding to count with (o200k_base, cl100k_base; default: the model's)")
	fs.StringVar(&f.approve, "approve", "never", "tool calls that need approval: never (refuse), all (approve), ask (prompt on the terminal)")
	fs.IntVar(&f.maxIterations, "max-iterations", agent.DefaultMaxIterations, "most model calls for the task")
	fs.BoolVar(&f.json, "json", false, "print the events as JSON lines")
	f.verbose = verboseFlag(fs)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	switch {
	case len(pos) != 1 || strings.TrimSpace(pos[0]) == "":
		return usageErrorf(fs, "give the task as one argument (quote it)")
	case len(f.skills.dirs) > 0 && f.agent != "":
		return usageErrorf(fs, "use either --skills or --agent, not both")
	case f.agent == "" && f.model == "":
		return usageErrorf(fs, "--model is required (for example --model openai:gpt-4o-mini)")
	case f.approve != "never" && f.approve != "all" && f.approve != "ask":
		return usageErrorf(fs, "--approve must be never, all or ask")
	}
	if err := f.context.check(); err != nil {
		return usageErrorf(fs, "%s", errorText(err))
	}
	if f.context.maxLoaded > 0 && f.context.placement != agent.PlacementContext {
		return usageErrorf(fs, "--max-loaded applies to --placement context")
	}
	set := given(fs)
	if f.agent != "" {
		for _, n := range contextFlagNames() {
			if set(n) && n != "context-window" {
				return usageErrorf(fs, "--%s applies to --skills runs; a stored agent has its own config.context (skilld agents update)", n)
			}
		}
	}
	if f.model != "" {
		if _, err := model.ParseRef(f.model); err != nil {
			return usageErrorf(fs, "%s", errorText(err))
		}
		if f.context.window == 0 {
			if w, ok := model.ContextWindow(f.model); ok {
				f.context.window = w
			} else if f.agent == "" {
				return usageErrorf(fs, "the context window of %s is not known; give --context-window", f.model)
			}
		}
	}
	if err := f.sandbox.check(); err != nil {
		return usageErrorf(fs, "%s", errorText(err))
	}
	if f.cacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			fmt.Fprintf(e.stderr, "skilld run: no cache directory (%v); give --cache-dir\n", err)
			return exitFailure
		}
		f.cacheDir = filepath.Join(dir, "skilld", "skill-cache")
	}
	// The output's reader going away (`skilld run … | head`) or the
	// terminal closing ends the run as Ctrl-C does, its sandbox removed,
	// instead of killing the process and leaving the sandbox mounted.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGPIPE, syscall.SIGHUP)
	defer stop()
	p := newPrinter(e, f.json)
	p.verbose = *f.verbose
	p.live()
	defer p.close()
	m := &models{opts: provider.Options{BaseURL: f.baseURL, APIKey: f.apiKey, OnRetry: p.retry}, tokens: tokenizer.NewCache(), encoding: f.encoding,
		scripted: true, onText: p.text}
	var err error
	var status skilld.TaskStatus
	if f.agent != "" {
		status, err = runStoredAgent(ctx, e, &f, m, p, pos[0])
	} else {
		status, err = runLocalSkills(ctx, e, &f, m, p, pos[0])
	}
	p.close()
	if err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil {
		err = fmt.Errorf("stopped (%w)", context.Cause(ctx))
	}
	if err != nil {
		code := exitFailure
		if skilld.ErrorCode(err) == skilld.EINVALID {
			code = exitUsage
		}
		fmt.Fprintf(e.stderr, "skilld run: %s\n", errorText(err))
		return code
	}
	if status != skilld.TaskCompleted {
		return exitFailure
	}
	return exitOK
}

// approver returns the approver --approve asks for.
func (f *runFlags) approver(e *env) agent.Approver {
	switch f.approve {
	case "all":
		return agent.ApproveAll{}
	case "ask":
		if e.stdin != nil {
			return &terminalApprover{e: e, in: bufio.NewReader(e.stdin)}
		}
	}
	return nil
}

// runLocalSkills runs the task with skills read from disk.
func runLocalSkills(ctx context.Context, e *env, f *runFlags, m *models, p *printer, input string) (skilld.TaskStatus, error) {
	pkgs := &agent.MemoryPackages{}
	var skills []agent.Skill
	seen := map[string]string{}
	// One skill that does not load does not stop the others: it is named
	// with its path and reason, and the run goes on without it.
	skipped := 0
	skip := func(path string, err error) {
		skipped++
		fmt.Fprintf(e.stderr, "skilld run: skipped %s: %v\n", path, err)
		for _, d := range skilld.ErrorDetails(err) {
			fmt.Fprintf(e.stderr, "  %s: %s\n", d.Field, d.Message)
		}
	}
	for _, dir := range f.skills.dirs {
		for _, src := range resolveSources(ctx, dir) {
			if src.err != nil {
				skip(src.path, src.err)
				continue
			}
			if src.archive {
				skip(src.path, skilld.Errorf(skilld.EINVALID, "--skills takes folders, not archives"))
				continue
			}
			s, err := localSkill(ctx, src.path, pkgs)
			if err != nil {
				skip(src.path, err)
				continue
			}
			if prev, dup := seen[s.Name]; dup {
				skip(src.path, skilld.Errorf(skilld.EINVALID, "skill %q is already loaded from %s", s.Name, prev))
				continue
			}
			seen[s.Name] = src.path
			skills = append(skills, s)
		}
	}
	if len(skills) == 0 && skipped > 0 {
		return "", fmt.Errorf("none of the skills in --skills could be loaded (%d skipped, named above)", skipped)
	}
	mdl, name, err := m.open(f.model)
	if err != nil {
		return "", err
	}
	counter, err := m.counter(f.model)
	if err != nil {
		return "", err
	}
	// A private folder (mode 0700) of its own for this run's sandbox; the
	// folders of runs that were killed go first.
	root, err := bwrap.RunDir("skilld-run-", f.keepSandbox)
	if err != nil {
		return "", err
	}
	sbx, err := f.sandbox.open(ctx, e.stderr, root, f.cacheDir)
	if err != nil {
		bwrap.RemoveRunDir(root)
		return "", err
	}
	defer sbx.close()
	sb, err := sbx.Create(ctx, sandbox.CreateParams{ID: "run"})
	if err != nil {
		bwrap.RemoveRunDir(root)
		return "", err
	}
	defer f.release(e, sb, root)
	f.announce(e, sb)
	info := sbx.Info()
	a, err := agent.New(agent.Config{
		Model: mdl, ModelName: name, Instruction: f.instruction, Window: f.context.window, Skills: skills, Packages: pkgs,
		Placement: f.context.placement, MaxLoaded: f.context.maxLoaded, MaxMessages: f.context.maxMessages, NoCompaction: f.context.compaction == "off",
		EntryShare: f.context.entryShare, SkillsShare: f.context.skillsShare,
		Sandbox: sb, SandboxInfo: &info, Tokenizer: counter, Approver: f.approver(e), MaxIterations: f.maxIterations, Gate: p.gate,
	})
	if err != nil {
		return "", err
	}
	status := skilld.TaskFailed
	for ev, err := range a.Run(ctx, agent.Task{ID: "local", Input: input}) {
		if err != nil {
			return "", err
		}
		p.event(ev)
		if ev.Type == agent.EventTaskCompleted {
			status = skilld.TaskCompleted
		}
	}
	return status, nil
}

// announce says where the run's sandbox is and what becomes of it.
func (f *runFlags) announce(e *env, sb sandbox.Sandbox) {
	if f.json {
		return
	}
	if f.keepSandbox {
		fmt.Fprintf(e.stderr, "sandbox: %s (kept)\n", sb.HostPath())
	} else {
		fmt.Fprintf(e.stderr, "sandbox: %s (removed at the end; --keep-sandbox keeps it)\n", sb.HostPath())
	}
}

// release removes the run's sandbox, or says where it is kept. root, when
// set, is a folder made for the sandbox alone, removed with it.
func (f *runFlags) release(e *env, sb sandbox.Sandbox, root string) {
	if f.keepSandbox {
		fmt.Fprintf(e.stderr, "sandbox kept: %s\n", sb.HostPath())
		if mountRoot(sb.HostPath()) {
			fmt.Fprintf(e.stderr, "  it is a mount of its own (nosuid, and size-limited where it is an image): umount it before removing its folder\n")
		}
		return
	}
	if err := sb.Destroy(context.Background()); err != nil {
		fmt.Fprintf(e.stderr, "skilld run: removing the sandbox: %v\n", err)
	}
	if root != "" {
		if err := bwrap.RemoveRunDir(root); err != nil {
			fmt.Fprintf(e.stderr, "skilld run: removing the sandbox's folder: %v\n", err)
		}
	}
}

// localSkill reads and checks one skill folder. Its ID is its absolute
// path, so its sandbox folder is stable across runs.
func localSkill(ctx context.Context, dir string, pkgs *agent.MemoryPackages) (agent.Skill, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return agent.Skill{}, err
	}
	pkg, err := pack.ReadDir(ctx, abs, pack.ArchiveLimits())
	if err != nil {
		return agent.Skill{}, err
	}
	// As lenient as the clients people run skills in: unknown keys and
	// over-long descriptions are warnings.
	r := checkPackage(pkg, skillmd.Options{Dir: filepath.Base(abs), Lenient: true, LongFields: true})
	if err := r.Err(); err != nil {
		if r.Skill != nil && r.Skill.Name != "" {
			return agent.Skill{}, fmt.Errorf("skill %q: %w", r.Skill.Name, err)
		}
		return agent.Skill{}, err
	}
	var files []string
	for _, en := range pkg.Entries() {
		files = append(files, en.Path)
	}
	var codex []byte
	if f, ok := pkg.File(skillmd.CodexMetadataFile); ok {
		codex = f.Data
	}
	noModel, _ := skillmd.Invocation(nil, codex)
	var headings []string
	for _, f := range pkg.Files() {
		if pack.IsSkillMD(f.Path) {
			headings = skillsearch.Headings(f.Data)
		}
	}
	return agent.Skill{ID: "path:" + abs, Name: r.Skill.Name, Description: r.Skill.Description, Digest: pkgs.Add(pkg), Files: files, Headings: headings,
		NoModelInvocation: r.Skill.DisableModelInvocation || noModel, NoUserInvocation: r.Skill.NoUserInvocation}, nil
}

// runStoredAgent records and runs a task of a stored agent.
func runStoredAgent(ctx context.Context, e *env, f *runFlags, m *models, p *printer, input string) (skilld.TaskStatus, error) {
	db, blobs, err := f.storage.openExisting(ctx)
	if err != nil {
		return "", err
	}
	defer db.Close()
	defer blobs.Close()
	svc := service.New(db, blobs, nil, service.Config{})
	// Whoever can open the database directly acts as its administrator.
	actor, err := svc.In(ctx, service.Actor{InstanceAdmin: true, Role: skilld.RoleAdmin, Name: "skilld run"}, f.workspace)
	if err != nil {
		return "", err
	}
	// The model first, then the sandbox: a missing API key or script, or
	// a machine that cannot run a sandbox, fails at once, before a
	// sandbox folder or a task exists.
	opts := executor.RunOptions{Approver: f.approver(e), Window: f.context.window, KeepSandbox: f.keepSandbox, OnEvent: p.event, Gate: p.gate,
		OnSandbox: func(sb sandbox.Sandbox) { f.announce(e, sb) }}
	if opts.Approver == nil {
		opts.Approver = refuseAll{}
	}
	if f.model != "" {
		if opts.Model, opts.ModelName, err = m.open(f.model); err != nil {
			return "", err
		}
	} else {
		ag, err := svc.GetAgent(ctx, actor, service.GetAgentParams{AgentRef: service.AgentRef{ID: f.agent}})
		if err != nil {
			return "", err
		}
		// Opened here only to be checked; the executor opens the
		// snapshot's model itself.
		if ag.Config.Model != "" {
			if _, _, err := m.open(ag.Config.Model); err != nil {
				return "", fmt.Errorf("agent %s: %w", ag.Name, err)
			}
		}
	}
	work, err := f.storage.workDir()
	if err != nil {
		return "", err
	}
	sbx, err := f.sandbox.open(ctx, e.stderr, filepath.Join(work, "sandboxes"), f.cacheDir)
	if err != nil {
		return "", err
	}
	defer sbx.close()
	task, err := svc.StartTask(ctx, actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: f.agent}, Input: input})
	if err != nil {
		return "", err
	}
	if !f.json {
		fmt.Fprintf(e.stderr, "task: %s\n", task.ID)
	}
	done, err := newExecutor(svc, db, blobs, sbx, nil, m, execOptions{network: f.sandbox.network}).Run(ctx, task, opts)
	if err != nil {
		return "", err
	}
	return done.Status, nil
}

// refuseAll rejects every call that needs approval: nobody is there to
// approve in a non-interactive run.
type refuseAll struct{}

func (refuseAll) Approve(context.Context, agent.ApprovalRequest) (bool, error) { return false, nil }

// terminalApprover asks on the terminal.
type terminalApprover struct {
	e  *env
	in *bufio.Reader
}

func (t *terminalApprover) Approve(_ context.Context, req agent.ApprovalRequest) (bool, error) {
	args := callview.ParseArgs(req.Tool, req.Arguments).String()
	return ask(t.e, t.in, fmt.Sprintf("approve %s %s (%s)?", req.Tool, cutLine(strings.ReplaceAll(args, "\n", " "), 200), req.Reason)), nil
}

// mountRoot reports whether path is the root of a mount (a root server's
// workspace is).
func mountRoot(path string) bool {
	var st unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, 0, &st) != nil {
		return false
	}
	return st.Attributes_mask&st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
}
