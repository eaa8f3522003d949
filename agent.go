package skilld

import "time"

// Agent is a stored agent configuration: what the runtime needs to start a
// task, with the skills attached to it.
type Agent struct {
	ID          string       `json:"id"`
	WorkspaceID string       `json:"workspace_id"`
	Name        string       `json:"name"`
	Config      AgentConfig  `json:"config"`
	Skills      []AgentSkill `json:"skills"`
	CreatedBy   string       `json:"created_by,omitempty"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
	// Warnings are problems found when the agent was created or changed
	// that do not stop it being saved but would stop its tasks (a model
	// this server cannot run). They are not stored.
	Warnings []Detail `json:"warnings,omitempty"`
}

// AgentConfig is an agent's behaviour. Zero values mean "the runtime's
// default" so stored agents pick up better defaults without a migration;
// so every member is optional, and a zero one is left out.
type AgentConfig struct {
	Instruction string          `json:"instruction,omitempty"`
	Model       string          `json:"model,omitempty"`
	Tools       ToolPolicy      `json:"tools,omitzero"`
	Context     ContextSettings `json:"context,omitzero"`
	Sandbox     SandboxSettings `json:"sandbox,omitzero"`
	// Timeout is how long one task of the agent may run, from its start
	// (restarts included), as a Go duration such as "30m"; at most 24h.
	// Empty takes the server's default (skilld serve --task-timeout).
	Timeout string `json:"timeout,omitempty"`
	// Toolsets are extra tools offered to the agent's tasks, by name:
	// "skills" is the skills_* toolset (list, read, create, edit, import,
	// install and delete skills), acting with the role of whoever started
	// the task. None by default.
	Toolsets []string `json:"toolsets,omitempty"`
}

// ToolsetSkills names the skills toolset in AgentConfig.Toolsets.
const ToolsetSkills = "skills"

// SandboxSettings shape the sandbox a task's commands run in.
type SandboxSettings struct {
	// Network lets commands reach the network (the server must allow it);
	// by default they have only their own loopback.
	Network bool `json:"network,omitempty"`
	// Env holds variables added to every command's environment. Nothing
	// of the server's own environment reaches a command, and variables
	// that change how programs load or start (LD_*, MALLOC_*,
	// GLIBC_TUNABLES, …) are refused.
	Env map[string]string `json:"env,omitempty"`
	// Disk lowers the server's limit on the disk space of a task's
	// workspace ("512MiB"); it cannot raise it.
	Disk string `json:"disk,omitempty"`
}

// ContextSettings are the context-budget knobs of an agent. Zero values
// take the runtime's defaults (docs/CONTEXT.md).
type ContextSettings struct {
	Window    int    `json:"window,omitempty"`     // model context window in tokens
	Placement string `json:"placement,omitempty"`  // "transcript" (default) or "context"
	MaxLoaded int    `json:"max_loaded,omitempty"` // skills loaded at once (context placement; default 3)
	// MaxMessages caps the transcript messages of a request (windowing):
	// 0 is the placement's default (60 in context, no cap in transcript),
	// -1 no cap.
	MaxMessages int     `json:"max_messages,omitempty"`
	EntryShare  float64 `json:"entry_share,omitempty"`  // one activation's share of the window
	SkillsShare float64 `json:"skills_share,omitempty"` // all activations' share of the window
	// Compaction summarizes old messages when a request nears the
	// window; on unless set to false.
	Compaction *bool `json:"compaction,omitempty"`
}

// AgentSkill attaches a skill to an agent, optionally pinned to a version
// (0 follows the skill's current version).
type AgentSkill struct {
	SkillID string `json:"skill_id"`
	Version int    `json:"version,omitempty"`
}
