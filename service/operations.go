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

// Op is an Operation whose parameter and result types the compiler knows.
// Adapters that call or serve one particular operation (the Go client, the
// CLI, the REST route table) take the Op value, so a call with the wrong
// params or result type does not build, and a search for the value leads
// from every caller and URL to the operation. Operations without a result
// have R = NoResult.
type Op[P, R any] struct{ Operation }

// NoResult is the result type of the operations that return nothing.
type NoResult = struct{}

func newOp[P, R any](name, tool, summary string, fn func(*Service, context.Context, Actor, P) (R, error)) Op[P, R] {
	return Op[P, R]{Operation{Name: name, Tool: tool, Summary: summary, Params: reflect.TypeFor[P](), Result: reflect.TypeFor[R](),
		call: func(s *Service, ctx context.Context, a Actor, p any) (any, error) { return fn(s, ctx, a, p.(P)) }}}
}

func newOpNoResult[P any](name, tool, summary string, fn func(*Service, context.Context, Actor, P) error) Op[P, NoResult] {
	return Op[P, NoResult]{Operation{Name: name, Tool: tool, Summary: summary, Params: reflect.TypeFor[P](),
		call: func(s *Service, ctx context.Context, a Actor, p any) (any, error) { return nil, fn(s, ctx, a, p.(P)) }}}
}

// The operations of the service. Each is named after its wire name, the
// public one of REST docs, the OpenAPI document and the CLI ("skills.get"
// is OpSkillsGet). They are constants in all but syntax: nothing assigns
// them after initialization.
var (
	OpWorkspacesCreate = newOp("workspaces.create", "", "Create a workspace (instance admins)", (*Service).CreateWorkspace)
	OpWorkspacesList   = newOp("workspaces.list", "", "List workspaces", (*Service).ListWorkspaces)
	OpWorkspacesUpdate = newOp("workspaces.update", "", "Change a workspace's settings: how long it keeps finished tasks, its own task caps, storage quota and leniency on long skill fields (instance admins)", (*Service).UpdateWorkspace)
	OpWorkspacesUsage  = newOp("workspaces.usage", "", "What the workspace keeps and runs: its tasks by status, the bytes they keep against its storage quota, its skills (any role)", (*Service).WorkspaceUsage)
	OpAdminFsck        = newOp("admin.fsck", "", "Check every stored blob and package; with repair, remove unreferenced blobs (instance admins)", (*Service).Fsck)
	OpTokensCreate     = newOp("tokens.create", "", "Create an API token; its secret is shown once (admins)", (*Service).CreateToken)
	OpTokensList       = newOp("tokens.list", "", "List the workspace's tokens (admins)", (*Service).ListTokens)
	OpTokensRevoke     = newOpNoResult("tokens.revoke", "", "Revoke a token (admins)", (*Service).RevokeToken)
	OpTokensSelf       = newOp("tokens.self", "", "Describe the caller's own token: its name, role and workspace (any role)", (*Service).Self)

	OpSkillsList              = newOp("skills.list", "skills_list", "List the workspace's skills, optionally followed by installable catalog items", (*Service).ListSkills)
	OpSkillsGet               = newOp("skills.get", "skills_get", "Get one skill's metadata", (*Service).GetSkill)
	OpSkillsCreate            = newOp("skills.create", "skills_create", "Create a skill from files given as text", (*Service).CreateSkill)
	OpSkillsCreateFromArchive = newOp("skills.create_from_archive", "skills_create_from_archive", "Create a skill from a zip, tar or tar.gz archive", (*Service).CreateSkillFromArchive)
	OpSkillsImportGitHub      = newOp("skills.import_github", "skills_import_github", "Import skills from a GitHub repository", (*Service).ImportGitHub)
	OpSkillsImportPath        = newOp("skills.import_path", "", "Import a skill from a folder on the server (admins, when enabled)", (*Service).ImportPath)
	OpSkillsEditMetadata      = newOp("skills.edit_metadata", "skills_edit_metadata", "Rename a skill or change its description: a new version whose SKILL.md says so", (*Service).UpdateSkillMetadata)
	OpSkillsEditContent       = newOp("skills.edit_content", "skills_edit_content", "Replace a skill's files, making a new version", (*Service).ReplaceSkillFiles)
	OpSkillsEditFromArchive   = newOp("skills.edit_from_archive", "", "Replace a skill's files with a zip, tar or tar.gz archive, making a new version", (*Service).ReplaceSkillFilesFromArchive)
	OpSkillsDelete            = newOpNoResult("skills.delete", "skills_delete", "Delete a skill and its versions", (*Service).DeleteSkill)
	OpSkillsListFiles         = newOp("skills.list_files", "skills_list_files", "List the files of a skill version", (*Service).ListSkillFiles)
	OpSkillsGetFile           = newOp("skills.get_file", "skills_get_file", "Read one file of a skill version", (*Service).GetSkillFile)
	OpSkillsGetContent        = newOp("skills.get_content", "", "Read a skill version's SKILL.md", (*Service).GetSkillContent)
	OpSkillsInstall           = newOp("skills.install", "skills_install", "Install a catalog item into the workspace", (*Service).InstallSkill)
	OpSkillsUpdateInstalled   = newOp("skills.update_installed", "", "Move an installed skill to another catalog version (admins)", (*Service).UpdateInstalledSkill)
	OpSkillsVersionsList      = newOp("skills.versions.list", "", "List a skill's versions, newest first", (*Service).ListSkillVersions)
	OpSkillsVersionsGet       = newOp("skills.versions.get", "", "Get one version of a skill with its files", (*Service).GetSkillVersion)
	OpSkillsStats             = newOp("skills.stats", "", "Report what finished tasks did with each skill of the workspace or of an agent: offers, activations, refusals, unloads, outcomes, per version (any role)", (*Service).SkillStats)
	OpSkillsFindings          = newOp("skills.findings", "", "List what the security scanner found in a skill version", (*Service).SkillFindings)
	OpSkillsVersionsRestore   = newOp("skills.versions.restore", "", "Make an old version current again, as a new version", (*Service).RestoreSkillVersion)

	OpCatalogRegistriesCreate = newOp("catalog.registries.create", "", "Add a catalog registry (instance admins)", (*Service).CreateRegistry)
	OpCatalogRegistriesList   = newOp("catalog.registries.list", "", "List catalog registries", (*Service).ListRegistries)
	OpCatalogItemsPublish     = newOp("catalog.items.publish", "", "Publish a skill archive as the next version of a catalog item (instance admins)", (*Service).PublishCatalogItem)
	OpCatalogItemsList        = newOp("catalog.items.list", "", "List catalog items", (*Service).ListCatalogItems)
	OpCatalogItemsFindings    = newOp("catalog.items.findings", "", "List what the security scanner found in a catalog item version", (*Service).CatalogItemFindings)
	OpCatalogRegistriesSetKey = newOp("catalog.registries.set_key", "", "Replace a registry's public key for keyed signatures (instance admins)", (*Service).SetRegistryKey)
	OpCatalogItemsVersion     = newOp("catalog.items.version", "", "Get a catalog item version with who signed it and whether that verifies", (*Service).CatalogItemVersion)

	OpSkillsPermissions        = newOp("skills.permissions", "", "Show what a skill's package asks for in its skilld.yaml (network hosts, secrets) and whether an admin approved it", (*Service).GetSkillPermissions)
	OpSkillsPermissionsApprove = newOp("skills.permissions.approve", "", "Approve what one package (digest) of a skill asks for (admins)", (*Service).ApprovePermissions)

	OpSecretsPut    = newOpNoResult("secrets.put", "", "Store or replace a workspace secret, encrypted at rest (admins)", (*Service).PutSecret)
	OpSecretsList   = newOp("secrets.list", "", "List the workspace's secrets: names and update times, never values", (*Service).ListSecrets)
	OpSecretsReseal = newOp("secrets.reseal", "", "Encrypt again under the current key the secrets sealed under an old one (admins; key rotation)", (*Service).ResealSecrets)
	OpSecretsDelete = newOpNoResult("secrets.delete", "", "Delete a workspace secret (admins)", (*Service).DeleteSecret)

	OpPolicyGet = newOp("policy.get", "", "Get the workspace's install rules and tool policy", (*Service).GetPolicy)
	OpPolicyPut = newOp("policy.put", "", "Replace the workspace's install rules and tool policy (admins)", (*Service).PutPolicy)

	OpAgentsCreate     = newOp("agents.create", "", "Create an agent", (*Service).CreateAgent)
	OpAgentsList       = newOp("agents.list", "", "List agents", (*Service).ListAgents)
	OpAgentsGet        = newOp("agents.get", "", "Get an agent", (*Service).GetAgent)
	OpAgentsUpdate     = newOp("agents.update", "", "Change an agent", (*Service).UpdateAgent)
	OpAgentsDelete     = newOpNoResult("agents.delete", "", "Delete an agent", (*Service).DeleteAgent)
	OpAgentsCatalog    = newOp("agents.catalog", "", "Show how an agent's skill catalog fits its budget at its window and the common ones: which skills are shortened or listed by name only", (*Service).AgentCatalog)
	OpAgentsCard       = newOp("agents.card", "", "Describe an agent and the skills it discloses (served as an A2A agent card)", (*Service).AgentCard)
	OpDiscoveryIndex   = newOp("discovery.index", "", "List the workspace's disclosed skills as an Agent Skills discovery index", (*Service).DiscoveryIndex)
	OpDiscoveryArchive = newOp("discovery.archive", "", "Download a disclosed skill as the reproducible zip its discovery entry names", (*Service).SkillArchive)
	OpTasksStart       = newOp("tasks.start", "", "Start a task: run an agent on an input", (*Service).RunTask)
	OpTasksList        = newOp("tasks.list", "", "List the workspace's tasks, newest first", (*Service).ListTasks)
	OpTasksGet         = newOp("tasks.get", "", "Get a task with its snapshot", (*Service).GetTask)
	OpTasksEvents      = newOp("tasks.events", "", "Read a task's log: every message and event in order", (*Service).TaskEvents)
	OpTasksCancel      = newOp("tasks.cancel", "", "Stop a task", (*Service).CancelTask)
	OpTasksDelete      = newOpNoResult("tasks.delete", "", "Delete a finished task with its log and stored outputs (admins, and the member who started it)", (*Service).DeleteTask)
	OpTasksApprove     = newOp("tasks.approve", "", "Approve or reject a tool call waiting for approval (admins)", (*Service).DecideApproval)

	OpEvalsRun  = newOp("evals.run", "", "Run the trigger evals of an agent's skills with its catalog and model, and store each skill's result", (*Service).RunEvals)
	OpEvalsList = newOp("evals.list", "", "List stored trigger eval results, newest first", (*Service).ListEvals)
)

// Operations lists every operation of the service. Adapters build their
// routes and tools from it; tests check that none is missing, and that
// every Op above is listed once.
func Operations() []Operation {
	return []Operation{
		OpWorkspacesCreate.Operation,
		OpWorkspacesList.Operation,
		OpWorkspacesUpdate.Operation,
		OpWorkspacesUsage.Operation,
		OpAdminFsck.Operation,
		OpTokensCreate.Operation,
		OpTokensList.Operation,
		OpTokensRevoke.Operation,
		OpTokensSelf.Operation,

		OpSkillsList.Operation,
		OpSkillsGet.Operation,
		OpSkillsCreate.Operation,
		OpSkillsCreateFromArchive.Operation,
		OpSkillsImportGitHub.Operation,
		OpSkillsImportPath.Operation,
		OpSkillsEditMetadata.Operation,
		OpSkillsEditContent.Operation,
		OpSkillsEditFromArchive.Operation,
		OpSkillsDelete.Operation,
		OpSkillsListFiles.Operation,
		OpSkillsGetFile.Operation,
		OpSkillsGetContent.Operation,
		OpSkillsInstall.Operation,
		OpSkillsUpdateInstalled.Operation,
		OpSkillsVersionsList.Operation,
		OpSkillsVersionsGet.Operation,
		OpSkillsVersionsRestore.Operation,
		OpSkillsStats.Operation,
		OpSkillsFindings.Operation,
		OpSkillsPermissions.Operation,
		OpSkillsPermissionsApprove.Operation,
		OpSecretsPut.Operation,
		OpSecretsList.Operation,
		OpSecretsDelete.Operation,
		OpSecretsReseal.Operation,

		OpCatalogRegistriesCreate.Operation,
		OpCatalogRegistriesList.Operation,
		OpCatalogItemsPublish.Operation,
		OpCatalogItemsList.Operation,
		OpCatalogItemsFindings.Operation,
		OpCatalogRegistriesSetKey.Operation,
		OpCatalogItemsVersion.Operation,

		OpPolicyGet.Operation,
		OpPolicyPut.Operation,

		OpAgentsCreate.Operation,
		OpAgentsList.Operation,
		OpAgentsGet.Operation,
		OpAgentsUpdate.Operation,
		OpAgentsDelete.Operation,
		OpAgentsCatalog.Operation,
		OpAgentsCard.Operation,
		OpDiscoveryIndex.Operation,
		OpDiscoveryArchive.Operation,
		OpTasksStart.Operation,
		OpTasksList.Operation,
		OpTasksGet.Operation,
		OpTasksEvents.Operation,
		OpTasksCancel.Operation,
		OpTasksDelete.Operation,
		OpTasksApprove.Operation,
		OpEvalsRun.Operation,
		OpEvalsList.Operation,
	}
}
