package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/skilld/skilld/executor"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/metrics"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/tracing"
)

// obsFlags are the observability settings of serve and worker: the log
// format and where traces go.
type obsFlags struct {
	logFlags
	otlpEndpoint string
}

func (f *obsFlags) register(fs *flag.FlagSet) {
	f.logFlags.register(fs)
	fs.StringVar(&f.otlpEndpoint, "otlp-endpoint", os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"),
		"send OpenTelemetry traces over OTLP/HTTP to this URL (http://collector:4318); none: tracing is off\n(env OTEL_EXPORTER_OTLP_ENDPOINT)")
}

func (f *obsFlags) check() error {
	if err := f.logFlags.check(); err != nil {
		return err
	}
	if f.otlpEndpoint != "" {
		if u, err := url.Parse(f.otlpEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--otlp-endpoint must be an http:// or https:// URL, not %q", f.otlpEndpoint)
		}
	}
	return nil
}

// observability is what a process reports to: metrics (serve only) and
// traces (when --otlp-endpoint is set).
type observability struct {
	metrics *metrics.Metrics         // nil on a worker
	tp      *sdktrace.TracerProvider // nil when tracing is off
	tracer  trace.Tracer             // nil when tracing is off
}

// open makes the process's metrics (when db is given: they count its
// tasks) and tracer provider. The provider is passed down, never set as
// otel's global one: nothing in skilld reads the global.
func (f *obsFlags) open(ctx context.Context, db store.Store, service string) (*observability, error) {
	o := &observability{}
	if db != nil {
		o.metrics = metrics.New(metrics.Config{Tasks: metrics.StoreTasks(db), Storage: metrics.StoreStorage(db)})
	}
	if f.otlpEndpoint == "" {
		return o, nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(tracesURL(f.otlpEndpoint)))
	if err != nil {
		return nil, fmt.Errorf("the OTLP exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service), semconv.ServiceVersion(versionString())))
	if err != nil {
		return nil, fmt.Errorf("the trace resource: %w", err)
	}
	o.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	o.tracer = o.tp.Tracer("github.com/skilld/skilld")
	return o, nil
}

// tracesURL is where the exporter posts: OTEL_EXPORTER_OTLP_ENDPOINT is
// a base URL to which the specification adds /v1/traces, while the
// exporter's WithEndpointURL takes a URL as it is; a URL with a path of
// its own is kept.
func tracesURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Path != "" && u.Path != "/") {
		return endpoint
	}
	u.Path = "/v1/traces"
	return u.String()
}

// observer is what the executor reports to: metrics and traces, either of
// which may be off.
func (o *observability) observer() executor.Observer {
	var list executor.Observers
	if o.metrics != nil {
		list = append(list, o.metrics)
	}
	if o.tracer != nil {
		list = append(list, tracing.Observer{Tracer: o.tracer})
	}
	return list
}

// close sends the spans still buffered.
func (o *observability) close(ctx context.Context) error {
	if o.tp == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := o.tp.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("flushing traces: %w", err)
	}
	return nil
}

// apiMetrics is what the API records requests to, nil without metrics (a
// nil *metrics.Metrics in the interface would not compare nil).
func (o *observability) apiMetrics() httpapi.Metrics {
	if o.metrics == nil {
		return nil
	}
	return o.metrics
}

// watchQueue reports the pool of the local executor (the watcher serve
// got from it): its queue, its places held, and the busiest workspaces'
// shares; a Temporal executor has no local pool.
func (o *observability) watchQueue(w any) {
	q, ok := w.(interface {
		Queued() int
		Running() int
		Busiest(n int) []executor.WorkspaceLoad
	})
	if o.metrics == nil || !ok {
		return
	}
	// Registering once, on a fresh registry, cannot collide.
	_ = o.metrics.WatchQueue(q.Queued)
	_ = o.metrics.WatchPool(q.Running, q.Busiest)
}
