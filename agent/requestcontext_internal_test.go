package agent

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/skilld/skilld/agent/history"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/agent/placement"
)

// userEntry, callEntry and resultEntry are view entries with log seqs: a
// user message, an assistant message calling tools, a tool result (an
// activation's when skill is set).
func userEntry(seq int64, text string) entry {
	return entry{msg: model.Message{Role: model.RoleUser, Content: text}, tokens: 10, seq: seq}
}

func callEntry(seq int64, ids ...string) entry {
	m := model.Message{Role: model.RoleAssistant}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, model.ToolCall{ID: id, Name: "emit"})
	}
	return entry{msg: m, tokens: 5, seq: seq}
}

func resultEntry(seq int64, id, skill string) entry {
	return entry{msg: model.Message{Role: model.RoleTool, ToolCallID: id, Content: "out"}, tokens: 7, seq: seq, skill: skill, protected: skill != ""}
}

func viewOf(pin bool, es ...entry) *view {
	v := &view{pin: pin}
	for _, e := range es {
		v.add(e)
	}
	return v
}

func seqsOf(v *view) []int64 {
	var out []int64
	for _, e := range v.entries {
		out = append(out, e.seq)
	}
	return out
}

// The whole shape, in transcript placement: the catalog as rendered, the
// activation among the messages as a skill, the tools by name, nothing
// left out.
func TestDescribeRequestTranscript(t *testing.T) {
	v := viewOf(true,
		userEntry(3, "do it"),
		callEntry(4, "c1"), resultEntry(6, "c1", "guide"),
		callEntry(8, "c2"), resultEntry(10, "c2", ""))
	rc := describeRequest(requestFacts{window: 10000, budget: 8500, estimated: 900, placement: PlacementTranscript,
		tokens:  RequestTokens{System: 200, Tools: 300, Messages: v.tokens},
		catalog: &catalogFacts{level: catalogNoFiles, tokens: 150, budget: 200}, listed: []string{"guide", "other"},
		withheld: []string{"secret"}, entries: v.entries, left: v.left,
		tools: []model.ToolSpec{{Name: ActivateSkill}, {Name: "emit"}}})
	want := RequestContext{Window: 10000, Budget: 8500, EstimatedTokens: 900, Placement: PlacementTranscript,
		Tokens:   RequestTokens{System: 200, Tools: 300, Messages: 34},
		Catalog:  &RequestCatalog{Level: "no file lists", Tokens: 150, Budget: 200, Skills: []string{"guide", "other"}},
		Withheld: []string{"secret"},
		Skills:   []RequestSkill{{Name: "guide", Tokens: 7, Placement: PlacementTranscript}},
		Tools:    []string{ActivateSkill, "emit"},
		Messages: RequestMessages{Sent: 5, LeftOutSeqs: [][2]int64{}}}
	if !reflect.DeepEqual(rc, want) {
		t.Errorf("got  %+v\nwant %+v", rc, want)
	}
	b, _ := json.Marshal(rc)
	const wantJSON = `{"window":10000,"budget":8500,"estimated_tokens":900,"tokens":{"system":200,"current_context":0,"tools":300,"messages":34},"placement":"transcript",` +
		`"catalog":{"level":"no file lists","tokens":150,"budget":200,"skills":["guide","other"]},"withheld":["secret"],` +
		`"skills":[{"name":"guide","tokens":7,"placement":"transcript"}],"tools":["activate_skill","emit"],` +
		`"messages":{"sent":5,"cap":0,"left_out":0,"windowed":0,"compacted":0,"left_out_seqs":[],"summarized":false}}`
	if string(b) != wantJSON {
		t.Errorf("JSON:\n got %s\nwant %s", b, wantJSON)
	}
}

// Context placement: the loaded skills in load order, the last active; no
// catalog when the request has none; empty lists are lists, not null.
func TestDescribeRequestContextPlacement(t *testing.T) {
	v := viewOf(false, userEntry(2, "go"))
	rc := describeRequest(requestFacts{placement: PlacementContext, maxMessages: 60, entries: v.entries,
		loaded: []placement.Item{{Name: "alpha", Tokens: 40}, {Name: "beta", Tokens: 30}}})
	want := []RequestSkill{{Name: "alpha", Tokens: 40, Placement: PlacementContext}, {Name: "beta", Tokens: 30, Placement: PlacementContext, Active: true}}
	if !reflect.DeepEqual(rc.Skills, want) || rc.Catalog != nil || rc.Messages.Cap != 60 || rc.Messages.Sent != 1 {
		t.Errorf("%+v", rc)
	}
	b, _ := json.Marshal(describeRequest(requestFacts{}))
	if want := `{"window":0,"budget":0,"estimated_tokens":0,"tokens":{"system":0,"current_context":0,"tools":0,"messages":0},"placement":"","skills":[],"tools":[],` +
		`"messages":{"sent":0,"cap":0,"left_out":0,"windowed":0,"compacted":0,"left_out_seqs":[],"summarized":false}}`; string(b) != want {
		t.Errorf("empty:\n got %s\nwant %s", b, want)
	}
}

// Windowing records what left, as seq ranges that skip the events
// between messages and join across earlier windowings.
func TestLeftOutByWindowing(t *testing.T) {
	// Seqs with gaps: the events between messages.
	v := viewOf(false, userEntry(3, "q1"), callEntry(5, "a"), resultEntry(7, "a", ""), userEntry(9, "q2"),
		callEntry(11, "b"), resultEntry(13, "b", ""), userEntry(15, "q3"), callEntry(17, "c"), resultEntry(19, "c", ""))
	if n := v.window(4); n != 6 {
		t.Fatalf("window dropped %d messages", n)
	}
	if got := seqsOf(v); !slices.Equal(got, []int64{15, 17, 19}) {
		t.Fatalf("kept %v", got)
	}
	if want := (leftOut{ranges: [][2]int64{{3, 13}}, windowed: 6}); !reflect.DeepEqual(v.left, want) {
		t.Errorf("left %+v, want %+v", v.left, want)
	}
	v.add(callEntry(21, "d"))
	v.add(resultEntry(23, "d", ""))
	v.add(userEntry(25, "q4"))
	v.window(2)
	if want := (leftOut{ranges: [][2]int64{{3, 23}}, windowed: 11}); !reflect.DeepEqual(v.left, want) {
		t.Errorf("after a second window: left %+v, want %+v", v.left, want)
	}
	rc := describeRequest(requestFacts{entries: v.entries, left: v.left})
	if m := rc.Messages; m.Sent != 1 || m.LeftOut != 11 || m.Windowed != 11 || !reflect.DeepEqual(m.LeftOutSeqs, [][2]int64{{3, 23}}) || m.Summarized {
		t.Errorf("messages %+v", m)
	}
}

// In transcript placement windowing keeps the first message and the
// activation: the ranges have holes where they stay.
func TestLeftOutAroundPinned(t *testing.T) {
	v := viewOf(true, userEntry(1, "q"), callEntry(2, "a"), resultEntry(3, "a", ""), callEntry(4, "s"), resultEntry(5, "s", "guide"),
		callEntry(6, "b"), resultEntry(7, "b", ""), callEntry(8, "c"), resultEntry(9, "c", ""))
	v.window(2)
	if got := seqsOf(v); !slices.Equal(got, []int64{1, 4, 5, 8, 9}) {
		t.Fatalf("kept %v", got)
	}
	if want := [][2]int64{{2, 3}, {6, 7}}; !reflect.DeepEqual(v.left.ranges, want) {
		t.Errorf("ranges %v, want %v", v.left.ranges, want)
	}
}

// A compaction: the summarized messages are left out (by compaction), the
// summary has no seq, the lifted activation breaks the range; a second
// compaction that summarizes the first summary joins the ranges.
func TestLeftOutByCompaction(t *testing.T) {
	var es []entry
	es = append(es, userEntry(1, "start"))
	seq := int64(2)
	for i := range 8 {
		id := fmt.Sprint("c", i)
		skill := ""
		if i == 2 {
			skill = "guide"
		}
		es = append(es, callEntry(seq, id), resultEntry(seq+1, id, skill))
		seq += 3 // an event after each result
	}
	v := viewOf(true, es...)
	compactView := func() {
		plan, ok := history.Compaction(v.groups, 4)
		if !ok {
			t.Fatal("nothing to compact")
		}
		summary := entry{msg: model.Message{Role: model.RoleUser, Content: "[Summary of …]"}, tokens: 3, summary: true}
		v.rebuild(slices.Concat(plan.Head, plan.Lifted, plan.Tail), []entry{summary}, len(plan.Head), true)
	}
	compactView()
	// Kept: the first message, the summary, the activation (seqs 8, 9),
	// the newest 4 messages (20..24).
	if got := seqsOf(v); !slices.Equal(got, []int64{1, 0, 8, 9, 20, 21, 23, 24}) {
		t.Fatalf("kept %v", got)
	}
	if want := (leftOut{ranges: [][2]int64{{2, 6}, {11, 18}}, compacted: 10}); !reflect.DeepEqual(v.left, want) {
		t.Errorf("left %+v, want %+v", v.left, want)
	}
	rc := describeRequest(requestFacts{entries: v.entries, left: v.left, placement: PlacementTranscript})
	if m := rc.Messages; m.Sent != 8 || m.LeftOut != 10 || m.Compacted != 10 || !m.Summarized {
		t.Errorf("messages %+v", m)
	}
	if want := []RequestSkill{{Name: "guide", Tokens: 7, Placement: PlacementTranscript}}; !reflect.DeepEqual(rc.Skills, want) {
		t.Errorf("skills %+v", rc.Skills)
	}
	for range 3 {
		v.add(callEntry(seq, "x"))
		v.add(resultEntry(seq+1, "x", ""))
		seq += 3
	}
	compactView()
	// The old summary and 20..27 are summarized now: nothing sent lies
	// between 18 and 20, so one range from 11.
	if want := (leftOut{ranges: [][2]int64{{2, 6}, {11, 27}}, compacted: 16}); !reflect.DeepEqual(v.left, want) {
		t.Errorf("after a second compaction: left %+v, want %+v", v.left, want)
	}
}

// Lists are capped; what is not listed is counted.
func TestDescribeRequestCaps(t *testing.T) {
	var tools []model.ToolSpec
	var names []string
	for i := range maxListed + 50 {
		tools = append(tools, model.ToolSpec{Name: fmt.Sprint("t", i)})
		names = append(names, fmt.Sprint("s", i))
	}
	var left leftOut
	for i := range int64(maxLeftOutRanges + 7) {
		left.ranges = append(left.ranges, [2]int64{10 * i, 10*i + 1})
	}
	var es []entry
	for i := range maxListed + 3 {
		es = append(es, resultEntry(int64(i+1), "c", fmt.Sprint("k", i)))
	}
	rc := describeRequest(requestFacts{tools: tools, catalog: &catalogFacts{}, listed: names, withheld: names, left: left, entries: es})
	switch {
	case len(rc.Tools) != maxListed || rc.ToolsMore != 50 || rc.Tools[maxListed-1] != fmt.Sprint("t", maxListed-1):
		t.Errorf("tools: %d listed, %d more", len(rc.Tools), rc.ToolsMore)
	case len(rc.Catalog.Skills) != maxListed || rc.Catalog.SkillsMore != 50 || len(rc.Withheld) != maxListed || rc.WithheldMore != 50:
		t.Errorf("catalog: %d listed, %d more; withheld %d, %d more", len(rc.Catalog.Skills), rc.Catalog.SkillsMore, len(rc.Withheld), rc.WithheldMore)
	case len(rc.Skills) != maxListed || rc.SkillsMore != 3:
		t.Errorf("skills: %d listed, %d more", len(rc.Skills), rc.SkillsMore)
	case len(rc.Messages.LeftOutSeqs) != maxLeftOutRanges || rc.Messages.LeftOutSeqsMore != 7 || rc.Messages.LeftOutSeqs[0] != [2]int64{70, 71}:
		t.Errorf("ranges: %d listed, %d more, first %v", len(rc.Messages.LeftOutSeqs), rc.Messages.LeftOutSeqsMore, rc.Messages.LeftOutSeqs[0])
	}
	// The caller's slices are not the summary's.
	rc.Tools[0] = "changed"
	if tools[0].Name != "t0" || names[0] != "s0" {
		t.Error("describeRequest shares its input")
	}
}

func TestMergeRanges(t *testing.T) {
	for _, c := range []struct {
		ranges [][2]int64
		kept   []int64
		want   [][2]int64
	}{
		{nil, nil, nil},
		{[][2]int64{{5, 6}, {1, 2}}, nil, [][2]int64{{1, 6}}},
		{[][2]int64{{5, 6}, {1, 2}}, []int64{3}, [][2]int64{{1, 2}, {5, 6}}},
		{[][2]int64{{1, 2}, {5, 6}, {9, 9}}, []int64{7, 10}, [][2]int64{{1, 6}, {9, 9}}},
		{[][2]int64{{1, 2}, {5, 6}}, []int64{0, 8}, [][2]int64{{1, 6}}},
	} {
		if got := mergeRanges(slices.Clone(c.ranges), c.kept); !reflect.DeepEqual(got, c.want) {
			t.Errorf("mergeRanges(%v, %v) = %v, want %v", c.ranges, c.kept, got, c.want)
		}
	}
}
