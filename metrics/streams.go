package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/skilld/skilld/internal/streamlimit"
)

// Kinds of what a server holds open for its clients (the kind label of
// skilld_open_streams and skilld_stream_refusals_total): one limiter each.
const (
	StreamsTaskEvents  = "task_events"  // task event streams: the API's and the web UI's
	StreamsMCPSessions = "mcp_sessions" // sessions of /mcp
)

// streamKinds and streamReasons are the label values, all known in
// advance: the series exist at 0 from the start and cannot multiply.
var (
	streamKinds   = []string{StreamsTaskEvents, StreamsMCPSessions}
	streamReasons = []string{streamlimit.ReasonPerToken, streamlimit.ReasonTotal, streamlimit.ReasonShutdown}
)

func newStreamRefusals() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "stream_refusals_total",
		Help: "Event streams and MCP sessions refused, by kind (task_events, mcp_sessions) and reason " +
			"(per_token: 429, the token holds its most; total: 503, the server does; shutdown: 503, the server is stopping)."},
		[]string{"kind", "reason"})
	for _, kind := range streamKinds {
		for _, reason := range streamReasons {
			c.WithLabelValues(kind, reason)
		}
	}
	return c
}

// RefusedStream counts a refusal of a limiter of kind (a
// streamlimit.Config.OnRefuse).
func (m *Metrics) RefusedStream(kind, reason string) {
	m.streamRefusals.WithLabelValues(kind, reason).Inc()
}

// WatchStreams adds skilld_open_streams{kind}, read from open at each
// scrape (streamlimit.Limiter.Open). Like WatchQueue it is separate from
// New: the limiters are made after the metrics they report to.
func (m *Metrics) WatchStreams(kind string, open func() int) error {
	return m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "open_streams",
		Help:        "Event streams and MCP sessions this server holds open, by kind (task_events, mcp_sessions).",
		ConstLabels: prometheus.Labels{"kind": kind}}, func() float64 { return float64(open()) }))
}
