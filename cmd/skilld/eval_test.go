package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model/provider"
	"github.com/skilld/skilld/agent/tokenizer"
	"github.com/skilld/skilld/blob/bloburl"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storeurl"
)

// overlapModel speaks Chat Completions like fakeOpenAI, but decides from
// the request: it reads the catalog in the system prompt and activates the
// skill whose description shares the most words with the user's query, if
// at least minShared; otherwise it answers in text. A vaguer description
// shares fewer words, so it measurably triggers less.
type overlapModel struct {
	calls atomic.Int64
}

const minShared = 2

var (
	catalogLine = regexp.MustCompile(`(?m)^- ([a-z0-9-]+): (.*)$`)
	word        = regexp.MustCompile(`[a-z0-9]+`)
	stopWords   = map[string]bool{"a": true, "an": true, "the": true, "of": true, "and": true, "or": true, "to": true, "in": true, "for": true,
		"is": true, "it": true, "my": true, "me": true, "this": true, "that": true, "with": true, "what": true, "use": true, "when": true}
)

func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range word.FindAllString(strings.ToLower(s), -1) {
		if !stopWords[w] {
			out[w] = true
		}
	}
	return out
}

func (m *overlapModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" {
		http.Error(w, `{"error":{"message":"bad path or key"}}`, http.StatusUnauthorized)
		return
	}
	m.calls.Add(1)
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) < 2 || req.Messages[0].Role != "system" {
		http.Error(w, `{"error":{"message":"no system prompt"}}`, http.StatusBadRequest)
		return
	}
	query := words(req.Messages[len(req.Messages)-1].Content)
	best, bestShared := "", 0
	for _, line := range catalogLine.FindAllStringSubmatch(req.Messages[0].Content, -1) {
		shared := 0
		for w := range words(line[2]) {
			if query[w] {
				shared++
			}
		}
		if shared > bestShared {
			best, bestShared = line[1], shared
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	lines := []string{chunk(`{"role":"assistant","content":"I can answer that directly."}`, "stop"), usageChunk}
	if bestShared >= minShared {
		lines = callChunks("call_1", "activate_skill", fmt.Sprintf(`{"skill_name":%q}`, best))
	}
	for _, l := range lines {
		fmt.Fprintf(w, "data: %s\n\n", l)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

const (
	csvPrecise = "Inspect CSV files, count rows, list columns, find empty values and summarize totals of a CSV table."
	csvVague   = "Helps with data."
	csvEvals   = `{"skill_name": "csv-inspector", "evals": [
		{"query": "How many rows does the orders CSV file have?", "should_trigger": true},
		{"query": "List the columns of this CSV table", "should_trigger": true},
		{"query": "Find empty values in the CSV file", "should_trigger": true},
		{"query": "Write a haiku about autumn", "should_trigger": false}
	]}`
	notesEvals = `{"skill_name": "release-notes", "evals": [
		{"query": "Write release notes from the git log for version 2", "should_trigger": true}
	]}`
)

func skillFiles(name, desc, evalSet string) map[string]string {
	return map[string]string{"SKILL.md": skillText(name, desc), "evals/evals.json": evalSet}
}

// evalData is a data folder with the two skills, an agent using them on
// the overlap model, and a service over it whose executor opens models
// against srv.
func evalData(t *testing.T, srv *httptest.Server) (data string, svc *service.Service, admin service.Actor) {
	t.Helper()
	ctx := t.Context()
	data = t.TempDir()
	db, err := storeurl.Open(ctx, "sqlite://"+filepath.Join(data, "skilld.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := bloburl.Open(ctx, "file://"+filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(); blobs.Close() })
	m := &models{opts: provider.Options{BaseURL: srv.URL + "/v1", APIKey: "test-key"}, tokens: tokenizer.NewCache()}
	svc = service.New(db, blobs, nil, service.Config{Executor: func(s *service.Service) service.Executor {
		return newExecutor(s, db, blobs, nil, errors.New("no tasks here"), m, execOptions{})
	}})
	if _, err := svc.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if admin, err = svc.In(ctx, service.Actor{InstanceAdmin: true, Role: skilld.RoleAdmin, Name: "ada"}, "default"); err != nil {
		t.Fatal(err)
	}
	for _, files := range []map[string]string{
		skillFiles("csv-inspector", csvPrecise, csvEvals),
		skillFiles("release-notes", "Write release notes from the git log of a version.", notesEvals),
	} {
		if _, err := svc.CreateSkill(ctx, admin, service.CreateSkillParams{Files: files}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateAgent(ctx, admin, service.AgentParams{Name: "analyst", Config: skilld.AgentConfig{Model: "openai:gpt-test",
		Context: skilld.ContextSettings{Window: 64000},
		Evals:   []skilld.EvalCase{{Query: "What is the weather in Paris?"}, {Query: "Summarize totals of the CSV table", ShouldTrigger: true, ExpectedSkill: "csv-inspector"}}},
		Skills: []service.AgentSkillRef{{Skill: "csv-inspector"}, {Skill: "release-notes"}}}); err != nil {
		t.Fatal(err)
	}
	return data, svc, admin
}

// evalJSON runs skilld eval --json headless and decodes its document.
func evalJSON(t *testing.T, data, srvURL string, args ...string) service.EvalRun {
	t.Helper()
	args = append([]string{"eval", "--data", data, "--agent", "analyst", "--json", "--base-url", srvURL + "/v1", "--api-key", "test-key"}, args...)
	code, out, errOut := runCLI(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var run service.EvalRun
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&run); err != nil || dec.More() {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	// The shape scripts read: per skill, precision and recall in 0–1 and
	// the per-query trigger rates.
	var raw struct {
		Skills map[string]struct {
			Precision *float64 `json:"precision"`
			Recall    *float64 `json:"recall"`
			Queries   []struct {
				Query string   `json:"query"`
				Rate  *float64 `json:"rate"`
			} `json:"queries"`
		} `json:"skills"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	for name, s := range raw.Skills {
		if s.Precision == nil || s.Recall == nil || *s.Precision < 0 || *s.Precision > 1 || *s.Recall < 0 || *s.Recall > 1 || len(s.Queries) == 0 {
			t.Errorf("skill %s: %s", name, out)
		}
		for _, q := range s.Queries {
			if q.Rate == nil || *q.Rate < 0 || *q.Rate > 1 {
				t.Errorf("skill %s query %q has no rate in 0–1", name, q.Query)
			}
		}
	}
	return run
}

// A precise description triggers on its queries; the same skill with a
// vague one triggers measurably less, and both results are stored by
// digest.
func TestEvalVagueDescriptionTriggersLess(t *testing.T) {
	t.Parallel()
	m := &overlapModel{}
	srv := httptest.NewServer(m)
	defer srv.Close()
	data, svc, admin := evalData(t, srv)
	ctx := t.Context()

	precise := evalJSON(t, data, srv.URL, "--runs", "2")
	csv := precise.Skills["csv-inspector"]
	if precise.Runs != 2 || csv == nil || csv.Recall != 1 || csv.Precision != 1 || len(csv.Queries) != 5 {
		t.Fatalf("precise description: %+v", csv)
	}
	if notes := precise.Skills["release-notes"]; notes == nil || notes.Recall != 1 {
		t.Errorf("release-notes: %+v", notes)
	}
	// 4 + 1 + 2 queries, 2 runs each, 129 tokens a call.
	if calls := m.calls.Load(); calls != 14 || precise.Tokens != 14*129 {
		t.Errorf("%d model calls, %d tokens; want 14 and %d", calls, precise.Tokens, 14*129)
	}

	desc := csvVague
	if _, err := svc.UpdateSkillMetadata(ctx, admin, service.UpdateSkillMetadataParams{SkillRef: service.SkillRef{ID: "csv-inspector"}, Description: &desc}); err != nil {
		t.Fatal(err)
	}
	vague := evalJSON(t, data, srv.URL, "--runs", "2", "--skill", "csv-inspector")
	vcsv := vague.Skills["csv-inspector"]
	if vcsv == nil || len(vague.Skills) != 1 {
		t.Fatalf("--skill: %+v", vague.Skills)
	}
	if vcsv.Recall >= csv.Recall-0.5 {
		t.Errorf("a vague description's recall %.2f is not clearly below the precise one's %.2f", vcsv.Recall, csv.Recall)
	}
	t.Logf("csv-inspector recall: precise %.2f [%.2f, %.2f], vague %.2f [%.2f, %.2f]", csv.Recall, csv.RecallLow, csv.RecallHigh, vcsv.Recall, vcsv.RecallLow, vcsv.RecallHigh)

	list, err := svc.ListEvals(ctx, admin, service.ListEvalsParams{Agent: "analyst", Skill: "csv-inspector"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 || list.Items[0].SkillDigest == list.Items[1].SkillDigest || list.Items[0].Recall != vcsv.Recall || list.Items[1].Recall != 1 ||
		list.Items[0].Model != "openai:gpt-test" || list.Items[0].Runs != 2 || list.Items[0].Queries != 5 || len(list.Items[0].Rates) != 5 {
		t.Errorf("stored results: %+v", list.Items)
	}
}

func TestEvalUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval"}, "--agent is required"},
		{[]string{"eval", "--agent", "a", "--runs", "0"}, "--runs must be between 1 and 20"},
		{[]string{"eval", "--agent", "a", "extra"}, "unexpected argument"},
	} {
		code, _, errOut := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d %q", c.args, code, errOut)
		}
	}
}

// A catalog update whose candidate triggers worse than the pinned version
// is refused by an install rule's eval_max_regression, naming the skill,
// both scores and the rule; asked for without the rule, the comparison is
// made (reusing the pinned version's stored result) and the update goes
// through.
func TestEvalGatesCatalogUpdate(t *testing.T) {
	t.Parallel()
	m := &overlapModel{}
	srv := httptest.NewServer(m)
	defer srv.Close()
	_, svc, admin := evalData(t, srv)
	ctx := t.Context()
	if _, err := svc.CreateRegistry(ctx, admin, service.CreateRegistryParams{Name: "acme", Trust: skilld.TrustVerified}); err != nil {
		t.Fatal(err)
	}
	set := strings.ReplaceAll(csvEvals, "csv-inspector", "csv-tools")
	for _, desc := range []string{csvPrecise, csvVague} {
		if _, err := svc.PublishCatalogItem(ctx, admin, service.PublishCatalogItemParams{Registry: "acme", Archive: zipBytes(t, skillFiles("csv-tools", desc, set))}); err != nil {
			t.Fatal(err)
		}
	}
	sk, err := svc.InstallSkill(ctx, admin, service.InstallSkillParams{Item: "acme/csv-tools", Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateAgent(ctx, admin, service.AgentParams{Name: "reviewer", Config: skilld.AgentConfig{Model: "openai:gpt-test", Context: skilld.ContextSettings{Window: 64000}},
		Skills: []service.AgentSkillRef{{Skill: sk.ID}}}); err != nil {
		t.Fatal(err)
	}
	bound := 10.0
	if _, err := svc.PutPolicy(ctx, admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{{Effect: skilld.EffectAllow, Registry: "acme", EvalMaxRegression: &bound}}}); err != nil {
		t.Fatal(err)
	}
	_, err = svc.UpdateInstalledSkill(ctx, admin, service.UpdateInstalledSkillParams{SkillRef: service.SkillRef{ID: sk.ID}})
	var reg *service.EvalRegression
	if skilld.ErrorCode(err) != skilld.EFORBIDDEN || !errors.As(err, &reg) {
		t.Fatalf("update of a regressing version: %v", err)
	}
	msg := skilld.ErrorMessage(err)
	for _, want := range []string{`"csv-tools"`, "precision 1.00 → 1.00", "recall 1.00 → 0.00", "install policy rule 1 (allow registry \"acme\" eval_max_regression 10)", "100.0 points", `agent "reviewer"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not say %q", msg, want)
		}
	}
	if got, _ := svc.GetSkill(ctx, admin, service.GetSkillParams{SkillRef: service.SkillRef{ID: sk.ID}}); got == nil || got.CatalogVersion != 1 {
		t.Errorf("a refused update moved the skill: %+v", got)
	}
	list, err := svc.ListEvals(ctx, admin, service.ListEvalsParams{Agent: "reviewer"})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("results after the refusal: %+v %v", list, err)
	}

	if _, err := svc.PutPolicy(ctx, admin, service.PutPolicyParams{}); err != nil {
		t.Fatal(err)
	}
	calls := m.calls.Load()
	up, err := svc.UpdateInstalledSkill(ctx, admin, service.UpdateInstalledSkillParams{SkillRef: service.SkillRef{ID: sk.ID}, Eval: &service.EvalGateParams{Runs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if up.CatalogVersion != 2 || len(up.EvalGate) != 1 || up.EvalGate[0].Regression != 100 || up.EvalGate[0].Pinned.Recall != 1 || up.EvalGate[0].Candidate.Recall != 0 {
		t.Errorf("update with evals: %+v %+v", up.Skill, up.EvalGate)
	}
	// Only the candidate was asked again (4 queries, 1 run): the pinned
	// version's result was stored.
	if n := m.calls.Load() - calls; n != 4 {
		t.Errorf("%d model calls for the second comparison, want 4", n)
	}
}
