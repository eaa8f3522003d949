package temporal_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/skilld/skilld/agent"
	skdtemporal "github.com/skilld/skilld/executor/temporal"
)

// fakeActivities stand in for a worker's: each step returns the next
// entry of a script, and every call is recorded.
type fakeActivities struct {
	mu       sync.Mutex
	script   []skdtemporal.StepResult
	calls    []string
	inputs   []skdtemporal.StepInput
	finished []skdtemporal.FinishInput
	deadline time.Time
	fail     error
	// moving is how many step calls to refuse as a stopping worker does.
	moving int
}

func (f *fakeActivities) register(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterWorkflowWithOptions(skdtemporal.TaskWorkflow, workflow.RegisterOptions{Name: skdtemporal.WorkflowName})
	for _, name := range []string{skdtemporal.ActivityPrepare, skdtemporal.ActivityModelCall, skdtemporal.ActivityCompaction,
		skdtemporal.ActivityActivation, skdtemporal.ActivityToolCall, skdtemporal.ActivityApproval} {
		env.RegisterActivityWithOptions(func(ctx context.Context, in skdtemporal.StepInput) (skdtemporal.StepResult, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.calls, f.inputs = append(f.calls, name), append(f.inputs, in)
			if f.fail != nil {
				return skdtemporal.StepResult{}, f.fail
			}
			if f.moving > 0 {
				f.moving--
				return skdtemporal.StepResult{}, sdktemporal.NewNonRetryableApplicationError("this worker is stopping", "skilld.moving", nil)
			}
			if len(f.script) == 0 {
				return skdtemporal.StepResult{Done: true}, nil
			}
			r := f.script[0]
			f.script = f.script[1:]
			return r, nil
		}, activity.RegisterOptions{Name: name})
	}
	env.RegisterActivityWithOptions(func(context.Context, string) (skdtemporal.BeginResult, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls = append(f.calls, skdtemporal.ActivityBegin)
		return skdtemporal.BeginResult{Deadline: f.deadline}, nil
	}, activity.RegisterOptions{Name: skdtemporal.ActivityBegin})
	env.RegisterActivityWithOptions(func(_ context.Context, in skdtemporal.FinishInput) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls, f.finished = append(f.calls, skdtemporal.ActivityFinish), append(f.finished, in)
		return nil
	}, activity.RegisterOptions{Name: skdtemporal.ActivityFinish})
}

func next(kind agent.StepKind, tool, call string) skdtemporal.StepResult {
	return skdtemporal.StepResult{Next: skdtemporal.Next{Kind: kind, Tool: tool, CallID: call}}
}

func newEnv(t *testing.T, f *fakeActivities) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	if f.deadline.IsZero() {
		f.deadline = env.Now().Add(time.Hour)
	}
	f.register(env)
	return env
}

// Each step goes to the activity of its kind, in order; an activation is
// its own activity.
func TestWorkflowSteps(t *testing.T) {
	f := &fakeActivities{script: []skdtemporal.StepResult{
		next(agent.StepModel, "", ""),
		next(agent.StepTool, agent.ActivateSkill, "c1"),
		next(agent.StepModel, "", ""),
		next(agent.StepTool, agent.ToolShell, "c2"),
		next(agent.StepCompaction, "", ""),
		next(agent.StepModel, "", ""),
	}}
	env := newEnv(t, f)
	env.ExecuteWorkflow(skdtemporal.WorkflowName, skdtemporal.Input{TaskID: "t1"})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	want := "skilld.Begin skilld.Prepare skilld.ModelCall skilld.Activation skilld.ModelCall skilld.ToolCall skilld.Compaction skilld.ModelCall"
	if got := strings.Join(f.calls, " "); got != want {
		t.Errorf("activities\n got %s\nwant %s", got, want)
	}
	if in := f.inputs[2]; in.Next.CallID != "c1" || in.TaskID != "t1" {
		t.Errorf("the activation's input: %+v", in)
	}
}

// A wait for approval is a signal the workflow waits for, whether it comes
// before or after the run reached the call.
func TestWorkflowApproval(t *testing.T) {
	for _, early := range []bool{false, true} {
		f := &fakeActivities{script: []skdtemporal.StepResult{next(agent.StepApproval, agent.ToolShell, "c9")}}
		env := newEnv(t, f)
		decide := func() {
			env.SignalWorkflow(skdtemporal.SignalDecide, skdtemporal.Decision{CallID: "c9", Approved: true})
		}
		if early {
			env.RegisterDelayedCallback(decide, 0)
		} else {
			env.RegisterDelayedCallback(decide, 10*time.Minute)
		}
		env.ExecuteWorkflow(skdtemporal.WorkflowName, skdtemporal.Input{TaskID: "t"})
		if env.GetWorkflowError() != nil {
			t.Fatal(env.GetWorkflowError())
		}
		last := f.inputs[len(f.inputs)-1]
		if f.calls[len(f.calls)-1] != skdtemporal.ActivityApproval || !last.Approved || last.Next.CallID != "c9" {
			t.Errorf("early %v: calls %v, last input %+v", early, f.calls, last)
		}
	}
}

// A task that waits for an approval past its deadline ends, failed.
func TestWorkflowDeadlineWhileWaiting(t *testing.T) {
	f := &fakeActivities{script: []skdtemporal.StepResult{next(agent.StepApproval, agent.ToolShell, "c1")}}
	env := newEnv(t, f)
	env.ExecuteWorkflow(skdtemporal.WorkflowName, skdtemporal.Input{TaskID: "t"})
	if len(f.finished) != 1 || f.finished[0].Status != "failed" || !strings.Contains(f.finished[0].Message, "ran out of time") {
		t.Errorf("finished %+v (calls %v)", f.finished, f.calls)
	}
}

// Cancelling the workflow ends the task as cancelled, through Finish.
func TestWorkflowCancel(t *testing.T) {
	f := &fakeActivities{script: []skdtemporal.StepResult{next(agent.StepApproval, agent.ToolShell, "c1")}}
	env := newEnv(t, f)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(skdtemporal.WorkflowName, skdtemporal.Input{TaskID: "t"})
	var canceled *sdktemporal.CanceledError
	if !errors.As(env.GetWorkflowError(), &canceled) {
		t.Errorf("workflow error %v", env.GetWorkflowError())
	}
	if len(f.finished) != 1 || f.finished[0].Status != "cancelled" {
		t.Errorf("finished %+v", f.finished)
	}
}

// A step a stopping worker refused is asked again, the same, after the
// workflow task ends (a timer); an approval is not waited for twice.
func TestWorkflowStepMoves(t *testing.T) {
	f := &fakeActivities{script: []skdtemporal.StepResult{next(agent.StepApproval, agent.ToolShell, "c1"), next(agent.StepModel, "", "")}}
	env := newEnv(t, f)
	env.RegisterDelayedCallback(func() {
		f.mu.Lock()
		f.moving = 2
		f.mu.Unlock()
		env.SignalWorkflow(skdtemporal.SignalDecide, skdtemporal.Decision{CallID: "c1", Approved: true})
	}, time.Minute)
	env.ExecuteWorkflow(skdtemporal.WorkflowName, skdtemporal.Input{TaskID: "t"})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	want := "skilld.Begin skilld.Prepare skilld.Approval skilld.Approval skilld.Approval skilld.ModelCall"
	if got := strings.Join(f.calls, " "); got != want {
		t.Errorf("activities\n got %s\nwant %s", got, want)
	}
	for _, in := range f.inputs[1:4] {
		if in.Next.CallID != "c1" || !in.Approved {
			t.Errorf("approval asked with %+v", in)
		}
	}
}

// A step that fails for good ends the task as failed, saying why.
func TestWorkflowStepFails(t *testing.T) {
	f := &fakeActivities{fail: sdktemporal.NewNonRetryableApplicationError("the database is gone", "skilld.permanent", nil)}
	env := newEnv(t, f)
	env.ExecuteWorkflow(skdtemporal.WorkflowName, skdtemporal.Input{TaskID: "t"})
	if len(f.finished) != 1 || f.finished[0].Status != "failed" || !strings.Contains(f.finished[0].Message, "the database is gone") {
		t.Errorf("finished %+v", f.finished)
	}
}

// A long task continues as new, carrying where it is and the decisions
// signalled but not used yet; nothing else.
func TestWorkflowContinuesAsNew(t *testing.T) {
	f := &fakeActivities{}
	for range skdtemporal.MaxStepsPerRun + 10 {
		f.script = append(f.script, next(agent.StepModel, "", ""))
	}
	env := newEnv(t, f)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(skdtemporal.SignalDecide, skdtemporal.Decision{CallID: "later", Approved: true})
	}, 0)
	env.ExecuteWorkflow(skdtemporal.WorkflowName, skdtemporal.Input{TaskID: "t"})
	var can *workflow.ContinueAsNewError
	if !errors.As(env.GetWorkflowError(), &can) {
		t.Fatalf("workflow error %v, want continue-as-new", env.GetWorkflowError())
	}
	if n := len(f.calls); n != skdtemporal.MaxStepsPerRun+1 { // Begin and the steps
		t.Errorf("%d activities before continuing as new", n)
	}
	var in skdtemporal.Input
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &in); err != nil {
		t.Fatal(err)
	}
	if in.TaskID != "t" || in.Next == nil || in.Next.Kind != agent.StepModel || len(in.Decisions) != 1 || in.Decisions[0].CallID != "later" || in.Deadline.IsZero() {
		t.Errorf("continued with %+v", in)
	}
}
