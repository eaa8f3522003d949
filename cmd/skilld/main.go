// Command skilld is the one binary of skilld: the server, the database
// migrations, and the tools that validate and pack skills. Each subcommand
// lives in its own file.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/skilld/skilld/internal/initgc"
)

// The initialisers of the packages skilld imports run with the collector
// off (initgc); main's own init runs after all of them and turns it on.
func init() { initgc.Restore() }

// Exit codes shared by every subcommand.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and found a problem (an invalid skill, a failed task)
	exitUsage   = 2 // the command line itself is wrong
)

// command is one subcommand, or one verb of a command group ("skills
// list"). run gets the arguments after its name and returns the process
// exit code.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *env, args []string) int
}

// env is what a subcommand may touch: no globals, so tests run commands
// in-process side by side.
type env struct {
	stdin  io.Reader // nil when there is nothing to read (tests)
	stdout io.Writer
	stderr io.Writer
	// terminal says that stderr is a terminal, where a command may draw
	// a status line it rewrites in place; never in pipes, files or tests
	// that do not ask for it.
	terminal bool
	// interactive says that stdin is a terminal: someone is there to
	// answer a question (before a delete), where a script is not.
	interactive bool
	// dir and home are the working and home directories that init, push,
	// pull, sync and install resolve paths against; "" is the process's
	// own. Tests set them rather than change the whole process's.
	dir, home string
}

func commands() []command {
	return []command{
		{"serve", "run the skilld server", runServe},
		{"worker", "run tasks from a Temporal task queue, for servers started with --executor temporal", runWorker},
		{"run", "run one agent task in this process, with skills from disk or a stored agent", runRun},
		{"eval", "run the trigger evals of an agent's skills: does its model activate the right skill?", runEval},
		{"mcp", "serve the workspace's skills to an MCP client over stdio (Claude Desktop, VS Code, Codex)", runMCP},
		{"migrate", "apply database migrations", runMigrate},
		{"fsck", "check stored blobs and packages, and remove unreferenced blobs (--repair)", runFsck},
		{"validate", "check skills against the Agent Skills specification", runValidate},
		{"init", "create a new skill folder with a SKILL.md to fill in", runInit},
		{"lint", "report what makes skills hard for a model to select or use", runLint},
		{"scan", "scan skills for what a security review should look at (hidden text, risky commands, credentials)", runScan},
		{"pack", "print the content digest and manifest of a skill package", runPack},
		{"version", "print the skilld version", runVersion},
		{"sandbox", "build root file systems for the sandbox", runGroup("sandbox", sandboxCommands())},

		// Clients of a running server (--server, --token, --workspace).
		{"skills", "manage the workspace's skills", runGroup("skills", skillsCommands())},
		{"catalog", "list and publish catalog registries and items", runGroup("catalog", catalogCommands())},
		{"agents", "manage the workspace's agents", runGroup("agents", agentsCommands())},
		{"tasks", "start, follow, approve and cancel the workspace's tasks", runGroup("tasks", tasksCommands())},
		{"tokens", "manage the workspace's API tokens", runGroup("tokens", tokensCommands())},
		{"workspaces", "list and create workspaces", runGroup("workspaces", workspacesCommands())},
		{"policy", "show and set the workspace's install and tool policy", runGroup("policy", policyCommands())},
		{"secrets", "set, list and delete the workspace's secrets", runGroup("secrets", secretsCommands())},
		{"push", "create or edit the workspace's skills from local folders, in one command", runPush},
		{"pull", "write the workspace's skills into agent-client folders (.claude/skills, …) with a lockfile", runPull},
		{"sync", "update the skills in agent-client folders from the workspace, or exactly as the lockfile says", runSync},
		{"install", "install skills from GitHub, a git URL or a folder into the workspace (and, with --sync, locally)", runInstall},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		terminal: isTerminal(os.Stderr), interactive: isTerminal(os.Stdin)})
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, e *env) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(e.stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "skilld: unknown command %q\n\n", args[0])
	usage(e.stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: skilld <command> [flags] [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'skilld <command> -h' for a command's flags.")
}
