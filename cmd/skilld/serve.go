package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/importer"
	"github.com/skilld/skilld/internal/authlimit"
	"github.com/skilld/skilld/mcpserver"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/signature"
	"github.com/skilld/skilld/web"
)

// minShutdownGrace is the least time requests get to finish after a stop
// signal, even with --shutdown-timeout 0: enough for every event stream
// to write its final event and end.
const minShutdownGrace = 500 * time.Millisecond

func runServe(ctx context.Context, e *env, args []string) int {
	// serve writes to stderr from more than one goroutine: the sandbox
	// check runs while the server starts listening.
	se := *e
	se.stderr = &lockedWriter{w: e.stderr}
	e = &se
	fs := newFlags(e, "serve", "[--addr HOST:PORT] [--path-import-root DIR]... [storage flags]\n\n"+
		"Runs the skilld server on the configured storage (by default SQLite and\n"+
		"files under ./skilld-data). On an empty database it creates the workspace\n"+
		"\"default\" and an instance-admin token: the value of SKILLD_BOOTSTRAP_TOKEN,\n"+
		"or a generated one printed once. GitHub imports use SKILLD_GITHUB_TOKEN when set.\n"+
		"Tasks run in this process; their models come from OPENAI_BASE_URL/OPENAI_API_KEY\n"+
		"and ANTHROPIC_BASE_URL/ANTHROPIC_API_KEY. Skill scripts run in a bubblewrap sandbox\n"+
		"per task under <work-dir>/sandboxes, placed skills come from <work-dir>/skill-cache;\n"+
		"without bubblewrap tasks are refused unless --sandbox unsafe-host is given.")
	var sf storageFlags
	sf.register(fs)
	var sbf sandboxFlags
	sbf.register(fs)
	var hf headroomFlags
	hf.register(fs)
	importRate := fs.Int("import-rate", envInt("SKILLD_IMPORT_RATE", service.DefaultImportsPerMinute),
		"skill imports (GitHub, server folders) one workspace may start per minute; past it 429 with Retry-After;\n-1 for no limit (env SKILLD_IMPORT_RATE)")
	searchRate := fs.Int("search-rate", envInt("SKILLD_SEARCH_RATE", service.DefaultSearchesPerMinute),
		"skill and catalog searches one workspace may make per minute; past it 429 with Retry-After; -1 for no limit\n(env SKILLD_SEARCH_RATE)")
	publicDiscovery := fs.Bool("public-discovery", os.Getenv("SKILLD_PUBLIC_DISCOVERY") == "1",
		"serve the Agent Skills discovery index of workspace \"default\" at /.well-known/agent-skills/index.json\nwithout a token (env SKILLD_PUBLIC_DISCOVERY=1)")
	keep := fs.Bool("keep-sandboxes", os.Getenv("SKILLD_KEEP_SANDBOXES") == "1",
		"keep each task's sandbox folder after the task ends, to look at what it left (env SKILLD_KEEP_SANDBOXES=1)")
	mcpOrigins := fs.String("mcp-allowed-origins", os.Getenv("SKILLD_MCP_ALLOWED_ORIGINS"),
		"browser origins besides the server's own that may call /mcp, comma-separated (https://app.example.com);\n"+
			"a request with another Origin header gets 403 (env SKILLD_MCP_ALLOWED_ORIGINS)")
	addr := fs.String("addr", cmp.Or(os.Getenv("SKILLD_ADDR"), "127.0.0.1:8080"), "address to listen on (env SKILLD_ADDR)")
	trustedRoot := fs.String("sigstore-trusted-root", os.Getenv("SKILLD_SIGSTORE_TRUSTED_ROOT"),
		"Sigstore trusted_root.json (public-good or private) that signatures on catalog items are verified\n"+
			"against, offline; none: only keyed signatures verify (env SKILLD_SIGSTORE_TRUSTED_ROOT)")
	githubAPI := fs.String("github-api-url", cmp.Or(os.Getenv("SKILLD_GITHUB_API_URL"), importer.DefaultAPIURL),
		"GitHub REST API root for imports (env SKILLD_GITHUB_API_URL)")
	roots := pathList{dirs: filepath.SplitList(os.Getenv("SKILLD_PATH_IMPORT_ROOTS"))}
	fs.Var(&roots, "path-import-root", "a server folder admins may import skills from; repeatable\n"+
		"(env SKILLD_PATH_IMPORT_ROOTS, separated by colons; none: path imports are off)")
	bodyIdle := fs.Duration("body-idle-timeout", httpapi.DefaultBodyIdleTimeout,
		"answer 408 and close the connection when a request body sends nothing for this long (env SKILLD_BODY_IDLE_TIMEOUT)")
	inFlight := fs.Int64("max-body-bytes-in-flight", httpapi.DefaultMaxBodyBytesInFlight,
		fmt.Sprintf("bytes of request bodies read at once across all requests; at least %d, one archive upload\n(env SKILLD_MAX_BODY_BYTES_IN_FLIGHT)", httpapi.MaxArchiveBody))
	authFailures := fs.Int("auth-failures-per-address", httpapi.DefaultAuthFailuresPerAddress,
		"failed token checks one client address may make per --auth-failure-window before it gets 429\n(env SKILLD_AUTH_FAILURES_PER_ADDRESS)")
	authWindow := fs.Duration("auth-failure-window", httpapi.DefaultAuthFailureWindow,
		"the window failed token checks are counted in (env SKILLD_AUTH_FAILURE_WINDOW)")
	var rf retentionFlags
	rf.register(fs)
	var kf secretsFlags
	kf.register(fs)
	envErr := errors.Join(envFlags(fs, map[string]string{"body-idle-timeout": "SKILLD_BODY_IDLE_TIMEOUT", "max-body-bytes-in-flight": "SKILLD_MAX_BODY_BYTES_IN_FLIGHT",
		"auth-failures-per-address": "SKILLD_AUTH_FAILURES_PER_ADDRESS", "auth-failure-window": "SKILLD_AUTH_FAILURE_WINDOW"}), envFlags(fs, rf.envVars()))
	var tf taskFlags
	tf.register(fs)
	tf.registerExecutor(fs)
	var lf streamFlags
	lf.register(fs)
	var of obsFlags
	of.register(fs)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErrorf(fs, "unexpected argument %q", pos[0])
	}
	if err := errors.Join(envErr, sbf.check(), tf.check(), lf.check(), of.check(), rf.check()); err != nil {
		return usageErrorf(fs, "%s", errorText(err))
	}
	allowedOrigins, err := mcpserver.ParseOrigins(*mcpOrigins)
	if err != nil {
		return usageErrorf(fs, "--mcp-allowed-origins: %s", errorText(err))
	}
	switch {
	case *bodyIdle <= 0:
		return usageErrorf(fs, "--body-idle-timeout must be positive, not %s", *bodyIdle)
	case *authFailures <= 0:
		return usageErrorf(fs, "--auth-failures-per-address must be positive, not %d", *authFailures)
	case *authWindow <= 0:
		return usageErrorf(fs, "--auth-failure-window must be positive, not %s", *authWindow)
	case *importRate == 0 || *importRate < -1:
		return usageErrorf(fs, "--import-rate must be a positive count per minute, or -1 for no limit, not %d", *importRate)
	case *searchRate == 0 || *searchRate < -1:
		return usageErrorf(fs, "--search-rate must be a positive count per minute, or -1 for no limit, not %d", *searchRate)
	case *inFlight < httpapi.MaxArchiveBody:
		return usageErrorf(fs, "--max-body-bytes-in-flight must be at least %d, the largest upload, not %d", httpapi.MaxArchiveBody, *inFlight)
	}
	keys, err := kf.keyring()
	if err != nil {
		return usageErrorf(fs, "%s", errorText(err))
	}
	// The thresholds are checked before anything is opened; the folders
	// come once the work dir is known.
	room, err := hf.monitor("", "")
	if err != nil {
		return usageErrorf(fs, "%s", errorText(err))
	}
	db, blobs, err := sf.openAll(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld serve: %s\n", errorText(err))
		return exitFailure
	}
	defer db.Close()
	defer blobs.Close()

	workDir, err := sf.workDir()
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld serve: %v\n", err)
		return exitFailure
	}
	logger := of.logger(e.stderr)
	obs, err := of.open(ctx, db, "skilld")
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld serve: %s\n", errorText(err))
		return exitFailure
	}
	defer obs.close(context.WithoutCancel(ctx)) // after the tasks stop: the runs' spans are ended by then
	tf.observer = obs.observer()
	room.Paths = map[string]string{"data": sf.data, "work": workDir}
	obs.watchHeadroom(room)
	tasks, err := tf.prepare(ctx, e, logger, db, blobs, sbf, filepath.Join(workDir, "sandboxes"), filepath.Join(workDir, "skill-cache"), *keep)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld serve: %s\n", errorText(err))
		return exitFailure
	}
	defer tasks.stop()
	var sigstore *signature.Verifier
	if *trustedRoot != "" {
		if sigstore, err = signature.LoadTrustedRoot(*trustedRoot); err != nil {
			fmt.Fprintf(e.stderr, "skilld serve: %s\n", errorText(err))
			return exitFailure
		}
	}
	svc := service.New(db, blobs, &importer.GitHub{APIURL: *githubAPI, Token: os.Getenv("SKILLD_GITHUB_TOKEN")},
		service.Config{PathImportRoots: roots.dirs, TaskRetention: rf.keep, Executor: tasks.make, TaskLimits: tf.limits, StorageQuota: tf.quotaBytes, Rates: service.Rates{Imports: *importRate, Searches: *searchRate},
			UsageIndexed: usageIndexed(obs.metrics), Sigstore: sigstore, Secrets: keys})
	if err := bootstrap(ctx, e, logger, svc, os.Getenv("SKILLD_BOOTSTRAP_TOKEN"), sf.adminHint()); err != nil {
		fmt.Fprintf(e.stderr, "skilld serve: %s\n", errorText(err))
		return exitFailure
	}
	watcher, err := tasks.start(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld serve: %s\n", errorText(err))
		return exitFailure
	}
	obs.watchQueue(watcher)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(e.stderr, "skilld serve: %v\n", err)
		return exitFailure
	}
	running := 0
	if tasks.local != nil {
		running = tf.maxRunning
	}
	streams, sessions := lf.limiters(e.stderr, obs.metrics, running)
	// One limit on failed token checks for every surface that takes a
	// token: the API, /mcp and the web UI's sign-in.
	auth := authlimit.New(*authFailures, *authWindow)
	api := &httpapi.Server{Service: svc, Version: versionString(), Logger: logger, Watcher: watcher, Streams: streams,
		BodyIdleTimeout: *bodyIdle, MaxBodyBytesInFlight: *inFlight, AuthLimit: auth, Metrics: obs.apiMetrics(), Tracer: obs.tracer, PublicDiscovery: *publicDiscovery,
		Degraded: room.Degraded}
	// /mcp is the MCP endpoint (streamable HTTP, docs/MCP.md).
	// /ui/ is the web UI (docs/UI.md); / sends a browser there.
	api.Mounts = map[string]http.Handler{"/mcp": mcpserver.HTTPHandler(svc, mcpserver.HTTPOptions{Options: mcpserver.Options{Version: versionString(), Logger: logger}, AllowedOrigins: allowedOrigins, Sessions: sessions, AuthLimit: auth}),
		web.Prefix: web.New(svc, web.Options{Watcher: watcher, Streams: streams, AuthLimit: auth, Logger: logger, MaxBodyBytesInFlight: *inFlight, BodyIdleTimeout: *bodyIdle}), "GET /{$}": http.HandlerFunc(web.Redirect)}
	// No overall read timeout: a 64 MiB upload on a slow link is legitimate.
	srv := &http.Server{Handler: api.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	// Shutdown waits for requests to end, and a stream ends only when its
	// task does or its client leaves: closing the limiters ends them at
	// once, each with a final event telling its client to reconnect, and
	// refuses new ones.
	srv.RegisterOnShutdown(func() {
		streams.Close()
		sessions.Close()
	})
	dbURL, blobsURL, _ := sf.urls()
	fmt.Fprintf(e.stderr, "skilld: listening on http://%s (db %s, blobs %s)\n", ln.Addr(), redactURL(dbURL), redactURL(blobsURL))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	// The sweeps and the look for stale scans are background work: they
	// start once the server is serving, not in the way of its start.
	defer sweepTasks(ctx, svc, logger, obs.metrics)()
	defer sweepUsage(ctx, svc, logger)()
	defer rescanPackages(ctx, svc, logger)()
	select {
	case err := <-errc:
		fmt.Fprintf(e.stderr, "skilld serve: %v\n", err)
		return exitFailure
	case <-ctx.Done():
	}
	fmt.Fprintln(e.stderr, "skilld: shutting down")
	// The tasks drain (new ones refused, running ones given
	// --shutdown-timeout) while the HTTP server stops, not after it, so
	// the whole stop takes --shutdown-timeout at most, whatever is
	// connected.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		tasks.drain()
	}()
	shutdownHTTP(e, srv, max(tf.shutdownTimeout, minShutdownGrace))
	<-drained
	return exitOK
}

// shutdownHTTP stops srv: no new connections, streams end at once (see
// RegisterOnShutdown), requests in flight get grace to finish. Those
// still running after it are cut off: a stop must not wait on a client.
func shutdownHTTP(e *env, srv *http.Server, grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		fmt.Fprintf(e.stderr, "skilld: requests still running after %s were cut off\n", grace)
		srv.Close()
	}
}

// bootstrap prepares an empty database: workspace "default" and an
// instance-admin token, with the given secret or a generated one that is
// printed this once (only its hash is stored). A database that has
// workspaces is left alone and nothing is printed, except a warning when
// a secret was given that is not already a token: someone expects it to
// work, and hint says how to mint an admin token instead. Two servers
// starting together on one empty database may both try: the loser sees a
// conflict, which means the other one did it.
func bootstrap(ctx context.Context, e *env, logger *slog.Logger, svc *service.Service, secret, hint string) error {
	got, err := svc.Bootstrap(ctx, secret)
	switch {
	case skilld.ErrorCode(err) == skilld.ECONFLICT:
		return nil
	case err != nil:
		return fmt.Errorf("bootstrap: %w", err)
	case got == "" && secret != "":
		active, err := svc.BootstrapTokenActive(ctx, secret)
		if err != nil {
			return fmt.Errorf("bootstrap: %w", err)
		}
		if !active {
			logger.Warn("SKILLD_BOOTSTRAP_TOKEN is set but ignored: this data dir already has workspaces and an admin token, " +
				"and bootstrap runs only on an empty database; to mint another instance-admin token run: " + hint)
		}
	case got == "":
	case secret != "":
		fmt.Fprintf(e.stderr, "skilld: created workspace %q with an instance-admin token from SKILLD_BOOTSTRAP_TOKEN\n", service.BootstrapWorkspace)
	default:
		fmt.Fprintf(e.stderr, "skilld: created workspace %q and an instance-admin token:\n\n    %s\n\n"+
			"save it: it will not be shown again\n", service.BootstrapWorkspace, got)
	}
	return nil
}

// pathList is a repeatable flag of folders. Its default comes from the
// environment; the first --path-import-root on the command line replaces
// that default instead of adding to it.
type pathList struct {
	dirs []string
	set  bool
}

func (p *pathList) String() string { return strings.Join(p.dirs, string(filepath.ListSeparator)) }

func (p *pathList) Set(v string) error {
	if v == "" {
		return errors.New("empty folder")
	}
	if !p.set {
		p.dirs, p.set = nil, true
	}
	p.dirs = append(p.dirs, v)
	return nil
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
