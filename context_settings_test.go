package skilld_test

import (
	"testing"

	"github.com/skilld/skilld"
)

// TestContextSettingsCheck: each bad setting is refused naming its field,
// and with several bad ones the first declared is named, every time.
func TestContextSettingsCheck(t *testing.T) {
	for _, tt := range []struct {
		cs    skilld.ContextSettings
		field string // "" when accepted
	}{
		{skilld.ContextSettings{}, ""},
		{skilld.ContextSettings{Placement: "context", MaxLoaded: 2, MaxMessages: 2, EntryShare: 1, SkillsShare: 0.5}, ""},
		{skilld.ContextSettings{Window: -1}, "window"},
		{skilld.ContextSettings{Placement: "sideways"}, "placement"},
		{skilld.ContextSettings{Placement: "context", MaxLoaded: -1}, "max_loaded"},
		{skilld.ContextSettings{MaxLoaded: 2}, "max_loaded"},
		{skilld.ContextSettings{MaxMessages: 1}, "max_messages"},
		{skilld.ContextSettings{MaxMessages: -2}, "max_messages"},
		{skilld.ContextSettings{EntryShare: 1.5}, "entry_share"},
		{skilld.ContextSettings{SkillsShare: -0.1}, "skills_share"},
	} {
		err := tt.cs.Check()
		if tt.field == "" {
			if err != nil {
				t.Errorf("%+v refused: %v", tt.cs, err)
			}
			continue
		}
		if got := fieldOf(err); got != "config.context."+tt.field {
			t.Errorf("%+v: error %v names %q, want config.context.%s", tt.cs, err, got, tt.field)
		}
	}
	both := skilld.ContextSettings{EntryShare: 2, SkillsShare: 3}
	for range 50 {
		if got := fieldOf(both.Check()); got != "config.context.entry_share" {
			t.Fatalf("two bad shares: named %q, want the first declared, config.context.entry_share", got)
		}
	}
}

func fieldOf(err error) string {
	d := skilld.ErrorDetails(err)
	if skilld.ErrorCode(err) != skilld.EINVALID || len(d) != 1 {
		return ""
	}
	return d[0].Field
}
