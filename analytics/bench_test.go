package analytics_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/analytics"
)

// benchLog is the log of a task of 100 model calls (tool calls, three
// activations) with 20 skills attached: about 400 entries.
func benchLog(b *testing.B) (*skills, []agent.LogEntry) {
	s := newSkills()
	for i := range 20 {
		s.add(b, fmt.Sprintf("skill-%02d", i), "Handles one particular kind of job well.", 50, "scripts/run.sh")
	}
	m := &turns{answer: func(n int, _ *model.Request) *model.Response {
		switch {
		case n%30 == 1:
			return activate(fmt.Sprintf("skill-%02d", n/30))
		case n < 100:
			return &model.Response{Message: model.Message{ToolCalls: []model.ToolCall{model.Call("emit", map[string]int{"n": 20})}}}
		}
		return answer("done")
	}}
	return s, run(b, agent.Config{Model: m, Window: 200000, Tools: []*tool.Tool{emitTool(b)}, MaxIterations: 200}, s, agent.Task{ID: "t", Input: "x"})
}

// BenchmarkExtract reads a whole task log for its skills' rows. A full
// decode of every event (agent.Event) takes about 7 ms on this log.
func BenchmarkExtract(b *testing.B) {
	s, log := benchLog(b)
	es := entries(log)
	size := 0
	for _, e := range es {
		size += len(e.Payload)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		analytics.Extract(s.list, es)
	}
}

// BenchmarkExtractFloor is the least any reader of the log does: read
// the type of each event entry.
func BenchmarkExtractFloor(b *testing.B) {
	_, log := benchLog(b)
	es := entries(log)
	for b.Loop() {
		for _, e := range es {
			if e.Kind == agent.KindEvent {
				var head struct {
					Type string `json:"type"`
				}
				json.Unmarshal(e.Payload, &head)
			}
		}
	}
}
