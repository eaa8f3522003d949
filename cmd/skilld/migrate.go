package main

import (
	"context"
	"fmt"

	"github.com/skilld/skilld/store"
)

func runMigrate(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "migrate", "[--status] [storage flags]\n\n"+
		"Applies pending database migrations (every command that opens the database\n"+
		"also does this on start). --status lists migrations without applying any.")
	var sf storageFlags
	sf.register(fs)
	status := fs.Bool("status", false, "list migrations and whether each is applied")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErrorf(fs, "unexpected argument %q", pos[0])
	}
	db, err := sf.openDB(ctx, &store.Options{SkipMigrate: true})
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld migrate: %s\n", errorText(err))
		return exitFailure
	}
	defer db.Close()
	if !*status {
		applied, err := db.Migrate(ctx)
		if err != nil {
			fmt.Fprintf(e.stderr, "skilld migrate: %s\n", errorText(err))
			return exitFailure
		}
		fmt.Fprintf(e.stdout, "applied %d migration(s)\n", len(applied))
	}
	list, err := db.MigrationStatus(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld migrate: %s\n", errorText(err))
		return exitFailure
	}
	for _, m := range list {
		state := "pending"
		if m.Applied {
			state = "applied"
		}
		fmt.Fprintf(e.stdout, "%04d_%s  %s\n", m.Version, m.Name, state)
	}
	return exitOK
}
