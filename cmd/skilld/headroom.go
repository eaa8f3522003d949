package main

import (
	"cmp"
	"flag"
	"os"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/internal/headroom"
	"github.com/skilld/skilld/sandbox"
)

// headroomFlags are serve's thresholds below which it reports itself
// degraded.
type headroomFlags struct {
	disk string
	fds  int
}

func (f *headroomFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.disk, "min-free-disk", cmp.Or(os.Getenv("SKILLD_MIN_FREE_DISK"), "256MiB"),
		"below this much free space on the file system of --data or --work-dir, /healthz answers \"degraded\"; off to\nnever (env SKILLD_MIN_FREE_DISK)")
	fs.IntVar(&f.fds, "min-free-fds", envInt("SKILLD_MIN_FREE_FDS", headroom.DefaultMinFreeFDs),
		"below this many free file descriptors, /healthz answers \"degraded\"; 0 to never (env SKILLD_MIN_FREE_FDS)")
}

// monitor is the headroom of the data and work folders with the
// thresholds given; it refuses a threshold it cannot read.
func (f *headroomFlags) monitor(data, work string) (*headroom.Monitor, error) {
	m := &headroom.Monitor{Paths: map[string]string{"data": data, "work": work}, MinFreeFDs: f.fds}
	switch v := strings.TrimSpace(strings.ToLower(f.disk)); v {
	case "off", "0":
		m.MinFreeDisk = -1
	default:
		n, err := sandbox.ParseSize(v)
		if err != nil {
			return nil, skilld.Errorf(skilld.EINVALID, "--min-free-disk: %s", skilld.ErrorMessage(err))
		}
		m.MinFreeDisk = n
	}
	switch {
	case f.fds < 0:
		return nil, skilld.Errorf(skilld.EINVALID, "--min-free-fds %d: give 0 (never) or more", f.fds)
	case f.fds == 0:
		m.MinFreeFDs = -1
	}
	return m, nil
}

// watchHeadroom reports m to the metrics, when there are metrics.
func (o *observability) watchHeadroom(m *headroom.Monitor) {
	if o.metrics == nil {
		return
	}
	folders := make([]string, 0, len(m.Paths))
	for name := range m.Paths {
		folders = append(folders, name)
	}
	_ = o.metrics.WatchHeadroom(folders, func() (map[string]int64, int) {
		s := m.Read()
		return s.FreeDisk, s.FreeFDs
	})
}
