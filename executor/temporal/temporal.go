// Package temporal runs skilld tasks on Temporal, across any number of
// servers and workers that share the database and the blob store.
//
// A task is a workflow (TaskWorkflow, ID "task-<task id>"). Its side
// effects are local activities, one per step of the run: the model call
// for the next turn (ModelCall), a compaction (Compaction), a skill's
// activation and materialization (Activation), any other tool call
// (ToolCall), the go-ahead after an approval (Approval). Each has its own
// timeouts and retry policy; the worker heartbeats the workflow task
// while they run. The run itself lives on a worker (a session, see
// session.go): an activity lets it perform exactly the step it names and
// reports the next one. The run writes each step's result to the task log
// before the activity returns, so an activity run again on another worker
// — the first one crashed or was cut off, and Temporal replays the
// workflow — rebuilds the run from the log (agent.Task.Resume) and goes
// on from the same place, performing nothing the log already has; appends
// are fenced, so a worker left behind cannot write any more.
//
// Nothing large enters the workflow's history: SKILL.md bodies, tool
// outputs and model answers stay in the task log and the blob store, and
// activities exchange task IDs, step kinds and call IDs only. Long tasks
// continue as new before their history grows past a bound.
//
// Approvals are signals (SignalDecide) the workflow waits for; cancelling
// the workflow cancels the task. Executor is the server's side: it starts,
// cancels and signals workflows for the service. Worker runs the workflow
// and the activities.
package temporal

import (
	"time"

	"github.com/skilld/skilld/agent"
)

// Names on the Temporal side.
const (
	// DefaultTaskQueue is the task queue servers and workers use unless
	// told otherwise.
	DefaultTaskQueue = "skilld-tasks"
	// WorkflowName is TaskWorkflow's registered name.
	WorkflowName = "skilld.Task"
	// SignalDecide carries an approval decision (Decision).
	SignalDecide = "skilld.decide"
)

// Activity names, one per kind of step.
const (
	ActivityBegin      = "skilld.Begin"
	ActivityPrepare    = "skilld.Prepare"
	ActivityModelCall  = "skilld.ModelCall"
	ActivityCompaction = "skilld.Compaction"
	ActivityActivation = "skilld.Activation"
	ActivityToolCall   = "skilld.ToolCall"
	ActivityApproval   = "skilld.Approval"
	ActivityFinish     = "skilld.Finish"
)

// WorkflowID is the workflow of a task.
func WorkflowID(taskID string) string { return "task-" + taskID }

// Input starts (or continues as new) a task's workflow.
type Input struct {
	TaskID string `json:"task_id"`
	// Next is where a workflow that continued as new goes on; nil for a
	// new one.
	Next *Next `json:"next,omitempty"`
	// Deadline is when the task runs out of time.
	Deadline time.Time `json:"deadline"`
	// Decisions are approvals signalled before the workflow continued as
	// new, not used yet.
	Decisions []Decision `json:"decisions,omitempty"`
	// Heartbeat is the step activities' heartbeat timeout in workflows
	// from before the steps were local: how soon a dead worker's step
	// goes to another (0: DefaultHeartbeat). Local steps are bounded by
	// the workflow task timeout instead (Executor.Heartbeat).
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
}

// Next is the step a run is parked at: what the next activity does.
type Next struct {
	Kind   agent.StepKind `json:"kind"`
	Tool   string         `json:"tool,omitempty"`
	CallID string         `json:"call_id,omitempty"`
}

// StepInput is what a step activity gets.
type StepInput struct {
	TaskID string `json:"task_id"`
	Next   Next   `json:"next"`
	// Approved is the decision, for an Approval step.
	Approved bool `json:"approved,omitempty"`
}

// StepResult is what a step activity returns: the next step, or the end.
type StepResult struct {
	Done bool `json:"done,omitempty"`
	Next Next `json:"next"`
}

// BeginResult is what the Begin activity returns.
type BeginResult struct {
	Deadline time.Time `json:"deadline"`
}

// Decision is an approval decision on a call.
type Decision struct {
	CallID   string `json:"call_id"`
	Approved bool   `json:"approved"`
}

// FinishInput ends a task no run can end (its workflow was cancelled, or
// failed for good).
type FinishInput struct {
	TaskID string `json:"task_id"`
	Status string `json:"status"`
	// Code is the error code recorded (empty: executor.Local.Abandon's
	// default for the status).
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

// stepStart is the pseudo-step of a run not built yet: Prepare builds it
// and reports where it is parked.
const stepStart agent.StepKind = "start"
