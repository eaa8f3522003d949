// Package policy decides which tools an agent may call. A tool policy has
// denied globs, optional allowed globs and require_approval globs; the
// workspace, the agent and the task each may have one, and they merge into
// one effective policy that both disclosure (which tools the model is
// offered) and the gate (every call, again) consult, so the two can never
// disagree.
package policy

import (
	"fmt"
	"path"
	"slices"

	"github.com/skilld/skilld"
)

// Decision is what the policy says about a tool.
type Decision int

const (
	Allow Decision = iota
	Deny
	// RequireApproval allows the call only after someone approves it.
	RequireApproval
)

func (d Decision) String() string {
	switch d {
	case Deny:
		return "deny"
	case RequireApproval:
		return "require_approval"
	}
	return "allow"
}

// Level is one source of policy, named for messages. Task snapshots store
// their levels as JSON.
type Level struct {
	Name   string            `json:"name"` // "workspace", "agent", "task"
	Policy skilld.ToolPolicy `json:"policy"`
}

// Effective is the merge of every level: a tool is denied if any level
// denies it or any level with an allow list leaves it out, and needs
// approval if any level says so.
type Effective struct {
	levels []Level
}

// Merge combines levels into the effective policy.
func Merge(levels ...Level) Effective {
	return Effective{levels: slices.Clone(levels)}
}

// Verdict is a decision with the reason for it.
type Verdict struct {
	Decision Decision
	// Level and Glob name the rule that decided, for messages and events;
	// empty when nothing matched (allowed by default).
	Level string
	Glob  string
}

// Reason explains a deny or approval verdict in words.
func (v Verdict) Reason() string {
	switch {
	case v.Decision == Deny && v.Glob == "":
		return "not in the " + v.Level + " policy's allowed tools"
	case v.Decision == Deny:
		return "denied by the " + v.Level + " policy (" + v.Glob + ")"
	case v.Decision == RequireApproval:
		return "needs approval under the " + v.Level + " policy (" + v.Glob + ")"
	}
	return "allowed"
}

// Decide returns the verdict for calling tool name. Deny wins over
// approval; approval over allow.
func (e Effective) Decide(name string) Verdict {
	for _, l := range e.levels {
		if g, ok := match(l.Policy.Denied, name); ok {
			return Verdict{Decision: Deny, Level: l.Name, Glob: g}
		}
		if len(l.Policy.Allowed) > 0 {
			if _, ok := match(l.Policy.Allowed, name); !ok {
				return Verdict{Decision: Deny, Level: l.Name}
			}
		}
	}
	for _, l := range e.levels {
		if g, ok := match(l.Policy.RequireApproval, name); ok {
			return Verdict{Decision: RequireApproval, Level: l.Name, Glob: g}
		}
	}
	return Verdict{Decision: Allow}
}

// match reports the first glob (path.Match syntax: *, ?, [a-z]) matching
// name. A malformed glob matches nothing rather than everything.
func match(globs []string, name string) (string, bool) {
	for _, g := range globs {
		if ok, err := path.Match(g, name); err == nil && ok {
			return g, true
		}
	}
	return "", false
}

// Validate checks every glob of p and returns EINVALID naming the first
// malformed one by its field (field, such as "tools", is where p sits in
// the request), so a typo is refused where the policy enters instead of
// silently matching nothing and leaving the tool allowed.
func Validate(field string, p skilld.ToolPolicy) error {
	for _, list := range []struct {
		name  string
		globs []string
	}{{"denied", p.Denied}, {"allowed", p.Allowed}, {"require_approval", p.RequireApproval}} {
		for i, g := range list.globs {
			if _, err := path.Match(g, ""); err != nil || g == "" {
				f := fmt.Sprintf("%s.%s[%d]", field, list.name, i)
				msg := fmt.Sprintf("tool policy %s: %q is not a valid glob (use *, ? and [a-z] classes)", f, g)
				return &skilld.Error{Code: skilld.EINVALID, Message: msg, Details: []skilld.Detail{{Field: f, Message: msg}}}
			}
		}
	}
	return nil
}
