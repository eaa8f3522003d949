package skilld

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

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
	// Evals are the agent's own trigger eval set: queries with the skill
	// each should (or that none should) activate, checked with
	// skilld eval beside the eval sets of its skills' packages.
	Evals []EvalCase `json:"evals,omitempty"`
}

// ToolsetSkills names the skills toolset in AgentConfig.Toolsets.
const ToolsetSkills = "skills"

// SandboxSettings shape the sandbox a task's commands run in.
type SandboxSettings struct {
	// Network says what commands may reach: by default nothing but their
	// own loopback; the server must allow more (--sandbox-network).
	Network NetworkSettings `json:"network,omitzero"`
	// Env holds variables added to every command's environment. Nothing
	// of the server's own environment reaches a command, and variables
	// that change how programs load or start (LD_*, MALLOC_*,
	// GLIBC_TUNABLES, …) are refused.
	Env map[string]string `json:"env,omitempty"`
	// Disk lowers the server's limit on the disk space of a task's
	// workspace ("512MiB"); it cannot raise it.
	Disk string `json:"disk,omitempty"`
	// Rootfs names the root file system commands run on, one the server
	// offers (--sandbox-rootfs); empty is the server's default.
	Rootfs string `json:"rootfs,omitempty"`
}

// NetworkSettings say what a task's commands may reach, always through the
// sandbox's allowlist proxy: nothing (false, the default); the public web
// (true: any public host on ports 80 and 443); or the hosts of Allow
// ({"allow": ["api.example.com", "*.example.org", "127.0.0.1:9443"]}).
// It is JSON true, false or that object.
type NetworkSettings struct {
	// Enabled says the network is used at all (always, with Allow).
	Enabled bool
	// Allow are the hosts commands may reach; empty with Enabled is the
	// public web.
	Allow []string
}

// On reports that commands use the network (Enabled, or hosts to allow).
func (n NetworkSettings) On() bool { return n.Enabled || len(n.Allow) > 0 }

// IsZero reports no network.
func (n NetworkSettings) IsZero() bool { return !n.On() }

func (n NetworkSettings) MarshalJSON() ([]byte, error) {
	if len(n.Allow) > 0 {
		return json.Marshal(struct {
			Allow []string `json:"allow"`
		}{n.Allow})
	}
	return json.Marshal(n.On())
}

func (n *NetworkSettings) UnmarshalJSON(b []byte) error {
	var on bool
	if err := json.Unmarshal(b, &on); err == nil {
		*n = NetworkSettings{Enabled: on}
		return nil
	}
	var v struct {
		Allow []string `json:"allow"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return Errorf(EINVALID, "config.sandbox.network must be true, false or {\"allow\": [hosts]}: %v", err)
	}
	// An object names hosts; naming none allows none (never the web).
	*n = NetworkSettings{Enabled: len(v.Allow) > 0, Allow: v.Allow}
	return nil
}

// ValidRootfsName reports whether name may name a root file system:
// letters, digits, '.', '_' and '-', at most 64, starting with a letter or
// digit.
func ValidRootfsName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || i > 0 && (r == '.' || r == '_' || r == '-')) {
			return false
		}
	}
	return true
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

// Placements of activated skills: in the transcript, as a tool result
// (the default), or in a context block that loads and unloads them.
const (
	PlacementTranscript = "transcript"
	PlacementContext    = "context"
)

// Check reports the first setting out of range, taking the fields in the
// order they are declared, as an EINVALID error whose detail names it
// (config.context.<field>). Every knob takes effect or is refused: one
// that would do nothing is an error too.
func (c ContextSettings) Check() error {
	bad := func(field, format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		return &Error{Code: EINVALID, Message: msg, Details: []Detail{{Field: "config.context." + field, Message: msg}}}
	}
	switch {
	case c.Window < 0:
		return bad("window", "window must not be negative")
	case c.Placement != "" && c.Placement != PlacementTranscript && c.Placement != PlacementContext:
		return bad("placement", "placement must be %s or %s, not %q", PlacementTranscript, PlacementContext, c.Placement)
	case c.MaxLoaded < 0:
		return bad("max_loaded", "max_loaded must not be negative")
	case c.MaxLoaded > 0 && c.Placement != PlacementContext:
		// Only context placement loads and unloads skills.
		return bad("max_loaded", "max_loaded applies to context placement only; set placement to context or leave max_loaded out")
	case c.MaxMessages < -1 || c.MaxMessages == 1:
		return bad("max_messages", "max_messages must be 0 (the placement's default), -1 (no cap) or at least 2 (a tool call and its result are two), not %d", c.MaxMessages)
	case c.EntryShare < 0 || c.EntryShare > 1:
		return bad("entry_share", "entry_share must be between 0 and 1, not %g", c.EntryShare)
	case c.SkillsShare < 0 || c.SkillsShare > 1:
		return bad("skills_share", "skills_share must be between 0 and 1, not %g", c.SkillsShare)
	}
	return nil
}

// AgentSkill attaches a skill to an agent, optionally pinned to a version
// (0 follows the skill's current version).
type AgentSkill struct {
	SkillID string `json:"skill_id"`
	Version int    `json:"version,omitempty"`
}
