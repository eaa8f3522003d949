package service_test

import (
	"archive/zip"
	"bytes"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/blob"
	"github.com/skilld/skilld/blob/fsblob"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// env is a service on real stores with actors of every role.
type env struct {
	svc    *service.Service
	db     store.Store
	blobs  blob.Store
	root   service.Actor // instance admin
	admin  service.Actor // admin of workspace "team"
	member service.Actor
	viewer service.Actor
	other  service.Actor // member of workspace "other"
}

func newEnv(t *testing.T, open storetest.Opener, cfg service.Config, gh service.GitHubFetcher) *env {
	t.Helper()
	fs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return newEnvOn(t, open, fs, cfg, gh)
}

// newEnvOn is newEnv over a given blob store.
func newEnvOn(t *testing.T, open storetest.Opener, blobs blob.Store, cfg service.Config, gh service.GitHubFetcher) *env {
	t.Helper()
	e := &env{db: open(t), blobs: blobs}
	e.svc = service.New(e.db, blobs, gh, cfg)
	secret, err := e.svc.Bootstrap(t.Context(), "")
	if err != nil || secret == "" {
		t.Fatalf("bootstrap: %q, %v", secret, err)
	}
	if again, err := e.svc.Bootstrap(t.Context(), ""); again != "" || err != nil {
		t.Fatalf("second bootstrap must do nothing: %q, %v", again, err)
	}
	e.root, err = e.svc.Authenticate(t.Context(), secret)
	if err != nil || !e.root.InstanceAdmin {
		t.Fatalf("bootstrap token: %+v, %v", e.root, err)
	}
	team := e.actorIn(t, e.root, "team", skilld.RoleAdmin)
	e.admin = team
	e.member = e.token(t, team, skilld.RoleMember)
	e.viewer = e.token(t, team, skilld.RoleViewer)
	e.other = e.actorIn(t, e.root, "other", skilld.RoleMember)
	return e
}

// actorIn creates workspace ws and returns an actor holding a new token of
// role there.
func (e *env) actorIn(t *testing.T, root service.Actor, ws string, role skilld.Role) service.Actor {
	t.Helper()
	if _, err := e.svc.CreateWorkspace(t.Context(), root, service.CreateWorkspaceParams{Name: ws}); err != nil {
		t.Fatal(err)
	}
	admin, err := e.svc.In(t.Context(), root, ws)
	if err != nil {
		t.Fatal(err)
	}
	return e.token(t, admin, role)
}

func (e *env) token(t *testing.T, admin service.Actor, role skilld.Role) service.Actor {
	t.Helper()
	tok, err := e.svc.CreateToken(t.Context(), admin, service.CreateTokenParams{Name: string(role), Role: role})
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.svc.Authenticate(t.Context(), tok.Secret)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// blobCount counts stored blobs.
func (e *env) blobCount(t *testing.T) int {
	t.Helper()
	n := 0
	for _, err := range e.blobs.List(t.Context(), "") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n\nDo the thing.\n"
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := skilld.ErrorCode(err); got != code {
		t.Fatalf("error %v has code %q, want %q", err, got, code)
	}
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func forDrivers(t *testing.T, fn func(t *testing.T, open storetest.Opener)) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) { fn(t, d.Open) })
	}
}
