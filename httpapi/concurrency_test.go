package httpapi_test

import (
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentEdits sends 8 concurrent PUT …/files to one skill, half of
// them with expected_version 1: every request either makes its own,
// distinct version or, only when it sent expected_version, gets 409; no
// version is lost, and the final version is the successes plus one.
func TestConcurrentEdits(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *testEnv) {
		m := e.token("default", "m", "member")
		base := "/v1/workspaces/default/skills"
		id := e.must(201, "POST", base, m, map[string]any{"files": map[string]string{"SKILL.md": skillMD("shared", "Edited by many.")}})["id"].(string)
		const n = 8
		type result struct {
			status, version int
			expected        bool
		}
		results := make([]result, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				body := map[string]any{"message": fmt.Sprintf("edit %d", i),
					"files": map[string]string{"SKILL.md": skillMD("shared", fmt.Sprintf("Edit number %d.", i))}}
				expected := i%2 == 0
				if expected {
					body["expected_version"] = 1
				}
				r := e.request("PUT", base+"/"+id+"/files", m, body)
				res := result{status: r.status, expected: expected}
				if r.status == 200 {
					res.version = int(r.json(t)["version"].(float64))
				}
				results[i] = res
			})
		}
		wg.Wait()

		// Which version each edit made, by its message.
		made := map[string]int{}
		numbers := map[int]bool{}
		for _, v := range e.must(200, "GET", base+"/"+id+"/versions", m, nil)["items"].([]any) {
			v := v.(map[string]any)
			made[fmt.Sprint(v["message"])] = int(v["number"].(float64))
			numbers[int(v["number"].(float64))] = true
		}
		ok := 0
		for i, r := range results {
			own, stored := made[fmt.Sprintf("edit %d", i)]
			switch {
			case r.status == 200 && stored:
				ok++
				// The answer shows the skill as its own edit left it.
				if r.version != own {
					t.Errorf("edit %d made version %d but answered version %d", i, own, r.version)
				}
			case r.status == 409 && r.expected && !stored:
			default:
				t.Errorf("edit %d (expected_version sent: %v): status %d, answered version %d, stored as version %d", i, r.expected, r.status, r.version, own)
			}
		}
		final := int(e.must(200, "GET", base+"/"+id, m, nil)["version"].(float64))
		if final != ok+1 || len(numbers) != ok+1 || len(made) != ok+1 {
			t.Errorf("final version %d, %d distinct versions after %d successful edits", final, len(numbers), ok)
		}
		if ok < n/2 {
			t.Errorf("only %d of %d edits succeeded; the %d without expected_version must all succeed", ok, n, n/2)
		}
	})
}
