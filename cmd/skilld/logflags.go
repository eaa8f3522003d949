package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/skilld/skilld/httpapi"
)

// logFlags choose how serve and worker write their logs.
type logFlags struct {
	format string
}

func (f *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.format, "log-format", cmp.Or(os.Getenv("SKILLD_LOG_FORMAT"), "text"),
		"log lines as text (key=value) or json, one object a line (env SKILLD_LOG_FORMAT)")
}

func (f *logFlags) check() error {
	if f.format != "text" && f.format != "json" {
		return fmt.Errorf("--log-format must be text or json, not %q", f.format)
	}
	return nil
}

// logger returns the process's logger in the chosen format. Every line
// logged with a request's context carries its request_id.
func (f *logFlags) logger(w io.Writer) *slog.Logger {
	var h slog.Handler = slog.NewTextHandler(w, nil)
	if f.format == "json" {
		h = slog.NewJSONHandler(w, nil)
	}
	return slog.New(httpapi.NewLogHandler(h))
}
