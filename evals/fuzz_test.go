package evals_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/evals"
)

// FuzzParse reads arbitrary bytes as an eval set: Parse never panics, a
// refusal is EINVALID, and an accepted set holds what its checks promise
// and reads back the same after a round trip through JSON.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "sets", "*.json"))
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := evals.Parse(data)
		if err != nil {
			var se *skilld.Error
			if !errors.As(err, &se) || se.Code != skilld.EINVALID {
				t.Fatalf("refusal %v is not invalid", err)
			}
			return
		}
		if strings.TrimSpace(s.SkillName) == "" || len(s.Evals) == 0 || len(s.Evals) > evals.MaxCases {
			t.Fatalf("accepted a set without a skill or queries: %+v", s)
		}
		for i, c := range s.Evals {
			if strings.TrimSpace(c.Query) == "" || (!c.ShouldTrigger && c.ExpectedSkill != "") {
				t.Fatalf("accepted case %d: %+v", i, c)
			}
		}
		again, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := evals.Parse(again)
		if err != nil {
			t.Fatalf("a set Parse accepted is refused once marshaled: %v", err)
		}
		if len(s2.Evals) != len(s.Evals) || s2.SkillName != s.SkillName {
			t.Fatalf("round trip changed the set: %+v, %+v", s, s2)
		}
	})
}
