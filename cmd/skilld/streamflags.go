package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"

	"github.com/skilld/skilld/internal/streamlimit"
	"github.com/skilld/skilld/metrics"
)

// Defaults of the limits on what clients hold open.
const (
	// DefaultStreamsPerToken and DefaultMCPSessionsPerToken bound one
	// token: far more than one client follows at once (a CLI follows one
	// task, a browser tab one), far fewer than one token needs to crowd
	// out the others.
	DefaultStreamsPerToken     = 32
	DefaultMCPSessionsPerToken = 32

	// The server-wide limits are derived from the descriptor limit
	// (RLIMIT_NOFILE), after a reserve for everything else the process
	// opens: descriptorReserve for the listener, the database (SQLite's
	// writer and readers with their WAL files, or PostgreSQL's pool), blob
	// files being read or written, the log and trace exporters; and
	// descriptorsPerTask for each task the local executor may run at once
	// (its command's pipes and pidfd and the sandbox's files, about seven
	// measured, its model call's connection, its egress proxy's sockets).
	// Half of the rest is for event streams, a quarter for MCP sessions
	// (each holds one GET stream), a quarter stays for ordinary requests.
	descriptorReserve  = 128
	descriptorsPerTask = 12
	// minDerivedLimit keeps a server short of descriptors usable, and
	// maxDerivedLimit bounds a generous one: every open event stream
	// reads its task's log twice a second.
	minDerivedLimit = 16
	maxDerivedLimit = 1024
)

// streamFlags are serve's limits on task event streams (the API's and the
// web UI's) and MCP sessions, per token and in all.
type streamFlags struct {
	streams, streamsPerToken   int
	sessions, sessionsPerToken int
	envErr                     error
}

func (f *streamFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.streams, "max-streams", 0,
		"task event streams (the API's and the web UI's) open at once on this server; past it 503 with Retry-After\n"+
			"(0: derived from the descriptor limit, see docs/OPERATIONS.md) (env SKILLD_MAX_STREAMS)")
	fs.IntVar(&f.streamsPerToken, "max-streams-per-token", DefaultStreamsPerToken,
		"task event streams one token may hold open at once; past it 429 with Retry-After (env SKILLD_MAX_STREAMS_PER_TOKEN)")
	fs.IntVar(&f.sessions, "max-mcp-sessions", 0,
		"MCP sessions open at once on /mcp; past it 503 with Retry-After\n"+
			"(0: derived from the descriptor limit, see docs/OPERATIONS.md) (env SKILLD_MAX_MCP_SESSIONS)")
	fs.IntVar(&f.sessionsPerToken, "max-mcp-sessions-per-token", DefaultMCPSessionsPerToken,
		"MCP sessions one token may hold open at once; past it 429 with Retry-After (env SKILLD_MAX_MCP_SESSIONS_PER_TOKEN)")
	f.envErr = envFlags(fs, map[string]string{"max-streams": "SKILLD_MAX_STREAMS", "max-streams-per-token": "SKILLD_MAX_STREAMS_PER_TOKEN",
		"max-mcp-sessions": "SKILLD_MAX_MCP_SESSIONS", "max-mcp-sessions-per-token": "SKILLD_MAX_MCP_SESSIONS_PER_TOKEN"})
}

func (f *streamFlags) check() error {
	switch {
	case f.envErr != nil:
		return f.envErr
	case f.streams < 0:
		return fmt.Errorf("--max-streams must not be negative (0: derived), not %d", f.streams)
	case f.sessions < 0:
		return fmt.Errorf("--max-mcp-sessions must not be negative (0: derived), not %d", f.sessions)
	case f.streamsPerToken < 1:
		return fmt.Errorf("--max-streams-per-token must be at least 1, not %d", f.streamsPerToken)
	case f.sessionsPerToken < 1:
		return fmt.Errorf("--max-mcp-sessions-per-token must be at least 1, not %d", f.sessionsPerToken)
	}
	return nil
}

// derivedLimits are the server-wide limits a descriptor limit of nofile
// leaves room for, with runningTasks tasks running in this process.
func derivedLimits(nofile uint64, runningTasks int) (streams, sessions int) {
	avail := int(min(nofile, 1<<24)) - descriptorReserve - descriptorsPerTask*runningTasks
	clamp := func(n int) int { return min(max(n, minDerivedLimit), maxDerivedLimit) }
	return clamp(avail / 2), clamp(avail / 4)
}

// limiters makes the two limiters, the server-wide limits derived where
// not given, and says on stderr what they are (and when the descriptor
// limit is too low for the tasks themselves). They report to m when it
// is set. runningTasks is how many tasks run in this process at once (0
// when workers run them).
func (f *streamFlags) limiters(stderr io.Writer, m *metrics.Metrics, runningTasks int) (streams, sessions *streamlimit.Limiter) {
	total, totalSessions := f.streams, f.sessions
	nofile, known := descriptorLimit()
	from := "given"
	if total == 0 || totalSessions == 0 {
		if !known {
			nofile = 1024 // a common default where the limit cannot be read
		}
		ds, dm := derivedLimits(nofile, runningTasks)
		total, totalSessions = cmp.Or(total, ds), cmp.Or(totalSessions, dm)
		from = fmt.Sprintf("derived from a descriptor limit of %d", nofile)
		if need := uint64(descriptorReserve + descriptorsPerTask*runningTasks + 2*minDerivedLimit); nofile < need {
			fmt.Fprintf(stderr, "skilld: the descriptor limit (%d) is below what %d running tasks may need (%d): raise it (ulimit -n, LimitNOFILE=) or lower --max-running-tasks\n",
				nofile, runningTasks, need)
		}
	}
	// The limits per token are flags as given; the totals may be derived,
	// so they are the ones said.
	fmt.Fprintf(stderr, "skilld: at most %d event streams and %d MCP sessions open at once, %s\n", total, totalSessions, from)
	refused := func(kind string) func(string) {
		if m == nil {
			return nil
		}
		return func(reason string) { m.RefusedStream(kind, reason) }
	}
	streams = streamlimit.New(streamlimit.Config{What: "event streams", PerToken: f.streamsPerToken, Total: total, OnRefuse: refused(metrics.StreamsTaskEvents)})
	sessions = streamlimit.New(streamlimit.Config{What: "MCP sessions", PerToken: f.sessionsPerToken, Total: totalSessions, OnRefuse: refused(metrics.StreamsMCPSessions)})
	if m != nil {
		// Registering once each, on a fresh registry, cannot collide.
		_ = m.WatchStreams(metrics.StreamsTaskEvents, streams.Open)
		_ = m.WatchStreams(metrics.StreamsMCPSessions, sessions.Open)
	}
	return streams, sessions
}
