package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/skilld/skilld/analytics"
	"github.com/skilld/skilld/store"
)

// skillUsage are the series of the skill usage indexer: counted as each
// finished task is indexed (service.Config.UsageIndexed), labelled only by
// offer level and outcome, never by skill or task, so their number stays
// fixed however many skills and tasks there are.
type skillUsage struct {
	tasks       *prometheus.CounterVec
	offers      *prometheus.CounterVec
	activations prometheus.Counter
	refusals    prometheus.Counter
	unloads     prometheus.Counter
}

func newSkillUsage() *skillUsage {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help})
	}
	u := &skillUsage{
		tasks: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "skill_usage_tasks_indexed_total",
			Help: "Finished tasks the skill usage indexer read, by outcome (completed, failed, cancelled)."}, []string{"outcome"}),
		offers: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "skill_offers_total",
			Help: "Attached skills of indexed tasks, by how the task's catalog offered them (full, shortened, name_only, unlisted, withheld, hidden)."}, []string{"offer"}),
		activations: counter("skill_usage_activations_total", "Skill activations in indexed tasks."),
		refusals:    counter("skill_usage_refusals_total", "Refused skill activations in indexed tasks."),
		unloads:     counter("skill_usage_unloads_total", "Skills context placement unloaded in indexed tasks."),
	}
	for _, o := range analytics.OutcomeNames() {
		u.tasks.WithLabelValues(o)
	}
	for _, o := range analytics.Offers() {
		u.offers.WithLabelValues(o)
	}
	return u
}

func (u *skillUsage) collectors() []prometheus.Collector {
	return []prometheus.Collector{u.tasks, u.offers, u.activations, u.refusals, u.unloads}
}

// SkillUsageIndexed counts a task the skill usage indexer indexed
// (service.Config.UsageIndexed). A task indexed again (run again) counts
// again.
func (m *Metrics) SkillUsageIndexed(outcome string, rows []store.SkillUsage) {
	u := m.skillUsage
	u.tasks.WithLabelValues(outcome).Inc()
	for _, r := range rows {
		u.offers.WithLabelValues(r.Offer).Inc()
		u.activations.Add(float64(r.Activations))
		u.refusals.Add(float64(r.Refusals))
		u.unloads.Add(float64(r.Unloads))
	}
}
