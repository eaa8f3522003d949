package metrics_test

import (
	"testing"

	"github.com/skilld/skilld/analytics"
	"github.com/skilld/skilld/metrics"
	"github.com/skilld/skilld/store"
)

// TestSkillUsageIndexed: indexed tasks count by outcome and their skills
// by offer, every known label from 0, and no series names a skill.
func TestSkillUsageIndexed(t *testing.T) {
	m := metrics.New(metrics.Config{})
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{}
	for _, f := range fams {
		series[f.GetName()] = len(f.GetMetric())
	}
	if series["skilld_skill_offers_total"] != len(analytics.Offers()) || series["skilld_skill_usage_tasks_indexed_total"] != 3 {
		t.Errorf("series before any task: %v", series)
	}
	m.SkillUsageIndexed(analytics.OutcomeCompleted, []store.SkillUsage{
		{SkillUse: store.SkillUse{Name: "a", Offer: analytics.OfferFull, Activations: 2, Refusals: 1}},
		{SkillUse: store.SkillUse{Name: "b", Offer: analytics.OfferShortened, Unloads: 1}},
	})
	m.SkillUsageIndexed(analytics.OutcomeFailed, []store.SkillUsage{{SkillUse: store.SkillUse{Name: "a", Offer: analytics.OfferFull, Activations: 1}}})
	m.SkillUsageIndexed(analytics.OutcomeCancelled, nil)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"skilld_skill_usage_tasks_indexed_total", map[string]string{"outcome": "completed"}, 1},
		{"skilld_skill_usage_tasks_indexed_total", map[string]string{"outcome": "cancelled"}, 1},
		{"skilld_skill_offers_total", map[string]string{"offer": "full"}, 2},
		{"skilld_skill_offers_total", map[string]string{"offer": "shortened"}, 1},
		{"skilld_skill_offers_total", map[string]string{"offer": "hidden"}, 0},
		{"skilld_skill_usage_activations_total", nil, 3},
		{"skilld_skill_usage_refusals_total", nil, 1},
		{"skilld_skill_usage_unloads_total", nil, 1},
	} {
		if got := value(t, m, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}
