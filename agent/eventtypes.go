package agent

import (
	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent/model"
	"github.com/skilld/skilld/sandbox"
)

// The payloads of the events, one struct per event type. Their JSON
// fields are the events' fields, exactly: a field absent from an event is
// omitempty here, one always present is not. docs/RUNTIME.md lists them
// and the OpenAPI document is made from them; tests hold both to these
// structs.

// Payloads returns a zero value of every event payload, one per event
// type, in the order docs/RUNTIME.md lists them.
func Payloads() []Payload {
	return []Payload{
		TaskStarted{}, SandboxReady{}, SkillEnvironment{}, SandboxEgress{}, SandboxEgressDenied{},
		SkillWithheld{}, CatalogShortened{}, Message{}, LLMCallStarted{}, LLMCallCompleted{},
		ToolCall{}, ToolResult{}, ToolOffloaded{}, ToolDenied{}, ApprovalRequested{}, ApprovalDecided{}, ToolPreapproved{}, ToolGranted{},
		SkillsSearched{}, SkillActivated{}, SkillRefused{}, SkillMaterialized{}, ContextChanged{}, SkillUnloaded{},
		ContextWarning{}, ContextCompacted{}, TaskResumed{}, TaskCompleted{}, TaskFailed{},
	}
}

// TaskStarted opens a run: its input's size and the settings it runs with.
type TaskStarted struct {
	InputChars  int    `json:"input_chars"`
	Skills      int    `json:"skills"`
	Window      int    `json:"window"`
	Placement   string `json:"placement"`
	MaxLoaded   int    `json:"max_loaded"`
	MaxMessages int    `json:"max_messages"`
	Compaction  bool   `json:"compaction"`
	// ToolsWithheld counts the tools the tool policy keeps from the model;
	// WithheldTools names them (a Go skill's as "skill/tool").
	ToolsWithheld int      `json:"tools_withheld"`
	WithheldTools []string `json:"withheld_tools"`
	// Rootfs is the root file system commands run on, when the run has a
	// sandbox that says.
	Rootfs *sandbox.RootfsInfo `json:"rootfs,omitempty"`
}

// SandboxReady describes the run's sandbox as its provider does.
type SandboxReady struct {
	sandbox.Info
}

// SkillEnvironment is a placed package's dependencies being readied:
// State "preparing", then "ready" or "failed".
type SkillEnvironment struct {
	Skill string `json:"skill"`
	// State is preparing, then building (zero or more: progress), then
	// ready or failed.
	State string `json:"state"`
	// A building event's: time since the install began, the installer's
	// latest line and its count of lines so far.
	ElapsedMS int64  `json:"elapsed_ms,omitempty"`
	Line      string `json:"line,omitempty"`
	Lines     int    `json:"lines,omitempty"`
	// EnvironmentLayer is set (all its fields present) once there is a
	// layer to describe; nil before, and when none could be had.
	*EnvironmentLayer
	// Error says why it failed; Output is the installer's last lines.
	Error  string `json:"error,omitempty"`
	Output string `json:"output,omitempty"`
}

// EnvironmentLayer is the dependency layer a package got.
type EnvironmentLayer struct {
	Kinds      []string `json:"kinds"`
	Key        string   `json:"key"`
	Cached     bool     `json:"cached"`
	DurationMS int64    `json:"duration_ms"`
}

// SandboxEgress is one connection a command made through the sandbox's
// proxy, reported after the command.
type SandboxEgress struct {
	Host string `json:"host"`
	Port int    `json:"port"`
	IP   string `json:"ip"`
	// Method is CONNECT or the HTTP method; Entry the allowlist entry
	// that let it through.
	Method     string `json:"method"`
	Entry      string `json:"entry"`
	Status     int    `json:"status"`
	Reason     string `json:"reason"`
	BytesUp    int64  `json:"bytes_up"`
	BytesDown  int64  `json:"bytes_down"`
	DurationMS int64  `json:"duration_ms"`
}

// SandboxEgressDenied is a connection the proxy refused.
type SandboxEgressDenied SandboxEgress

// egressOf is the event of one connection: allowed or refused.
func egressOf(e sandbox.EgressEvent) Payload {
	p := SandboxEgress{Host: e.Host, Port: e.Port, IP: e.IP, Method: e.Method, Entry: e.Entry, Status: e.Status,
		Reason: e.Reason, BytesUp: e.BytesUp, BytesDown: e.BytesDown, DurationMS: e.DurationMS}
	if !e.Allowed {
		return SandboxEgressDenied(p)
	}
	return p
}

// SkillWithheld is an attached skill the install policy keeps out of the
// run, and the rule that does.
type SkillWithheld struct {
	Skill string `json:"skill"`
	Rule  string `json:"rule"`
}

// CatalogShortened says the catalog was rendered with less detail to fit
// its budget.
type CatalogShortened struct {
	Level      string `json:"level"`
	Tokens     int    `json:"tokens"`
	Budget     int    `json:"budget"`
	OverBudget bool   `json:"over_budget"`
	// Skills names the skills whose entry lost something at this level
	// (their file list, part of their description, or all of it), at
	// most the first 200; SkillsMore counts the others.
	Skills     []string `json:"skills,omitempty"`
	SkillsMore int      `json:"skills_more,omitempty"`
	// Listed names the skills the catalog lists, by name, when not even
	// every name fits its budget (level "some names"); Unlisted counts
	// the disclosed skills left out, which search_skills still finds.
	Listed   []string `json:"listed,omitempty"`
	Unlisted int      `json:"unlisted,omitempty"`
}

// Message is a message of the transcript as the event stream shows it:
// an activation's SKILL.md is replaced by its size (Skill names it).
type Message struct {
	Role       model.Role       `json:"role"`
	Content    string           `json:"content,omitempty"`
	ToolCalls  []model.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
	ToolName   string           `json:"tool_name,omitempty"`
	IsError    bool             `json:"is_error,omitempty"`
	Skill      string           `json:"skill,omitempty"`
	Tokens     int              `json:"tokens"`
}

// LLMCallStarted announces a model request: its size, and what it held.
type LLMCallStarted struct {
	Iteration       int `json:"iteration"`
	Messages        int `json:"messages"`
	Tools           int `json:"tools"`
	EstimatedTokens int `json:"estimated_tokens"`
	// Context is absent from logs written before requests were described.
	Context *RequestContext `json:"context,omitempty"`
}

// LLMCallCompleted is the model's answer to a request.
type LLMCallCompleted struct {
	Iteration  int         `json:"iteration"`
	Usage      model.Usage `json:"usage"`
	StopReason string      `json:"stop_reason"`
	ToolCalls  int         `json:"tool_calls"`
}

// CallRef names the tool call an event is about.
type CallRef struct {
	Tool   string `json:"tool"`
	CallID string `json:"call_id"`
}

func refOf(call model.ToolCall) CallRef { return CallRef{Tool: call.Name, CallID: call.ID} }

// ToolCall is a call the model made, before the policy's verdict.
type ToolCall struct {
	CallRef
	ArgumentsChars int `json:"arguments_chars"`
}

// ToolResult is a call's result, after its message. ExitCode is the exit
// status of the command a shell call ran (128+n when signal n ended it,
// -1 when it was killed from outside); nil when the call ran no command.
// A command that exits non-zero is not a tool error: the model reads its
// output and status as a result.
type ToolResult struct {
	CallRef
	IsError   bool   `json:"is_error,omitempty"`
	ErrorCode string `json:"error_code,omitempty"`
	ExitCode  *int   `json:"exit_code,omitempty"`
	Chars     int    `json:"chars"`
}

// Failed reports whether the call failed: a tool error, or a command
// that exited with a status other than 0.
func (t ToolResult) Failed() bool {
	return t.IsError || (t.ExitCode != nil && *t.ExitCode != 0)
}

// ToolOffloaded says a call's output was too large for the transcript and
// is kept as output OutputID, for read_tool_output.
type ToolOffloaded struct {
	CallRef
	OutputID string `json:"output_id"`
}

// ToolDenied is a call the policy, or an approver, refused.
type ToolDenied struct {
	CallRef
	Reason string `json:"reason"`
}

// ApprovalRequested is a call waiting for someone's decision.
type ApprovalRequested struct {
	CallRef
	Reason string `json:"reason"`
}

// ApprovalDecided is the decision on a call.
type ApprovalDecided struct {
	CallRef
	Approved bool `json:"approved"`
}

// ToolPreapproved is a call that needed approval and did not: an active
// skill's allowed-tools entry matched it.
type ToolPreapproved struct {
	CallRef
	Skill   string `json:"skill"`
	Allowed string `json:"allowed"`
	Reason  string `json:"reason"`
}

// ToolGranted is what a shell call's command got from the skills loaded
// when it ran: the hosts it may reach besides the agent's, and the names
// (never the values) of the secrets in its environment. Missing names
// secrets granted but not set in the workspace; NetworkOff says why the
// hosts were not opened (the server lets no task reach the network).
type ToolGranted struct {
	CallRef
	Skills     []string `json:"skills"`
	Network    []string `json:"network"`
	Secrets    []string `json:"secrets"`
	Missing    []string `json:"missing,omitempty"`
	NetworkOff string   `json:"network_off,omitempty"`
}

// SkillsSearched is a search_skills call: the query's length (not its
// text, which the tool call's message holds) and the skills it returned,
// best first.
type SkillsSearched struct {
	QueryChars int      `json:"query_chars"`
	Results    []string `json:"results"`
}

// SkillActivated is a skill whose instructions the run now carries.
type SkillActivated struct {
	Skill      string `json:"skill"`
	Tokens     int    `json:"tokens"`
	Placement  string `json:"placement"`
	Summarized bool   `json:"summarized"`
	Digest     string `json:"digest"`
}

// SkillRefused is an activation that did not fit its budget.
type SkillRefused struct {
	Skill  string `json:"skill"`
	Reason string `json:"reason"`
	Tokens int    `json:"tokens"`
}

// SkillMaterialized is a skill's package placed in the sandbox, or the
// reason it could not be (the skill is then degraded, not refused).
type SkillMaterialized struct {
	Skill string `json:"skill"`
	Dir   string `json:"dir"`
	Files int    `json:"files"`
	Error string `json:"error,omitempty"`
}

// ContextChanged is a load in context placement: what came and went, the
// active skill and all those loaded now.
type ContextChanged struct {
	Loaded   []string `json:"loaded"`
	Unloaded []string `json:"unloaded"`
	Active   string   `json:"active"`
	Skills   []string `json:"skills"`
}

// SkillUnloaded is a skill context placement dropped.
type SkillUnloaded struct {
	Skill  string `json:"skill"`
	Reason string `json:"reason"`
}

// ContextWarning says a request takes more than WarnAt of the effective
// window.
type ContextWarning struct {
	Tokens          int     `json:"tokens"`
	EffectiveWindow int     `json:"effective_window"`
	Share           float64 `json:"share"`
}

// ContextCompacted is a compaction: older messages replaced by a summary
// (Summarized, Summary) or, when none could be had, by a marker (Error).
// A resumed run reads its outcome back from this event.
type ContextCompacted struct {
	Messages     int         `json:"messages"`
	Lifted       int         `json:"lifted"`
	Count        int         `json:"count"`
	Usage        model.Usage `json:"usage"`
	Asked        bool        `json:"asked"`
	Summarized   bool        `json:"summarized"`
	Summary      string      `json:"summary,omitempty"`
	Error        string      `json:"error,omitempty"`
	TokensBefore int         `json:"tokens_before"`
	TokensAfter  int         `json:"tokens_after"`
	Saved        int         `json:"saved"`
}

// TaskResumed marks where a resumed run went live again, after Replayed
// log entries.
type TaskResumed struct {
	Replayed int `json:"replayed"`
}

// TaskCompleted ends a run with the model's answer.
type TaskCompleted struct {
	Output     string `json:"output"`
	Iterations int    `json:"iterations"`
}

// TaskFailed ends a run that failed: Error is the failure's public
// message and Code its code (skilld.ErrorMessage, skilld.ErrorCode).
// Cause is the failure itself, for the process that ran the task to log:
// it is never encoded, so internal error text stays on the server.
type TaskFailed struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	Cause error  `json:"-"`
}

// NewTaskFailed is the event of a run that failed with err.
func NewTaskFailed(err error) TaskFailed {
	return TaskFailed{Error: skilld.ErrorMessage(err), Code: skilld.ErrorCode(err), Cause: err}
}

func (TaskStarted) EventType() string         { return EventTaskStarted }
func (SandboxReady) EventType() string        { return EventSandboxReady }
func (SkillEnvironment) EventType() string    { return EventSkillEnvironment }
func (SandboxEgress) EventType() string       { return EventSandboxEgress }
func (SandboxEgressDenied) EventType() string { return EventSandboxEgressDenied }
func (SkillWithheld) EventType() string       { return EventSkillWithheld }
func (CatalogShortened) EventType() string    { return EventCatalogTrimmed }
func (Message) EventType() string             { return EventMessage }
func (LLMCallStarted) EventType() string      { return EventLLMCallStarted }
func (LLMCallCompleted) EventType() string    { return EventLLMCallCompleted }
func (ToolCall) EventType() string            { return EventToolCall }
func (ToolResult) EventType() string          { return EventToolResult }
func (ToolOffloaded) EventType() string       { return EventToolOffloaded }
func (ToolDenied) EventType() string          { return EventToolDenied }
func (ApprovalRequested) EventType() string   { return EventApprovalRequested }
func (ApprovalDecided) EventType() string     { return EventApprovalDecided }
func (ToolPreapproved) EventType() string     { return EventToolPreapproved }
func (ToolGranted) EventType() string         { return EventToolGranted }
func (SkillsSearched) EventType() string      { return EventSkillsSearched }
func (SkillActivated) EventType() string      { return EventSkillActivated }
func (SkillRefused) EventType() string        { return EventSkillRefused }
func (SkillMaterialized) EventType() string   { return EventSkillMaterialized }
func (ContextChanged) EventType() string      { return EventContextChanged }
func (SkillUnloaded) EventType() string       { return EventSkillUnloaded }
func (ContextWarning) EventType() string      { return EventContextWarning }
func (ContextCompacted) EventType() string    { return EventContextCompacted }
func (TaskResumed) EventType() string         { return EventTaskResumed }
func (TaskCompleted) EventType() string       { return EventTaskCompleted }
func (TaskFailed) EventType() string          { return EventTaskFailed }
