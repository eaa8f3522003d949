package service

import (
	"context"
	"fmt"
	"reflect"
)

// Operation describes one service operation: what every adapter (REST
// route, agent tool, CLI command) needs to expose it without restating its
// parameters, and what the parity tests check them against.
type Operation struct {
	// Name identifies the operation, as "noun.verb".
	Name string
	// Tool is the agent toolset's tool name, or "" when agents are not
	// offered the operation.
	Tool string
	// Summary is a one-line description for API docs and tool catalogs.
	Summary string
	// Params is the operation's parameter struct; Result its result type
	// (nil for operations without one).
	Params reflect.Type
	Result reflect.Type
	call   func(s *Service, ctx context.Context, a Actor, params any) (any, error)
}

// NewParams returns a pointer to a zero value of the operation's
// parameters, for an adapter to decode into.
func (o Operation) NewParams() any { return reflect.New(o.Params).Interface() }

// Call runs the operation for actor a with params, a pointer returned by
// NewParams (or a value of the parameter type).
func (o Operation) Call(ctx context.Context, s *Service, a Actor, params any) (any, error) {
	if v := reflect.ValueOf(params); v.Kind() == reflect.Pointer && v.Type().Elem() == o.Params {
		params = v.Elem().Interface()
	}
	if reflect.TypeOf(params) != o.Params {
		return nil, fmt.Errorf("operation %s: params are %T, want %s", o.Name, params, o.Params)
	}
	return o.call(s, ctx, a, params)
}

func op[P, R any](name, tool, summary string, fn func(*Service, context.Context, Actor, P) (R, error)) Operation {
	return Operation{Name: name, Tool: tool, Summary: summary, Params: reflect.TypeFor[P](), Result: reflect.TypeFor[R](),
		call: func(s *Service, ctx context.Context, a Actor, p any) (any, error) { return fn(s, ctx, a, p.(P)) }}
}

func opNoResult[P any](name, tool, summary string, fn func(*Service, context.Context, Actor, P) error) Operation {
	return Operation{Name: name, Tool: tool, Summary: summary, Params: reflect.TypeFor[P](),
		call: func(s *Service, ctx context.Context, a Actor, p any) (any, error) { return nil, fn(s, ctx, a, p.(P)) }}
}

// Operations lists every operation of the service. Adapters build their
// routes and tools from it; tests check that none is missing.
func Operations() []Operation {
	return []Operation{
		op("workspaces.create", "", "Create a workspace (instance admins)", (*Service).CreateWorkspace),
		op("workspaces.list", "", "List workspaces", (*Service).ListWorkspaces),
		op("admin.fsck", "", "Check every stored blob and package; with repair, remove unreferenced blobs (instance admins)", (*Service).Fsck),
		op("tokens.create", "", "Create an API token; its secret is shown once (admins)", (*Service).CreateToken),
		op("tokens.list", "", "List the workspace's tokens (admins)", (*Service).ListTokens),
		opNoResult("tokens.revoke", "", "Revoke a token (admins)", (*Service).RevokeToken),
		op("tokens.self", "", "Describe the caller's own token: its name, role and workspace (any role)", (*Service).Self),

		op("skills.list", "skills_list", "List the workspace's skills, optionally followed by installable catalog items", (*Service).ListSkills),
		op("skills.get", "skills_get", "Get one skill's metadata", (*Service).GetSkill),
		op("skills.create", "skills_create", "Create a skill from files given as text", (*Service).CreateSkill),
		op("skills.create_from_archive", "skills_create_from_archive", "Create a skill from a zip, tar or tar.gz archive", (*Service).CreateSkillFromArchive),
		op("skills.import_github", "skills_import_github", "Import skills from a GitHub repository", (*Service).ImportGitHub),
		op("skills.import_path", "", "Import a skill from a folder on the server (admins, when enabled)", (*Service).ImportPath),
		op("skills.edit_metadata", "skills_edit_metadata", "Rename a skill or change its description", (*Service).UpdateSkillMetadata),
		op("skills.edit_content", "skills_edit_content", "Replace a skill's files, making a new version", (*Service).ReplaceSkillFiles),
		op("skills.edit_from_archive", "", "Replace a skill's files with a zip, tar or tar.gz archive, making a new version", (*Service).ReplaceSkillFilesFromArchive),
		opNoResult("skills.delete", "skills_delete", "Delete a skill and its versions", (*Service).DeleteSkill),
		op("skills.list_files", "skills_list_files", "List the files of a skill version", (*Service).ListSkillFiles),
		op("skills.get_file", "skills_get_file", "Read one file of a skill version", (*Service).GetSkillFile),
		op("skills.get_content", "", "Read a skill version's SKILL.md", (*Service).GetSkillContent),
		op("skills.install", "skills_install", "Install a catalog item into the workspace", (*Service).InstallSkill),
		op("skills.update_installed", "", "Move an installed skill to another catalog version (admins)", (*Service).UpdateInstalledSkill),
		op("skills.versions.list", "", "List a skill's versions, newest first", (*Service).ListSkillVersions),
		op("skills.versions.get", "", "Get one version of a skill with its files", (*Service).GetSkillVersion),
		op("skills.versions.restore", "", "Make an old version current again, as a new version", (*Service).RestoreSkillVersion),

		op("catalog.registries.create", "", "Add a catalog registry (instance admins)", (*Service).CreateRegistry),
		op("catalog.registries.list", "", "List catalog registries", (*Service).ListRegistries),
		op("catalog.items.publish", "", "Publish a skill archive as the next version of a catalog item (instance admins)", (*Service).PublishCatalogItem),
		op("catalog.items.list", "", "List catalog items", (*Service).ListCatalogItems),

		op("policy.get", "", "Get the workspace's install rules and tool policy", (*Service).GetPolicy),
		op("policy.put", "", "Replace the workspace's install rules and tool policy (admins)", (*Service).PutPolicy),

		op("agents.create", "", "Create an agent", (*Service).CreateAgent),
		op("agents.list", "", "List agents", (*Service).ListAgents),
		op("agents.get", "", "Get an agent", (*Service).GetAgent),
		op("agents.update", "", "Change an agent", (*Service).UpdateAgent),
		opNoResult("agents.delete", "", "Delete an agent", (*Service).DeleteAgent),
		op("agents.card", "", "Describe an agent and the skills it discloses (served as an A2A agent card)", (*Service).AgentProfile),
		op("discovery.index", "", "List the workspace's disclosed skills as an Agent Skills discovery index", (*Service).DiscoveryIndex),
		op("discovery.archive", "", "Download a disclosed skill as the reproducible zip its discovery entry names", (*Service).SkillArchive),
		op("tasks.start", "", "Start a task: run an agent on an input", (*Service).RunTask),
		op("tasks.list", "", "List the workspace's tasks, newest first", (*Service).ListTasks),
		op("tasks.get", "", "Get a task with its snapshot", (*Service).GetTask),
		op("tasks.events", "", "Read a task's log: every message and event in order", (*Service).TaskEvents),
		op("tasks.cancel", "", "Stop a task", (*Service).CancelTask),
		op("tasks.approve", "", "Approve or reject a tool call waiting for approval (admins)", (*Service).DecideApproval),
	}
}

// OperationByName finds an operation.
func OperationByName(name string) (Operation, bool) {
	for _, o := range Operations() {
		if o.Name == name {
			return o, true
		}
	}
	return Operation{}, false
}
