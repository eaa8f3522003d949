package service_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

func TestAgentSandboxRules(t *testing.T) {
	forDrivers(t, func(t *testing.T, open storetest.Opener) { testAgentSandboxRules(t, open) })
}

// testAgentSandboxRules: variables that change how programs load are
// refused when an agent is saved and again when a task starts (for an
// agent saved before the rule), naming the variable and recording nothing;
// a disk limit must be a size.
func testAgentSandboxRules(t *testing.T, open storetest.Opener) {
	e := newEnv(t, open, service.Config{}, nil)
	ctx := t.Context()
	field := func(err error) (string, string) {
		var se *skilld.Error
		if !errors.As(err, &se) || se.Code != skilld.EINVALID || len(se.Details) == 0 {
			return "", ""
		}
		return se.Details[0].Field, se.Message
	}
	for name, value := range map[string]string{"LD_PRELOAD": "/workspace/p.so", "LD_LIBRARY_PATH": "/workspace", "GLIBC_TUNABLES": "glibc.malloc.check=3", "MALLOC_PERTURB_": "1", "GCONV_PATH": "/workspace", "TMPDIR": "/etc"} {
		_, err := e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "loader", Config: skilld.AgentConfig{Sandbox: skilld.SandboxSettings{Env: map[string]string{"OK": "1", name: value}}}})
		if f, msg := field(err); f != "config.sandbox.env" || !strings.Contains(msg, name) {
			t.Errorf("%s=%s: %v", name, value, err)
		}
	}
	for _, allow := range [][]string{{"https://example.com/"}, {"*"}, {"example.com:99999"}, {""}} {
		_, err := e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "net", Config: skilld.AgentConfig{Sandbox: skilld.SandboxSettings{Network: skilld.NetworkSettings{Allow: allow}}}})
		if f, _ := field(err); f != "config.sandbox.network" {
			t.Errorf("allow %q: %v", allow, err)
		}
	}
	for _, disk := range []string{"lots", "-1GiB", "1MiB", "2 parsecs"} {
		_, err := e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "disk", Config: skilld.AgentConfig{Sandbox: skilld.SandboxSettings{Disk: disk}}})
		if f, _ := field(err); f != "config.sandbox.disk" {
			t.Errorf("disk %q: %v", disk, err)
		}
	}
	ag := must[*skilld.Agent](t)(e.svc.CreateAgent(ctx, e.member, service.AgentParams{Name: "small", Config: skilld.AgentConfig{Model: "openai:gpt-4o-mini",
		Sandbox: skilld.SandboxSettings{Disk: "512MiB", Env: map[string]string{"LDFLAGS": "-L/workspace/lib"}}}}))
	if d, err := service.SandboxDisk(ag.Config.Sandbox); d != 512<<20 || err != nil {
		t.Errorf("disk %d, %v", d, err)
	}
	// An agent stored before the rule (written to the store directly).
	cfg := ag.Config
	cfg.Sandbox.Env = map[string]string{"LD_PRELOAD": "/workspace/p.so"}
	if _, err := e.db.AgentUpdate(ctx, &store.AgentUpdateParams{WorkspaceID: ag.WorkspaceID, ID: ag.ID, Config: &cfg}); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.StartTask(ctx, e.member, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "go"})
	if f, msg := field(err); f != "config.sandbox.env" || !strings.Contains(msg, "LD_PRELOAD") {
		t.Errorf("starting a task of an agent with LD_PRELOAD: %v", err)
	}
	if page := must[*service.TaskPage](t)(e.svc.ListTasks(ctx, e.member, service.ListTasksParams{})); page.Total != 0 {
		t.Errorf("a refused start recorded a task: %+v", page)
	}
}

// TestNetworkSettingsJSON: config.sandbox.network is true, false or
// {"allow": [hosts]}, and reads back as it was written.
func TestNetworkSettingsJSON(t *testing.T) {
	for in, want := range map[string]skilld.NetworkSettings{
		`true`: {Enabled: true}, `false`: {}, `null`: {}, `{"allow": ["api.example.com"]}`: {Enabled: true, Allow: []string{"api.example.com"}},
		`{"allow": []}`: {}, `{}`: {},
	} {
		var got skilld.NetworkSettings
		if err := json.Unmarshal([]byte(in), &got); err != nil || got.On() != want.On() || strings.Join(got.Allow, ",") != strings.Join(want.Allow, ",") {
			t.Errorf("%s: %+v, %v", in, got, err)
		}
		out, _ := json.Marshal(skilld.SandboxSettings{Network: got})
		var back skilld.SandboxSettings
		if err := json.Unmarshal(out, &back); err != nil || back.Network.On() != got.On() || len(back.Network.Allow) != len(got.Allow) {
			t.Errorf("%s wrote %s", in, out)
		}
	}
	for _, bad := range []string{`"yes"`, `{"hosts": ["x"]}`, `[1]`, `{"allow": "x"}`} {
		var n skilld.NetworkSettings
		if err := json.Unmarshal([]byte(bad), &n); err == nil {
			t.Errorf("%s was read as %+v", bad, n)
		}
	}
	if out, _ := json.Marshal(skilld.SandboxSettings{}); string(out) != "{}" {
		t.Errorf("no network writes %s", out)
	}
}
