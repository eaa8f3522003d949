package service_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store/storetest"
)

// Paging by page_token walks the same rows, in the same order, as paging
// by number, through skills and then catalog items, and a token is only
// good for the list and filters it came from.
func TestSkillPageTokens(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) {
			e := newEnv(t, d.Open, service.Config{}, nil)
			for i := range 7 {
				md := fmt.Sprintf("---\nname: skill-%02d\ndescription: Skill %d for paging.\n---\nBody.\n", 6-i, i)
				if _, err := e.svc.CreateSkill(t.Context(), e.admin, service.CreateSkillParams{Files: map[string]string{"SKILL.md": md}}); err != nil {
					t.Fatal(err)
				}
			}
			for _, reg := range []string{"beta", "alpha"} {
				if _, err := e.svc.CreateRegistry(t.Context(), e.root, service.CreateRegistryParams{Name: reg, Trust: skilld.TrustCommunity}); err != nil {
					t.Fatal(err)
				}
				for i := range 4 {
					publish(t, e, reg, fmt.Sprintf("item-%d", 3-i), "An item for paging.")
				}
			}
			key := func(it service.SkillListItem) string {
				if it.Kind == "catalog" {
					return "catalog:" + it.CatalogItem.Registry + "/" + it.CatalogItem.Name
				}
				return it.Name
			}
			for _, catalog := range []bool{false, true} {
				var byNumber []string
				for page := 1; ; page++ {
					res, err := e.svc.ListSkills(t.Context(), e.member, service.ListSkillsParams{IncludeCatalog: catalog, Page: page, PageSize: 3})
					if err != nil {
						t.Fatal(err)
					}
					for _, it := range res.Items {
						byNumber = append(byNumber, key(it))
					}
					if len(res.Items) < 3 {
						break
					}
				}
				var byToken []string
				p := service.ListSkillsParams{IncludeCatalog: catalog, PageSize: 3}
				for pages := 0; ; pages++ {
					res, err := e.svc.ListSkills(t.Context(), e.member, p)
					if err != nil {
						t.Fatal(err)
					}
					if pages > 0 && res.Page != 0 {
						t.Errorf("a page reached by token says page %d", res.Page)
					}
					for _, it := range res.Items {
						byToken = append(byToken, key(it))
					}
					if res.NextPageToken == "" {
						break
					}
					p.PageToken = res.NextPageToken
				}
				if want := map[bool]int{false: 7, true: 15}[catalog]; !slices.Equal(byNumber, byToken) || len(byNumber) != want {
					t.Errorf("catalog %v: by number %v, by token %v", catalog, byNumber, byToken)
				}
			}

			first, err := e.svc.ListSkills(t.Context(), e.member, service.ListSkillsParams{PageSize: 3})
			if err != nil || first.NextPageToken == "" {
				t.Fatalf("%+v, %v", first, err)
			}
			for _, bad := range []service.ListSkillsParams{
				{PageToken: first.NextPageToken, Search: "skill"},
				{PageToken: first.NextPageToken, IncludeCatalog: true},
				{PageToken: "not-a-token"},
				{PageToken: first.NextPageToken, Page: 2},
			} {
				if _, err := e.svc.ListSkills(t.Context(), e.member, bad); skilld.ErrorCode(err) != skilld.EINVALID {
					t.Errorf("%+v: %v, want invalid", bad, err)
				}
			}
			if _, err := e.svc.ListSkills(t.Context(), e.other, service.ListSkillsParams{PageToken: first.NextPageToken}); skilld.ErrorCode(err) != skilld.EINVALID {
				t.Errorf("another workspace's token: %v", err)
			}
		})
	}
}

// Agents and tasks page by token the same way.
func TestAgentAndTaskPageTokens(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) {
			e := newEnv(t, d.Open, service.Config{}, nil)
			var agentID string
			for i := range 7 {
				ag, err := e.svc.CreateAgent(t.Context(), e.member, service.AgentParams{Name: fmt.Sprintf("agent-%d", 6-i)})
				if err != nil {
					t.Fatal(err)
				}
				agentID = ag.ID
			}
			for i := range 7 {
				if _, err := e.svc.StartTask(t.Context(), e.member, service.StartTaskParams{AgentRef: service.AgentRef{ID: agentID}, Input: fmt.Sprint("task ", i)}); err != nil {
					t.Fatal(err)
				}
			}
			walk := func(list func(page int, token string) ([]string, string, error)) (byNumber, byToken []string) {
				for page := 1; ; page++ {
					keys, _, err := list(page, "")
					if err != nil {
						t.Fatal(err)
					}
					byNumber = append(byNumber, keys...)
					if len(keys) < 3 {
						break
					}
				}
				for token := ""; ; {
					keys, next, err := list(0, token)
					if err != nil {
						t.Fatal(err)
					}
					byToken = append(byToken, keys...)
					if next == "" {
						return byNumber, byToken
					}
					token = next
				}
			}
			an, at := walk(func(page int, token string) ([]string, string, error) {
				res, err := e.svc.ListAgents(t.Context(), e.member, service.ListAgentsParams{Page: page, PageSize: 3, PageToken: token})
				if err != nil {
					return nil, "", err
				}
				var keys []string
				for _, ag := range res.Items {
					keys = append(keys, ag.Name)
				}
				return keys, res.NextPageToken, nil
			})
			tn, tt := walk(func(page int, token string) ([]string, string, error) {
				res, err := e.svc.ListTasks(t.Context(), e.member, service.ListTasksParams{Page: page, PageSize: 3, PageToken: token})
				if err != nil {
					return nil, "", err
				}
				var keys []string
				for _, task := range res.Items {
					keys = append(keys, task.ID)
				}
				return keys, res.NextPageToken, nil
			})
			if len(an) != 7 || !slices.Equal(an, at) || len(tn) != 7 || !slices.Equal(tn, tt) {
				t.Errorf("agents %v / %v, tasks %v / %v", an, at, tn, tt)
			}
			first, err := e.svc.ListAgents(t.Context(), e.member, service.ListAgentsParams{PageSize: 3})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.ListTasks(t.Context(), e.member, service.ListTasksParams{PageToken: first.NextPageToken}); skilld.ErrorCode(err) != skilld.EINVALID {
				t.Errorf("an agents token on the task list: %v", err)
			}
		})
	}
}

// Versions and catalog items page by token too.
func TestVersionAndCatalogPageTokens(t *testing.T) {
	e := newEnv(t, storetest.Drivers(t)[0].Open, service.Config{}, nil)
	md := func(v int) string {
		return fmt.Sprintf("---\nname: versioned\ndescription: Version %d of a skill.\n---\nBody %d.\n", v, v)
	}
	sk, err := e.svc.CreateSkill(t.Context(), e.admin, service.CreateSkillParams{Files: map[string]string{"SKILL.md": md(1)}})
	if err != nil {
		t.Fatal(err)
	}
	for v := 2; v <= 7; v++ {
		if _, err := e.svc.ReplaceSkillFiles(t.Context(), e.admin, service.ReplaceSkillFilesParams{SkillRef: service.SkillRef{ID: sk.ID}, Files: map[string]string{"SKILL.md": md(v)}}); err != nil {
			t.Fatal(err)
		}
	}
	var numbers []int
	for p := (service.ListSkillVersionsParams{SkillRef: service.SkillRef{ID: sk.ID}, PageSize: 3}); ; {
		res, err := e.svc.ListSkillVersions(t.Context(), e.member, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range res.Items {
			numbers = append(numbers, v.Number)
		}
		if res.NextPageToken == "" {
			break
		}
		p.PageToken = res.NextPageToken
	}
	if !slices.Equal(numbers, []int{7, 6, 5, 4, 3, 2, 1}) {
		t.Errorf("versions by token: %v", numbers)
	}

	for _, reg := range []string{"zeta", "eta"} {
		if _, err := e.svc.CreateRegistry(t.Context(), e.root, service.CreateRegistryParams{Name: reg, Trust: skilld.TrustCommunity}); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			publish(t, e, reg, fmt.Sprintf("entry-%d", 3-i), "An item for paging.")
		}
	}
	var byNumber, byToken []string
	for page := 1; ; page++ {
		res, err := e.svc.ListCatalogItems(t.Context(), e.member, service.ListCatalogItemsParams{Page: page, PageSize: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range res.Items {
			byNumber = append(byNumber, it.Registry+"/"+it.Name)
		}
		if len(res.Items) < 3 {
			break
		}
	}
	for p := (service.ListCatalogItemsParams{PageSize: 3}); ; {
		res, err := e.svc.ListCatalogItems(t.Context(), e.member, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range res.Items {
			byToken = append(byToken, it.Registry+"/"+it.Name)
		}
		if res.NextPageToken == "" {
			break
		}
		p.PageToken = res.NextPageToken
	}
	if len(byNumber) != 8 || !slices.Equal(byNumber, byToken) {
		t.Errorf("catalog by number %v, by token %v", byNumber, byToken)
	}
}
