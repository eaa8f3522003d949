package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/units"
	"github.com/skilld/skilld/service"
)

func runFsck(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "fsck", "[--repair] [--grace 24h] [--json] [storage flags]\n\n"+
		"Checks the storage: reads every blob back and verifies it against its digest,\n"+
		"checks every package's file list against its digest and manifest, and reports\n"+
		"damaged, missing and unreferenced blobs. --repair removes unreferenced blobs\n"+
		"older than --grace and temp files crashed uploads left; it never touches a blob\n"+
		"a package or a task uses. Damaged and missing blobs come back by uploading the\n"+
		"files again. Exit status: 0 when nothing is damaged or missing, 1 otherwise.")
	var sf storageFlags
	sf.register(fs)
	repair := fs.Bool("repair", false, "remove unreferenced blobs older than --grace, and stale temp files")
	grace := fs.Duration("grace", service.DefaultFsckGrace, "how old an unreferenced blob must be before --repair removes it")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErrorf(fs, "unexpected argument %q", pos[0])
	}
	db, blobs, err := sf.openExisting(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld fsck: %s\n", errorText(err))
		return exitFailure
	}
	defer db.Close()
	defer blobs.Close()
	svc := service.New(db, blobs, nil, service.Config{})
	// Whoever can open the storage directly acts as its administrator.
	actor := service.Actor{InstanceAdmin: true, Role: skilld.RoleAdmin, Name: "skilld fsck"}
	rep, err := svc.Fsck(ctx, actor, service.FsckParams{Repair: *repair, Grace: grace.String(), Progress: func(p service.FsckProgress) {
		fmt.Fprintf(e.stderr, "fsck: %d blobs (%s) checked…\n", p.Blobs, units.Bytes(p.Bytes))
	}})
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld fsck: %s\n", errorText(err))
		return exitFailure
	}
	if *asJSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", b)
	} else {
		printFsck(e, rep, *repair)
	}
	if !rep.OK() {
		return exitFailure
	}
	return exitOK
}

func printFsck(e *env, rep *service.FsckReport, repair bool) {
	w := e.stdout
	fmt.Fprintf(w, "checked %d blobs (%s) and %d packages in %.1fs\n", rep.Blobs, units.Bytes(rep.Bytes), rep.Packages, rep.Seconds)
	for _, b := range rep.Damaged {
		fmt.Fprintf(w, "DAMAGED  %s, used by %v: %s\n", b.Digest, b.UsedBy, b.Error)
	}
	for _, b := range rep.Missing {
		fmt.Fprintf(w, "MISSING  %s, used by %v\n", b.Digest, b.UsedBy)
	}
	for _, p := range rep.BadPackages {
		fmt.Fprintf(w, "BAD PACKAGE  %s: %s\n", p.Digest, p.Problem)
	}
	fmt.Fprintf(w, "%d damaged, %d missing, %d inconsistent packages, %d unreferenced blobs\n", len(rep.Damaged), len(rep.Missing), len(rep.BadPackages), len(rep.Unreferenced))
	if repair {
		fmt.Fprintf(w, "removed %d unreferenced blobs and %d stale temp files\n", len(rep.Removed), rep.TempFilesRemoved)
	} else if len(rep.Unreferenced) > 0 {
		fmt.Fprintln(w, "run with --repair to remove unreferenced blobs older than the grace period")
	}
	if !rep.OK() {
		fmt.Fprintln(w, "damaged or missing files come back when they are uploaded again (the same skill files, in any skill)")
	}
}
