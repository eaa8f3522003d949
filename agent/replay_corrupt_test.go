package agent_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/tool"
)

// A log entry that cannot be read fails the resume saying which entry is
// corrupt, rather than reporting that the log and the run diverged.
func TestResumeCorruptEntry(t *testing.T) {
	var calls atomic.Int64
	newAgent := func(log *agent.MemoryLog) *agent.Agent {
		a, err := agent.New(agent.Config{Model: script(t, do("act", map[string]any{}), do("act", map[string]any{})), Window: 10000,
			Tokenizer: runeCounter{}, Tools: []*tool.Tool{counted(t, "act", false, &calls, nil)}, Log: log})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	log := &agent.MemoryLog{}
	collect(t, newAgent(log), agent.Task{ID: "t", Input: "go"})
	all := log.Entries()
	for _, kind := range []string{agent.KindEvent, agent.KindMessage} {
		t.Run(kind, func(t *testing.T) {
			// The last entry of the kind among the first eight: the run
			// replays the ones before it first.
			entries := slices.Clone(all[:8])
			i := -1
			for j, e := range entries {
				if e.Kind == kind {
					i = j
				}
			}
			entries[i].Payload = json.RawMessage(`{"type":`)
			ev := collect(t, newAgent(agent.NewMemoryLog(entries)), agent.Task{ID: "t", Input: "go", Resume: entries})
			failed := payloads[agent.TaskFailed](ev)
			want := fmt.Sprintf("entry %d (%s) is corrupt", entries[i].Seq, kind)
			if len(failed) != 1 || !strings.Contains(failed[0].Error, want) {
				t.Fatalf("want one task.failed saying %q, got %+v (events %v)", want, failed, types(ev))
			}
		})
	}
}
