package service_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/importer"
	"github.com/skilld/skilld/importer/githubtest"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

func TestImportGitHub(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) {
		gh := githubtest.New(t)
		gh.AddRepo("acme", "skills", "main",
			githubtest.File{Name: "README.md", Data: "repo"},
			githubtest.File{Name: "skills/lint/SKILL.md", Data: githubtest.SkillMD("lint")},
			githubtest.File{Name: "skills/lint/run.sh", Data: "#!/bin/sh\n", Mode: 0o755},
			githubtest.File{Name: "skills/format/SKILL.md", Data: githubtest.SkillMD("format")},
			githubtest.File{Name: "skills/bad/SKILL.md", Data: githubtest.SkillMD("not-bad")},
		)
		e := newEnv(t, open, service.Config{}, &importer.GitHub{APIURL: gh.API.URL})
		ctx := t.Context()
		res := must[*service.ImportResult](t)(e.svc.ImportGitHub(ctx, e.member, service.ImportGitHubParams{URL: "https://github.com/acme/skills/tree/main/skills/lint"}))
		if len(res.Items) != 1 {
			t.Fatalf("imported %d", len(res.Items))
		}
		lint := res.Items[0]
		if lint.Name != "lint" || lint.SourceType != skilld.SourceGitHub || lint.Registry != "github" || lint.Trust != skilld.TrustCommunity ||
			lint.SourceURL != "https://github.com/acme/skills/tree/main/skills/lint" {
			t.Errorf("imported %+v", lint.Skill)
		}
		files := must[*service.SkillFiles](t)(e.svc.ListSkillFiles(ctx, e.viewer, service.ListSkillFilesParams{SkillRef: service.SkillRef{ID: lint.ID}}))
		if len(files.Files) != 2 || !files.Files[1].Exec {
			t.Errorf("files %+v", files.Files)
		}
		_, err := e.svc.ImportGitHub(ctx, e.member, service.ImportGitHubParams{URL: "https://github.com/acme/skills"})
		wantCode(t, err, skilld.EINVALID)
		if !strings.Contains(err.Error(), "multiple_skills_found") {
			t.Errorf("several skills without a selector: %v", err)
		}
		// A folder whose name differs from the skill's is refused (docs/SKILL-FORMAT.md).
		_, err = e.svc.ImportGitHub(ctx, e.member, service.ImportGitHubParams{URL: "https://github.com/acme/skills", SkillName: "bad"})
		wantCode(t, err, skilld.EINVALID)
		res = must[*service.ImportResult](t)(e.svc.ImportGitHub(ctx, e.member, service.ImportGitHubParams{URL: "https://github.com/acme/skills", SkillName: "format"}))
		if res.Items[0].Name != "format" {
			t.Errorf("selected %+v", res.Items[0].Skill)
		}
		_, err = e.svc.ImportGitHub(ctx, e.member, service.ImportGitHubParams{URL: "https://github.com/acme/missing"})
		wantCode(t, err, skilld.ENOTFOUND)
		_, err = e.svc.ImportGitHub(ctx, e.member, service.ImportGitHubParams{URL: "https://gitlab.com/acme/skills"})
		wantCode(t, err, skilld.EINVALID)

		gh.Hook = func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", "2000000000")
			w.WriteHeader(http.StatusForbidden)
			return true
		}
		_, err = e.svc.ImportGitHub(ctx, e.member, service.ImportGitHubParams{URL: "https://github.com/acme/skills", SkillName: "lint"})
		wantCode(t, err, skilld.ERATELIMITED)
		gh.Hook = nil

		// GitHub counts as registry "github", trust "community".
		must[*skilld.Policy](t)(e.svc.PutPolicy(ctx, e.admin, service.PutPolicyParams{InstallRules: []skilld.InstallRule{{Effect: skilld.EffectDeny, Registry: "github"}}}))
		_, err = e.svc.ImportGitHub(ctx, e.member, service.ImportGitHubParams{URL: "https://github.com/acme/skills", ImportAll: true})
		wantCode(t, err, skilld.EFORBIDDEN)
		if !strings.Contains(err.Error(), `deny registry "github"`) {
			t.Errorf("refusal should name the rule: %v", err)
		}
		w := must[*service.Withheld](t)(e.svc.Check(ctx, e.member.WorkspaceID, lint.Skill))
		if w == nil {
			t.Error("a GitHub skill imported before the rule is withheld at run time")
		}
	})
}
