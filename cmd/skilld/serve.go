package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/skilld/skilld/httpapi"
)

// shutdownGrace is how long in-flight requests get to finish after a stop
// signal.
const shutdownGrace = 15 * time.Second

func runServe(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "serve", "[--addr HOST:PORT] [storage flags]\n\n"+
		"Runs the skilld server on the configured storage (by default SQLite and\n"+
		"files under ./skilld-data).")
	var sf storageFlags
	sf.register(fs)
	addr := fs.String("addr", cmp.Or(os.Getenv("SKILLD_ADDR"), "127.0.0.1:8080"), "address to listen on (env SKILLD_ADDR)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErrorf(fs, "unexpected argument %q", pos[0])
	}
	db, blobs, err := sf.openAll(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld serve: %s\n", errorText(err))
		return exitFailure
	}
	defer db.Close()
	defer blobs.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld serve: %v\n", err)
		return exitFailure
	}
	api := &httpapi.Server{DB: db, Blobs: blobs, Version: versionString()}
	srv := &http.Server{Handler: api.Handler(), ReadHeaderTimeout: 10 * time.Second}
	dbURL, blobsURL, _ := sf.urls()
	fmt.Fprintf(e.stderr, "skilld: listening on http://%s (db %s, blobs %s)\n", ln.Addr(), redactURL(dbURL), redactURL(blobsURL))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(e.stderr, "skilld serve: %v\n", err)
		return exitFailure
	case <-ctx.Done():
	}
	fmt.Fprintln(e.stderr, "skilld: shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(e.stderr, "skilld serve: shutdown: %v\n", err)
		return exitFailure
	}
	return exitOK
}
