package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestAgentCatalogPressure: an agent whose forty long descriptions do not
// fit a small window's catalog budget is shown shortened there, with the
// skills named, and whole at a large window; its own window is among
// those shown, and a skill hidden from the model is listed apart.
func TestAgentCatalogPressure(t *testing.T) {
	e := newEnv(t, firstDriver(t))
	base := "/v1/workspaces/default"
	viewer := e.token("default", "viewer", "viewer")
	var refs []any
	long := strings.Repeat("Summarizes quarterly revenue spreadsheets and flags outliers in each region. ", 7)
	for i := range 40 {
		sk := e.must(201, "POST", base+"/skills", e.admin, map[string]any{"files": map[string]string{
			"SKILL.md": skillMD(fmt.Sprintf("report-%02d", i), long)}})
		refs = append(refs, map[string]any{"skill": sk["id"]})
	}
	hidden := e.must(201, "POST", base+"/skills", e.admin, map[string]any{"files": map[string]string{
		"SKILL.md": "---\nname: deploy\ndescription: Deploy the site.\ndisable-model-invocation: true\n---\n\nDeploy.\n"}})
	refs = append(refs, map[string]any{"skill": hidden["id"]})
	ag := e.must(201, "POST", base+"/agents", e.admin, map[string]any{"name": "analyst",
		"config": map[string]any{"instruction": "Report.", "model": "openai:gpt-4o", "context": map[string]any{"window": 64000}},
		"skills": refs})

	got := e.must(200, "GET", base+"/agents/"+ag["id"].(string)+"/catalog", viewer, nil)
	if got["listed"] != float64(40) || fmt.Sprint(got["hidden"]) != "[deploy]" || got["encoding"] != "o200k_base" {
		t.Fatalf("catalog = %v", got)
	}
	levels := map[float64]map[string]any{}
	for _, w := range got["windows"].([]any) {
		w := w.(map[string]any)
		levels[w["window"].(float64)] = w
	}
	small, own, large := levels[32000], levels[64000], levels[1000000]
	if small == nil || own == nil || large == nil {
		t.Fatalf("windows = %v", got["windows"])
	}
	if own["agent"] != true || small["agent"] != nil {
		t.Errorf("the agent's own window is not the one marked: %v / %v", own, small)
	}
	if small["level"] == "full" || len(small["shortened"].([]any)) != 40 || small["shortened"].([]any)[0] != "report-00" {
		t.Errorf("32k window = %v, want every skill shortened", small)
	}
	if small["tokens"].(float64) > small["budget"].(float64) && small["fits"] != false {
		t.Errorf("32k window over budget but fits: %v", small)
	}
	if large["level"] != "full" || len(large["shortened"].([]any)) != 0 || large["fits"] != true {
		t.Errorf("1M window = %v, want the full catalog", large)
	}
	e.must(404, "GET", base+"/agents/nobody/catalog", viewer, nil)
}
