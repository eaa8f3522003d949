package service_test

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

func TestDisplayName(t *testing.T) {
	for _, c := range []struct {
		in, want string // want "" means refused
		why      string // a word the refusal must hold
	}{
		{"deploy bot", "deploy bot", ""},
		{"Ada's token (CI)", "Ada's token (CI)", ""},
		{"данные", "данные", ""},
		{"数据处理 agent", "数据处理 agent", ""},
		{"ｆｕｌｌｗｉｄｔｈ", "fullwidth", ""}, // NFKC
		{"ﬁle", "file", ""},
		{"e\u0301cole", "\u00e9cole", ""},
		{strings.Repeat("x", 64), strings.Repeat("x", 64), ""},
		{"", "", "empty"},
		{strings.Repeat("x", 65), "", "65 characters"},
		{strings.Repeat("é", 5000), "", "limit is 64"},
		{"../../etc", "", "'/'"},
		{`a\b`, "", "'/'"},
		{"a/b", "", "'/'"},
		{".", "", `"."`},
		{"..", "", `".."`},
		{" lead", "", "start or end"},
		{"trail ", "", "start or end"},
		{"two  spaces", "", "two spaces"},
		{"   ", "", "blank"},
		{"nul\x00", "", "control character U+0000"},
		{"tab\there", "", "control character U+0009"},
		{"line\nbreak", "", "control"},
		{"agent\u202ex", "", "formatting character U+202E"},
		{"agent-x\u200b", "", "formatting character U+200B"},
		{"\u2066isolate", "", "U+2066"},
		{"no\u00a0break", "", "whitespace character U+00A0"},
		{"ideo\u3000space", "", "whitespace"},
		{"para\u2029sep", "", "whitespace"},
		{"private\ue000", "", "private-use"},
		{"unassigned\U000e0fff", "", "unassigned"},
		{"bad\xffutf8", "", "UTF-8"},
		{"replaced\ufffd", "", "replacement character"},
	} {
		got, err := service.DisplayName("name", c.in)
		if c.want != "" {
			if err != nil || got != c.want {
				t.Errorf("DisplayName(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("DisplayName(%q) = %q; want refused (%s)", c.in, got, c.why)
			continue
		}
		var se *skilld.Error
		if skilld.ErrorCode(err) != skilld.EINVALID || !strings.Contains(err.Error(), c.why) ||
			!errors.As(err, &se) || len(se.Details) != 1 || se.Details[0].Field != "name" {
			t.Errorf("DisplayName(%q): %v; want EINVALID on field name saying %q", c.in, err, c.why)
		}
	}
}

// FuzzDisplayName: whatever goes in, an accepted name is already in NFKC,
// accepted again unchanged, within the length limit, and free of every
// character class the rule keeps out. Seeds in testdata/fuzz/FuzzDisplayName.
func FuzzDisplayName(f *testing.F) {
	for _, s := range []string{"deploy bot", "ｆｕｌｌ", "a\u202eb", " x", "..", "a/b", "e\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := service.DisplayName("name", in)
		if err != nil {
			if skilld.ErrorCode(err) != skilld.EINVALID {
				t.Fatalf("DisplayName(%q): %v is not EINVALID", in, err)
			}
			return
		}
		if !norm.NFKC.IsNormalString(got) {
			t.Fatalf("DisplayName(%q) = %q is not NFKC", in, got)
		}
		if again, err := service.DisplayName("name", got); err != nil || again != got {
			t.Fatalf("DisplayName(%q) = %q, but that gives %q, %v", in, got, again, err)
		}
		if n := utf8.RuneCountInString(got); n == 0 || n > service.MaxDisplayNameLength {
			t.Fatalf("DisplayName(%q) = %q has %d characters", in, got, n)
		}
		if got != strings.TrimSpace(got) || strings.Contains(got, "  ") || strings.ContainsAny(got, `/\`) || got == "." || got == ".." {
			t.Fatalf("DisplayName(%q) = %q breaks the spacing or path rule", in, got)
		}
		for _, r := range got {
			if r != ' ' && (unicode.IsSpace(r) || unicode.In(r, unicode.C, unicode.Z) || r == utf8.RuneError) {
				t.Fatalf("DisplayName(%q) = %q holds %U", in, got, r)
			}
		}
	})
}

// TestNamesOnEverySurface: agent and token names go through the display
// name rule on create and rename, are stored normalized, and are unique
// after normalization.
func TestNamesOnEverySurface(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) {
			e := newEnv(t, d.Open, service.Config{}, nil)
			ctx := t.Context()
			cfg := skilld.AgentConfig{Model: "m"}
			for _, bad := range []string{"../../etc", ".", "a/b", "nul\x00", "agent\u202ex", strings.Repeat("n", 5000), "agent-x\u200b"} {
				if _, err := e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: bad, Config: cfg}); skilld.ErrorCode(err) != skilld.EINVALID {
					t.Errorf("agent %q: %v", bad, err)
				}
				if _, err := e.svc.CreateToken(ctx, e.admin, service.CreateTokenParams{Name: bad, Role: skilld.RoleViewer}); skilld.ErrorCode(err) != skilld.EINVALID {
					t.Errorf("token %q: %v", bad, err)
				}
			}
			ag := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "agent-x", Config: cfg}))
			if _, err := e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "ａｇｅｎｔ-ｘ", Config: cfg}); skilld.ErrorCode(err) != skilld.ECONFLICT {
				t.Errorf("fullwidth twin of agent-x: %v; want a conflict", err)
			}
			tok := must[*service.NewToken](t)(e.svc.CreateToken(ctx, e.admin, service.CreateTokenParams{Name: "ｃｉ", Role: skilld.RoleViewer}))
			if tok.Token.Name != "ci" {
				t.Errorf("token name stored as %q, want NFKC %q", tok.Token.Name, "ci")
			}
			bad := "x\u202e"
			if _, err := e.svc.UpdateAgent(ctx, e.member, service.UpdateAgentParams{AgentRef: service.AgentRef{ID: ag.ID}, Name: &bad}); skilld.ErrorCode(err) != skilld.EINVALID {
				t.Errorf("rename to %q: %v", bad, err)
			}
			good := "ﬁnal agent"
			up := must[*skilld.Agent](t)(e.svc.UpdateAgent(ctx, e.member, service.UpdateAgentParams{AgentRef: service.AgentRef{ID: ag.ID}, Name: &good}))
			if up.Name != "final agent" {
				t.Errorf("renamed to %q", up.Name)
			}
			// Workspace and registry names are slugs, a stricter rule.
			for _, bad := range []string{"../x", ".", "a\u200b"} {
				if _, err := e.svc.CreateWorkspace(ctx, e.root, service.CreateWorkspaceParams{Name: bad}); skilld.ErrorCode(err) != skilld.EINVALID {
					t.Errorf("workspace %q: %v", bad, err)
				}
				if _, err := e.svc.CreateRegistry(ctx, e.root, service.CreateRegistryParams{Name: bad, Trust: skilld.TrustCommunity}); skilld.ErrorCode(err) != skilld.EINVALID {
					t.Errorf("registry %q: %v", bad, err)
				}
			}
		})
	}
}

func BenchmarkDisplayName(b *testing.B) {
	for b.Loop() {
		if _, err := service.DisplayName("name", "Release notes bot (ＣＩ)"); err != nil {
			b.Fatal(err)
		}
	}
}
