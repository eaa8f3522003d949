package main

import (
	"context"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/scaffold"
)

func runInit(_ context.Context, e *env, args []string) int {
	fs := newFlags(e, "init", "NAME [--description TEXT]\n\n"+
		"Creates the folder NAME in the current directory with a SKILL.md that passes\n"+
		"skilld validate: NAME as its name, the description given (else a placeholder\n"+
		"to replace) and a body explaining the layout of a skill. An invalid NAME or a\n"+
		"folder already there is a usage error (exit 2), and nothing is created.")
	description := fs.String("description", "", "what the skill does and when to use it (default: a placeholder)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageErrorf(fs, "want exactly one NAME, got %d", len(pos))
	}
	file, err := scaffold.Create(e.dir, pos[0], *description)
	switch skilld.ErrorCode(err) {
	case "":
	case skilld.EINVALID, skilld.ECONFLICT:
		return usageErrorf(fs, "%s", skilld.ErrorMessage(err))
	default:
		fmt.Fprintf(e.stderr, "skilld init: %s\n", errorText(err))
		return exitFailure
	}
	fmt.Fprintf(e.stdout, "created %s\n", file)
	if *description == "" {
		fmt.Fprintf(e.stderr, "next: replace the placeholder description in %s, then run skilld lint %s\n", file, pos[0])
	}
	return exitOK
}
