package executor_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/httpapi"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/web"
)

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// uiPages signs in to the web UI as an admin of the fixture's workspace
// and returns every page a person would open about the workspace's tasks:
// the task list, each task's page and its event stream.
func uiPages(t *testing.T, f *fixture) map[string]string {
	t.Helper()
	ctx := t.Context()
	tok, err := f.svc.CreateToken(ctx, f.actor, service.CreateTokenParams{Name: "ui", Role: skilld.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	api := &httpapi.Server{Service: f.svc, Version: "test", Logger: logger, Mounts: map[string]http.Handler{web.Prefix: web.New(f.svc, web.Options{Logger: logger})}}
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	get := func(path string) string {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(c, http.MethodGet, srv.URL+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body) // an event stream ends with its task, or at the timeout
		return string(b)
	}
	m := csrfField.FindStringSubmatch(get("/ui/login"))
	if m == nil {
		t.Fatal("no csrf field on the sign-in page")
	}
	resp, err := client.PostForm(srv.URL+"/ui/login", url.Values{"csrf": {m[1]}, "token": {tok.Secret}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	pages := map[string]string{"/ui/tasks": get("/ui/tasks"), "/ui/skills": get("/ui/skills")}
	tasks, err := f.svc.ListTasks(ctx, f.actor, service.ListTasksParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range tasks.Items {
		for _, p := range []string{"/ui/tasks/" + tk.ID, "/ui/tasks/" + tk.ID + "/events"} {
			pages[p] = get(p)
		}
	}
	if !strings.Contains(pages["/ui/tasks"], tasks.Items[0].ID) {
		t.Fatalf("the task list does not show the tasks (not signed in?):\n%.500s", pages["/ui/tasks"])
	}
	return pages
}
