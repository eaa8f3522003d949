package executor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/store"
	"github.com/skilld/skilld/store/storetest"
)

// A task keeps the packages of its snapshot: deleting the skill while the
// task waits does not break its activation, and the package goes once the
// task ends.
func TestSnapshotKeepsItsPackages(t *testing.T) {
	for _, d := range storetest.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) {
			f := newFixture(t, d.Open)
			ag, sk := f.agentWithSkill(t, skilld.ToolPolicy{})
			proceed := make(chan struct{})
			var activation string
			f.model.steps = append(f.model.steps,
				func(ctx context.Context, _ *model.Request) (*model.Response, error) {
					<-proceed
					return call(agent.ActivateSkill, map[string]string{"skill_name": sk.Name})(ctx, nil)
				},
				func(_ context.Context, req *model.Request) (*model.Response, error) {
					activation = req.Messages[len(req.Messages)-1].Content
					return answer("done")(nil, req)
				})
			task, err := f.svc.RunTask(t.Context(), f.actor, service.StartTaskParams{AgentRef: service.AgentRef{ID: ag.ID}, Input: "go"})
			if err != nil {
				t.Fatal(err)
			}
			f.wait(t, task.ID, skilld.TaskRunning)
			if err := f.svc.DeleteSkill(t.Context(), f.actor, service.DeleteSkillParams{SkillRef: service.SkillRef{ID: sk.ID}}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := f.db.PackageGet(t.Context(), &store.PackageGetParams{Digest: sk.Digest}); err != nil {
				t.Fatalf("the running task's package went with its skill: %v", err)
			}
			close(proceed)
			f.wait(t, task.ID, skilld.TaskCompleted)
			if !strings.HasPrefix(activation, "<skill_content") {
				t.Errorf("activation after the skill was deleted: %.200s", activation)
			}
			f.exec.Wait()
			if _, _, err := f.db.PackageGet(t.Context(), &store.PackageGetParams{Digest: sk.Digest}); skilld.ErrorCode(err) != skilld.ENOTFOUND {
				t.Errorf("the package outlived the task and its skill: %v", err)
			}
		})
	}
}
