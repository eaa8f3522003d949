package agent_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/sandbox"
)

// TestLoggedEventsReadBack reads events as task logs hold them, written
// before payloads had types (testdata/logged-events.jsonl: one of every
// shape the runtime wrote, and an event of a type this build does not
// know). Each decodes into its payload struct and encodes back to the same
// JSON — field names, absent fields and values alike — except task.failed's
// detail, the internal error text, which is no longer sent.
func TestLoggedEventsReadBack(t *testing.T) {
	f, err := os.Open("testdata/logged-events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	seen := map[string]bool{}
	for sc.Scan() {
		line := sc.Bytes()
		var ev agent.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		seen[ev.Type] = true
		if _, unknown := ev.Payload.(agent.UnknownPayload); unknown != (ev.Type == "skill.future") {
			t.Errorf("%s decoded as %T", line, ev.Payload)
		}
		var want map[string]any
		json.Unmarshal(line, &want)
		if ev.Type == agent.EventTaskFailed {
			delete(want, "detail")
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		json.Unmarshal(b, &got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("read back\n%s\nencoded again\n%s", line, b)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, p := range agent.Payloads() {
		if !seen[p.EventType()] {
			t.Errorf("testdata has no %s event", p.EventType())
		}
	}
}

// TestEventEncoding checks the flat form: the common fields first, then
// the payload's, and back into the same payload; an event whose fields do
// not fit its type's struct is kept as it is, not lost.
func TestEventEncoding(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, p := range []agent.Payload{
		agent.TaskStarted{InputChars: 3, Placement: agent.PlacementTranscript, WithheldTools: []string{}, Rootfs: &sandbox.RootfsInfo{Name: "host", Digest: "host"}},
		agent.LLMCallCompleted{Iteration: 2, Usage: model.Usage{PromptTokens: 10, CompletionTokens: 1}, StopReason: model.StopEnd},
		agent.ToolResult{CallRef: agent.CallRef{Tool: "shell", CallID: "c1"}, IsError: true, ErrorCode: skilld.EINVALID, Chars: 12},
		agent.SkillEnvironment{Skill: "s", State: "ready", EnvironmentLayer: &agent.EnvironmentLayer{Kinds: []string{"python"}, Key: "k"}},
		agent.SandboxEgressDenied{Host: "b.example", Port: 443, Reason: "not allowed"},
		agent.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "shell", Arguments: json.RawMessage(`{"command":"ls","z":1,"a":2}`)}}, Tokens: 9},
	} {
		b, err := json.Marshal(agent.Event{TaskID: "t1", Seq: 4, Time: at, Payload: p})
		if err != nil {
			t.Fatal(err)
		}
		head := `{"type":"` + p.EventType() + `","task_id":"t1","seq":4,"time":"2026-01-02T03:04:05.000000006Z",`
		if !strings.HasPrefix(string(b), head) {
			t.Errorf("%s does not start with %s", b, head)
		}
		var back agent.Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.Type != p.EventType() || back.TaskID != "t1" || back.Seq != 4 || !back.Time.Equal(at) || !reflect.DeepEqual(back.Payload, p) {
			t.Errorf("%s read back as %+v", b, back)
		}
	}
	// An empty payload leaves the common fields alone.
	if b, _ := json.Marshal(agent.Event{TaskID: "t", Payload: agent.UnknownPayload{Type: "x"}}); string(b) != `{"type":"x","task_id":"t","seq":0,"time":"0001-01-01T00:00:00Z"}` {
		t.Errorf("empty payload: %s", b)
	}
	// A field of the wrong type keeps the event whole, as an unknown one.
	odd := `{"type":"task.completed","task_id":"t","seq":1,"time":"2026-01-02T03:04:05Z","output":"x","iterations":"two"}`
	var ev agent.Event
	if err := json.Unmarshal([]byte(odd), &ev); err != nil {
		t.Fatal(err)
	}
	if _, ok := ev.Payload.(agent.UnknownPayload); !ok || ev.Type != agent.EventTaskCompleted {
		t.Fatalf("%s read as %T", odd, ev.Payload)
	}
	if b, _ := json.Marshal(ev); !sameJSON(b, []byte(odd)) {
		t.Errorf("%s encoded again as %s", odd, b)
	}
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// TestTaskFailedKeepsInternalText fails a run with an internal error whose
// text holds a secret: the task.failed event, as delivered and as logged,
// says "internal error"; the text is only in its Cause, for whoever runs
// the task to log.
func TestTaskFailedKeepsInternalText(t *testing.T) {
	cause := errors.New("dial tcp 10.1.2.3:443: token=sk-live-abcdef rejected")
	m := modelFunc(func(*model.Request) (*model.Response, error) { return nil, cause })
	log := &agent.MemoryLog{}
	a, err := agent.New(agent.Config{Model: m, Window: 10000, Tokenizer: runeCounter{}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	events := collect(t, a, agent.Task{ID: "t", Input: "go"})
	f, ok := events[len(events)-1].Payload.(agent.TaskFailed)
	if !ok || f.Error != "internal error" || f.Code != skilld.EINTERNAL || !errors.Is(f.Cause, cause) {
		t.Fatalf("last event %+v", events[len(events)-1])
	}
	b, _ := json.Marshal(events[len(events)-1])
	for _, e := range log.Entries() {
		b = append(b, e.Payload...)
	}
	if strings.Contains(string(b), "sk-live") || strings.Contains(string(b), "10.1.2.3") {
		t.Errorf("the event or the log carries the internal error:\n%s", b)
	}
}
