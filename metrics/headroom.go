package metrics

import "github.com/prometheus/client_golang/prometheus"

// headroomCollector reads the server's headroom once per scrape.
type headroomCollector struct {
	disk    *prometheus.GaugeVec
	fds     *prometheus.Desc
	folders []string
	read    func() (map[string]int64, int)
}

func (c *headroomCollector) Describe(ch chan<- *prometheus.Desc) {
	c.disk.Describe(ch)
	ch <- c.fds
}

func (c *headroomCollector) Collect(ch chan<- prometheus.Metric) {
	disk, fds := c.read()
	for _, f := range c.folders {
		free, ok := disk[f]
		if !ok {
			free = -1
		}
		c.disk.WithLabelValues(f).Set(float64(free))
	}
	c.disk.Collect(ch)
	ch <- prometheus.MustNewConstMetric(c.fds, prometheus.GaugeValue, float64(fds))
}
