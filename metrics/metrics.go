// Package metrics holds skilld's Prometheus metrics: one registry per
// server (no global default registry), the HTTP handler that serves it,
// and the recorders the API (httpapi.Metrics) and the executor
// (executor.Observer) report to. The agent-level series are derived from
// each run's event stream, so the runtime itself knows nothing of them.
// docs/OPERATIONS.md ("Observability") lists every series.
package metrics

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/sandbox"
)

// Namespace prefixes every series.
const Namespace = "skilld"

// Buckets of the latency histograms, in seconds: HTTP requests are mostly
// milliseconds (uploads and event streams run long); model calls and
// sandbox commands take seconds to minutes.
var (
	httpBuckets  = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	modelBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320}
	execBuckets  = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
)

// Config is what the metrics need from the rest of the server; every field
// may be left nil, and its series is then absent.
type Config struct {
	// Tasks counts the stored tasks by status, at each scrape (see
	// StoreTasks). It gets a context bounded by TasksTimeout.
	Tasks func(ctx context.Context) (map[skilld.TaskStatus]int, error)
	// Storage returns the n workspaces whose tasks keep the most (see
	// StoreStorage), at each scrape, bounded by TasksTimeout too.
	Storage func(ctx context.Context, n int) ([]*skilld.WorkspaceUsage, error)
	// TasksTimeout bounds Tasks and Storage (default 5s), so a slow
	// database makes the series go missing instead of the scrape hang.
	TasksTimeout time.Duration
}

// Metrics is a server's registry and its series. Its methods are safe for
// concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	httpDuration  *prometheus.HistogramVec
	errors        *prometheus.CounterVec
	runs          *prometheus.CounterVec
	modelCalls    *prometheus.CounterVec
	modelErrors   *prometheus.CounterVec
	modelTokens   *prometheus.CounterVec
	modelDuration *prometheus.HistogramVec
	toolCalls     *prometheus.CounterVec
	activations   prometheus.Counter
	refusals      prometheus.Counter
	compactions   *prometheus.CounterVec
	toolsWithheld prometheus.Counter
	execDuration  prometheus.Histogram
	execErrors    prometheus.Counter
	limitKills    *prometheus.CounterVec
	egress        *prometheus.CounterVec
	egressBytes   *prometheus.CounterVec
	expired       prometheus.Counter
	// streamRefusals: see streams.go.
	streamRefusals *prometheus.CounterVec
	// skillUsage: see skill_usage.go.
	skillUsage *skillUsage
}

// New returns the metrics of one server, registered on a registry of
// their own together with the Go runtime and process collectors.
func New(cfg Config) *Metrics {
	if cfg.TasksTimeout <= 0 {
		cfg.TasksTimeout = 5 * time.Second
	}
	m := &Metrics{reg: prometheus.NewRegistry()}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	}
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "http_request_duration_seconds",
		Help: "HTTP requests by route pattern, method and status, and how long they took.", Buckets: httpBuckets}, []string{"route", "method", "status"})
	m.errors = counter("errors_total", "Server-side errors (codes unavailable, internal, integrity) by where they were seen (source: api responses, executor storage writes it waits out) and the backend that raised them (database, blob, none).", "source", "backend", "code")
	m.runs = counter("task_runs_total", "Task runs that ended, by outcome: completed, failed, cancelled, suspended (to resume), fenced (taken over).", "outcome")
	m.modelCalls = counter("model_calls_total", "Model calls that completed, by provider.", "provider")
	m.modelErrors = counter("model_call_errors_total", "Model calls that failed (the task failed while the call was open), by provider.", "provider")
	m.modelTokens = counter("model_tokens_total", "Tokens of completed model calls as the provider reported them, by provider and kind (prompt, completion).", "provider", "kind")
	m.modelDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "model_call_duration_seconds",
		Help: "How long completed model calls took, by provider.", Buckets: modelBuckets}, []string{"provider"})
	m.toolCalls = counter("tool_calls_total", "Tool results, by tool and result (ok, error).", "tool", "result")
	m.compactions = counter("context_compactions_total", "Context compactions, by result (summarized, failed).", "result")
	m.limitKills = counter("sandbox_limit_kills_total", "Sandbox commands killed by a limit, by limit.", "limit")
	m.egress = counter("sandbox_egress_total", "Connections of sandbox commands through their proxy, by result (allowed, denied).", "result")
	m.egressBytes = counter("sandbox_egress_bytes_total", "Bytes through sandbox proxies, by direction (up: from the sandbox, down: to it).", "direction")
	m.streamRefusals = newStreamRefusals()
	m.skillUsage = newSkillUsage()
	m.activations = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "skill_activations_total", Help: "Skills activated."})
	m.refusals = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "skill_refusals_total", Help: "Skill activations refused (over budget, withheld, not found)."})
	m.toolsWithheld = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "tools_withheld_total", Help: "Tools the tool policy withheld, summed over task starts."})
	m.execDuration = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "sandbox_exec_duration_seconds",
		Help: "How long sandbox commands ran.", Buckets: execBuckets})
	m.execErrors = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "sandbox_exec_errors_total", Help: "Sandbox commands that could not run at all."})
	m.expired = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "tasks_expired_total",
		Help: "Finished tasks this server's retention sweeper deleted, with their logs and outputs."})
	m.reg.MustRegister(m.httpDuration, m.errors, m.runs, m.modelCalls, m.modelErrors, m.modelTokens, m.modelDuration,
		m.toolCalls, m.activations, m.refusals, m.compactions, m.toolsWithheld, m.execDuration, m.execErrors, m.limitKills, m.egress, m.egressBytes, m.expired,
		m.streamRefusals, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Known label values start at 0, so the series exist (and rates work)
	// before the first occurrence.
	m.reg.MustRegister(m.skillUsage.collectors()...)
	for _, source := range []string{"api", "executor"} {
		for _, backend := range []string{skilld.BackendDatabase, skilld.BackendBlob, BackendNone} {
			for _, code := range serverCodes() {
				m.errors.WithLabelValues(source, backend, code)
			}
		}
	}
	for _, outcome := range []string{"completed", "failed", "cancelled", "suspended", "fenced"} {
		m.runs.WithLabelValues(outcome)
	}
	for _, result := range []string{"summarized", "failed"} {
		m.compactions.WithLabelValues(result)
	}
	for _, limit := range []string{sandbox.LimitTimeout, sandbox.LimitCPU, sandbox.LimitMemory, sandbox.LimitProcesses, sandbox.LimitOutput} {
		m.limitKills.WithLabelValues(limit)
	}
	if cfg.Tasks != nil {
		m.reg.MustRegister(&taskCollector{count: cfg.Tasks, timeout: cfg.TasksTimeout})
	}
	if cfg.Storage != nil {
		m.reg.MustRegister(&storageCollector{top: cfg.Storage, timeout: cfg.TasksTimeout})
	}
	return m
}

// WatchQueue adds skilld_queued_tasks, read from queued at each scrape
// (executor.Local.Queued). It is separate from New because the executor
// is made after the metrics it reports to.
func (m *Metrics) WatchQueue(queued func() int) error {
	return m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "queued_tasks",
		Help: "Tasks waiting in this server's local executor for a place in the pool."}, func() float64 { return float64(queued()) }))
}

// WatchHeadroom adds skilld_disk_free_bytes{folder} and
// skilld_descriptors_free, read from read at each scrape
// (headroom.Monitor.Read); folders are the operator's few named folders,
// so the labels stay bounded.
func (m *Metrics) WatchHeadroom(folders []string, read func() (disk map[string]int64, fds int)) error {
	disk := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "disk_free_bytes",
		Help: "Free bytes on the file system of each of the server's folders (data, work); -1 when it cannot be read."}, []string{"folder"})
	c := &headroomCollector{disk: disk, folders: folders, read: read,
		fds: prometheus.NewDesc(Namespace+"_descriptors_free", "File descriptors the process may still open under its limit; -1 when unknown.", nil, nil)}
	return m.reg.Register(c)
}

// Registry is the registry, for tests and for adding collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format. A
// collector that fails (the task count, when the database is out) leaves
// its series out and the rest is still served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, Registry: m.reg})
}

// ObserveRequest records a finished HTTP request (httpapi.Metrics). A
// request no route matched is recorded under route "unmatched", so that
// scanners probing random paths cannot grow the label set.
func (m *Metrics) ObserveRequest(method, route string, status int, d time.Duration) {
	if route == "" {
		route, method = "unmatched", "other"
	}
	m.httpDuration.WithLabelValues(route, method, strconv.Itoa(status)).Observe(d.Seconds())
}

// BackendNone is the backend label of a server-side error no storage
// backend raised: a bug, or a budget of the server's own spent.
const BackendNone = "none"

// serverCodes are the codes skilld_errors_total counts; the others are
// the clients' doing.
func serverCodes() []string {
	return []string{skilld.EUNAVAILABLE, skilld.EINTERNAL, skilld.EINTEGRITY}
}

// ObserveError counts an error seen by source when its code is a
// server-side one, under the backend that raised it
// (skilld.ErrorBackend; "" counts as BackendNone).
func (m *Metrics) ObserveError(source, backend, code string) {
	if !slices.Contains(serverCodes(), code) {
		return
	}
	m.errors.WithLabelValues(source, cmp.Or(backend, BackendNone), code).Inc()
}

// StorageError counts a failed attempt of an executor storage write
// (executor.Observer).
func (m *Metrics) StorageError(_ string, err error) {
	m.ObserveError("executor", skilld.ErrorBackend(err), skilld.ErrorCode(err))
}
