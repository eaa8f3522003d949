package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/analytics"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/skillmd"
)

type skillsData struct {
	Q     string
	Page  *service.SkillPage
	Next  string
	Error string
	// Imported lists what a GitHub import created.
	Imported []*service.SkillView
}

// skillsPage lists the workspace's skills (skills.list).
func (ui *UI) skillsPage(w http.ResponseWriter, r *http.Request, s *session) {
	ui.showSkills(w, r, s, http.StatusOK, "", nil)
}

func (ui *UI) showSkills(w http.ResponseWriter, r *http.Request, s *session, status int, msg string, imported []*service.SkillView) {
	q := r.URL.Query()
	d := skillsData{Q: q.Get("q"), Error: msg, Imported: imported}
	page, err := ui.svc.ListSkills(r.Context(), s.actor, service.ListSkillsParams{Search: d.Q, PageToken: q.Get("page_token")})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	d.Page = page
	if page.NextPageToken != "" {
		d.Next = Prefix + "skills?q=" + urlQuery(d.Q) + "&page_token=" + urlQuery(page.NextPageToken)
	}
	ui.render(w, r, s, status, "skills", "Skills", d)
}

// upload creates a skill from the archive field (skills.create_from_archive)
// and shows it.
func (ui *UI) upload(w http.ResponseWriter, r *http.Request, s *session) {
	f, _, err := r.FormFile("archive")
	if err != nil {
		ui.showSkills(w, r, s, http.StatusBadRequest, "choose an archive (zip, tar or tar.gz) to upload", nil)
		return
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		ui.showSkills(w, r, s, http.StatusBadRequest, "the archive could not be read", nil)
		return
	}
	v, err := ui.svc.CreateSkillFromArchive(r.Context(), s.actor, service.CreateSkillFromArchiveParams{
		Archive: data, SkillOptions: service.SkillOptions{Lenient: r.PostFormValue("lenient") != ""}})
	if err != nil {
		ui.showSkills(w, r, s, status(err), errorText(err), nil)
		return
	}
	http.Redirect(w, r, Prefix+"skills/"+v.ID, http.StatusSeeOther)
}

// importGitHub imports from a GitHub URL (skills.import_github): one skill
// opens its page, several are listed.
func (ui *UI) importGitHub(w http.ResponseWriter, r *http.Request, s *session) {
	res, err := ui.svc.ImportGitHub(r.Context(), s.actor, service.ImportGitHubParams{
		URL: r.PostFormValue("github_url"), SkillName: r.PostFormValue("skill_name"), ImportAll: r.PostFormValue("import_all") != ""})
	if err != nil {
		ui.showSkills(w, r, s, status(err), errorText(err), nil)
		return
	}
	if len(res.Items) == 1 {
		http.Redirect(w, r, Prefix+"skills/"+res.Items[0].ID, http.StatusSeeOther)
		return
	}
	ui.showSkills(w, r, s, http.StatusOK, "", res.Items)
}

// errorText is an error's message with its details, for a page's #error.
func errorText(err error) string {
	msg := skilld.ErrorMessage(err)
	var se *skilld.Error
	if errors.As(err, &se) {
		for _, d := range se.Details {
			if d.Message != "" && d.Message != msg {
				msg += "; " + d.Message
			}
		}
	}
	return msg
}

type skillData struct {
	Skill    *service.SkillView
	Body     template.HTML
	Warnings []skilld.Detail
	Files    *service.SkillFiles
	Versions *service.VersionList
	From, To int
	// Stats are what finished tasks did with the skill (skills.stats).
	Stats *analytics.SkillStats
	// Findings is what the package scanner found in the current version.
	Findings *service.Findings
	// Evals are the stored trigger eval results of each version, by
	// package digest.
	Evals map[string][]evalCell
	// Permissions is what the current package asks for in skilld.yaml and
	// whether it is approved (skills.permissions).
	Permissions *service.SkillPermissions
}

// evalCell is one stored trigger eval result, as the versions table shows
// it.
type evalCell struct {
	Agent, Model      string
	Precision, Recall float64
	Runs, Queries     int
	When              time.Time
}

// versionEvals groups a skill's stored trigger eval results by package
// digest, the newest first, naming each agent (evals.list, agents.list).
func (ui *UI) versionEvals(ctx context.Context, s *session, skillID string) (map[string][]evalCell, error) {
	res, err := ui.svc.ListEvals(ctx, s.actor, service.ListEvalsParams{Skill: skillID, Limit: 100})
	if err != nil || len(res.Items) == 0 {
		return nil, err
	}
	agents, err := ui.svc.ListAgents(ctx, s.actor, service.ListAgentsParams{PageSize: service.MaxPageSize})
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, a := range agents.Items {
		names[a.ID] = a.Name
	}
	out := map[string][]evalCell{}
	for _, e := range res.Items {
		out[e.SkillDigest] = append(out[e.SkillDigest], evalCell{Agent: cmp.Or(names[e.AgentID], e.AgentID), Model: e.Model,
			Precision: e.Precision, Recall: e.Recall, Runs: e.Runs, Queries: e.Queries, When: e.CreatedAt})
	}
	return out, nil
}

// skillPage shows one skill: SKILL.md rendered, metadata, warnings, the
// scanner's findings, files and versions, and what tasks did with it
// (skills.get, get_content, findings, list_files, versions.list, stats).
func (ui *UI) skillPage(w http.ResponseWriter, r *http.Request, s *session) {
	ctx, id := r.Context(), r.PathValue("id")
	sk, err := ui.svc.GetSkill(ctx, s.actor, service.GetSkillParams{SkillRef: service.SkillRef{ID: id}})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	ref := service.SkillRef{ID: sk.ID}
	content, err := ui.svc.GetSkillContent(ctx, s.actor, service.GetSkillContentParams{SkillRef: ref, Version: sk.Version})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	files, err := ui.svc.ListSkillFiles(ctx, s.actor, service.ListSkillFilesParams{SkillRef: ref, Version: sk.Version})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	versions, err := ui.svc.ListSkillVersions(ctx, s.actor, service.ListSkillVersionsParams{SkillRef: ref})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	stats, err := ui.svc.SkillStats(ctx, s.actor, service.SkillStatsParams{Skill: sk.ID})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	// The stored SKILL.md is checked again here, leniently, so that the
	// page shows the warnings of any skill, not only of one just saved.
	rep := skillmd.Check([]byte(content.Content), skillmd.Options{Lenient: true})
	body := content.Content
	if rep.Skill != nil {
		body = rep.Skill.Body
	}
	findings, err := ui.svc.SkillFindings(ctx, s.actor, service.SkillFindingsParams{SkillRef: ref, Version: sk.Version})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	evals, err := ui.versionEvals(ctx, s, sk.ID)
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	perms, err := ui.svc.GetSkillPermissions(ctx, s.actor, service.GetSkillParams{SkillRef: ref})
	if err != nil {
		ui.fail(w, r, s, err)
		return
	}
	d := skillData{Evals: evals, Skill: sk, Body: ui.renderMarkdown(body, fmt.Sprintf("%sskills/%s/files/{path}?version=%d", Prefix, sk.ID, sk.Version)), Warnings: append(rep.Errors, rep.Warnings...), Files: files, Versions: versions,
		From: max(sk.Version-1, 1), To: sk.Version, Stats: &stats.Items[0], Findings: findings, Permissions: perms}
	ui.render(w, r, s, http.StatusOK, "skill", sk.Name, d)
}

// version reads ?version=N; 0 is the current version.
func version(r *http.Request, name string) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, skilld.Errorf(skilld.EINVALID, "%s must be a version number, not %q", name, v)
	}
	return n, nil
}

// approvePermissions approves what the package digest of a skill asks
// for (skills.permissions.approve).
func (ui *UI) approvePermissions(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	p := service.ApprovePermissionsParams{SkillRef: service.SkillRef{ID: id}, Digest: r.PostFormValue("digest")}
	if _, err := ui.svc.ApprovePermissions(r.Context(), s.actor, p); err != nil {
		ui.fail(w, r, s, err)
		return
	}
	http.Redirect(w, r, Prefix+"skills/"+id, http.StatusSeeOther)
}
