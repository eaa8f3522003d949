package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/skilld/skilld/service"
)

// BodyKind says how a route reads its request body.
type BodyKind int

const (
	// BodyNone: no body; every parameter is in the path or the query.
	BodyNone BodyKind = iota
	// BodyJSON: a JSON object (at most MaxJSONBody bytes), decoded strictly.
	BodyJSON
	// BodyArchive: a zip, tar or tar.gz archive (at most MaxArchiveBody
	// bytes), as the raw body or as the multipart/form-data field "file";
	// the other parameters come from the query or other form fields.
	BodyArchive
)

// ReplyKind says how a route writes the operation's result.
type ReplyKind int

const (
	// ReplyJSON writes the result as JSON (nothing for 204 routes).
	ReplyJSON ReplyKind = iota
	// ReplyFile streams the bytes of one package file, with its digest as
	// the ETag.
	ReplyFile
	// ReplyArchive streams a skill as a zip, with its digest as the ETag.
	ReplyArchive
	// ReplyCard writes the A2A agent card made of an agent's profile.
	ReplyCard
	// ReplyOneOrMany writes the only item of an {"items": [...]} result as
	// the object itself, and the list when there are several: an import
	// of one skill answers like a create.
	ReplyOneOrMany
	// ReplyEvents streams a task's log as Server-Sent Events (or answers
	// once with ?format=json).
	ReplyEvents
)

// Who may call a route. Roles are enforced by the service, not here: the
// route table states them for the docs, the OpenAPI document and the
// security test, which checks that the service refuses everyone below.
const (
	RolePublic   = "public"   // no token
	RoleViewer   = "viewer"   // any valid token (of the workspace, for workspace routes)
	RoleMember   = "member"   // member or admin of the workspace
	RoleAdmin    = "admin"    // admin of the workspace
	RoleInstance = "instance" // an instance-admin token
)

// Route maps an HTTP method and path pattern to a service operation.
type Route struct {
	Method string
	// Pattern is a net/http ServeMux path pattern. {ws} is the workspace
	// (ID or name); other wildcards fill the params fields whose `path` tag
	// names them.
	Pattern string
	// Op is the service operation; the zero Operation for the public
	// routes that are not operations (health check, OpenAPI document).
	Op     service.Operation
	Status int // status of a success
	Body   BodyKind
	Reply  ReplyKind
	Role   string
	// answer, when set, makes the answer of a decoded request in place of
	// the operation's result: a Responder that writes what is not JSON.
	answer answer
}

// answer is what a route makes of a decoded request (params, a pointer
// to the operation's params): the result to write, or a Responder.
type answer func(ctx context.Context, s *Server, rt Route, a service.Actor, params any) (any, error)

// route binds an operation to a method and pattern. Taking the Op, not a
// name, makes a search for the Op lead from the URL to the handler.
func route[P, R any](method, pattern string, op service.Op[P, R], status int, body BodyKind, role string) Route {
	return Route{Method: method, Pattern: pattern, Op: op.Operation, Status: status, Body: body, Role: role}
}

// routeResult is route for a GET whose result is not written as JSON but
// by the Responder as makes of it (a download, the A2A card); reply says
// which for the OpenAPI document and the client.
func routeResult[P, R any](method, pattern string, op service.Op[P, R], role string, reply ReplyKind, as func(*Server, R) Responder) Route {
	rt := route(method, pattern, op, http.StatusOK, BodyNone, role)
	rt.Reply = reply
	rt.answer = func(ctx context.Context, s *Server, _ Route, a service.Actor, params any) (any, error) {
		res, err := op.Call(ctx, s.Service, a, params)
		if err != nil {
			return nil, err
		}
		return as(s, res.(R)), nil
	}
	return rt
}

// routeRequest is route for a GET answered by the Responder as makes of
// the decoded request, which calls the service itself, as often as it
// needs: the task log, which may be a stream.
func routeRequest[P, R any](method, pattern string, op service.Op[P, R], role string, reply ReplyKind, as func(s *Server, rt Route, a service.Actor, p *P) Responder) Route {
	rt := route(method, pattern, op, http.StatusOK, BodyNone, role)
	rt.Reply = reply
	rt.answer = func(_ context.Context, s *Server, rt Route, a service.Actor, params any) (any, error) {
		return as(s, rt, a, params.(*P)), nil
	}
	return rt
}

// Workspace reports whether the route acts inside a workspace named in its
// path: on something in it, or on the workspace itself.
func (r Route) Workspace() bool {
	return strings.HasPrefix(r.Pattern, "/v1/workspaces/{ws}/") || r.Pattern == "/v1/workspaces/{ws}"
}

// Paths of the routes that are not service operations.
const (
	HealthPath  = "/healthz"
	OpenAPIPath = "/v1/openapi.json"
)

// Routes returns the route table: every service operation has exactly one
// route (a test enforces it), plus the public health check and OpenAPI
// document. The server, the client, the OpenAPI document and docs/API.md
// all follow this table.
func Routes() []Route {
	const (
		get, post, put, patch, del = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete
		ok, created, noContent     = http.StatusOK, http.StatusCreated, http.StatusNoContent
		none, json, archive        = BodyNone, BodyJSON, BodyArchive
		ws                         = "/v1/workspaces/{ws}"
		skill                      = ws + "/skills/{id}"
	)
	public := func(pattern string) Route {
		return Route{Method: get, Pattern: pattern, Status: ok, Role: RolePublic}
	}
	withReply := func(rt Route, reply ReplyKind) Route { rt.Reply = reply; return rt }
	return []Route{
		public(HealthPath),
		public(OpenAPIPath),

		route(post, "/v1/workspaces", service.OpWorkspacesCreate, created, json, RoleInstance),
		route(get, "/v1/workspaces", service.OpWorkspacesList, ok, none, RoleViewer),
		route(patch, ws, service.OpWorkspacesUpdate, ok, json, RoleInstance),
		route(get, ws+"/usage", service.OpWorkspacesUsage, ok, none, RoleViewer),
		route(post, "/v1/admin/fsck", service.OpAdminFsck, ok, json, RoleInstance),

		route(post, ws+"/tokens", service.OpTokensCreate, created, json, RoleAdmin),
		route(get, ws+"/tokens", service.OpTokensList, ok, none, RoleAdmin),
		route(del, ws+"/tokens/{id}", service.OpTokensRevoke, noContent, none, RoleAdmin),
		route(get, "/v1/token", service.OpTokensSelf, ok, none, RoleViewer),

		route(get, ws+"/skills", service.OpSkillsList, ok, none, RoleViewer),
		route(post, ws+"/skills", service.OpSkillsCreate, created, json, RoleMember),
		route(post, ws+"/skills/upload", service.OpSkillsCreateFromArchive, created, archive, RoleMember),
		withReply(route(post, ws+"/skills/import", service.OpSkillsImportGitHub, created, json, RoleMember), ReplyOneOrMany),
		route(post, ws+"/skills/import-path", service.OpSkillsImportPath, created, json, RoleAdmin),
		route(post, ws+"/skills/install", service.OpSkillsInstall, created, json, RoleMember),
		route(get, ws+"/analytics/skills", service.OpSkillsStats, ok, none, RoleViewer),
		route(get, skill, service.OpSkillsGet, ok, none, RoleViewer),
		route(patch, skill, service.OpSkillsEditMetadata, ok, json, RoleMember),
		route(del, skill, service.OpSkillsDelete, noContent, none, RoleMember),
		route(get, skill+"/content", service.OpSkillsGetContent, ok, none, RoleViewer),
		route(get, skill+"/files", service.OpSkillsListFiles, ok, none, RoleViewer),
		routeResult(get, skill+"/files/{path...}", service.OpSkillsGetFile, RoleViewer, ReplyFile, fileReply),
		route(put, skill+"/files", service.OpSkillsEditContent, ok, json, RoleMember),
		route(post, skill+"/upload", service.OpSkillsEditFromArchive, ok, archive, RoleMember),
		route(get, skill+"/versions", service.OpSkillsVersionsList, ok, none, RoleViewer),
		route(get, skill+"/versions/{n}", service.OpSkillsVersionsGet, ok, none, RoleViewer),
		route(post, skill+"/versions/{n}/restore", service.OpSkillsVersionsRestore, ok, json, RoleMember),
		route(post, skill+"/update", service.OpSkillsUpdateInstalled, ok, json, RoleAdmin),
		route(get, skill+"/findings", service.OpSkillsFindings, ok, none, RoleViewer),
		route(get, skill+"/permissions", service.OpSkillsPermissions, ok, none, RoleViewer),
		route(post, skill+"/permissions/approve", service.OpSkillsPermissionsApprove, ok, json, RoleAdmin),

		route(get, ws+"/secrets", service.OpSecretsList, ok, none, RoleViewer),
		route(put, ws+"/secrets/{name}", service.OpSecretsPut, noContent, json, RoleAdmin),
		route(del, ws+"/secrets/{name}", service.OpSecretsDelete, noContent, none, RoleAdmin),
		route(post, ws+"/secrets/reseal", service.OpSecretsReseal, ok, json, RoleAdmin),

		route(get, ws+"/policy", service.OpPolicyGet, ok, none, RoleViewer),
		route(put, ws+"/policy", service.OpPolicyPut, ok, json, RoleAdmin),

		route(get, ws+"/agents", service.OpAgentsList, ok, none, RoleViewer),
		route(post, ws+"/agents", service.OpAgentsCreate, created, json, RoleMember),
		route(get, ws+"/agents/{id}", service.OpAgentsGet, ok, none, RoleViewer),
		route(patch, ws+"/agents/{id}", service.OpAgentsUpdate, ok, json, RoleMember),
		route(del, ws+"/agents/{id}", service.OpAgentsDelete, noContent, none, RoleMember),
		route(get, ws+"/agents/{id}/catalog", service.OpAgentsCatalog, ok, none, RoleViewer),
		routeResult(get, ws+"/agents/{id}/.well-known/agent-card.json", service.OpAgentsCard, RoleViewer, ReplyCard, agentCardReply),
		route(get, ws+DiscoveryIndexPath, service.OpDiscoveryIndex, ok, none, RoleViewer),
		routeResult(get, ws+DiscoveryArchivePath, service.OpDiscoveryArchive, RoleViewer, ReplyArchive, archiveReply),

		route(post, ws+"/agents/{id}/tasks", service.OpTasksStart, created, json, RoleMember),
		route(get, ws+"/tasks", service.OpTasksList, ok, none, RoleViewer),
		route(post, ws+"/evals", service.OpEvalsRun, created, json, RoleMember),
		route(get, ws+"/evals", service.OpEvalsList, ok, none, RoleViewer),
		route(get, ws+"/tasks/{id}", service.OpTasksGet, ok, none, RoleViewer),
		routeRequest(get, ws+"/tasks/{id}/events", service.OpTasksEvents, RoleViewer, ReplyEvents, taskEventsReply),
		route(post, ws+"/tasks/{id}/cancel", service.OpTasksCancel, ok, json, RoleMember),
		// Members may ask; the service lets the task's starter and admins.
		route(del, ws+"/tasks/{id}", service.OpTasksDelete, noContent, none, RoleMember),
		route(post, ws+"/tasks/{id}/approvals/{call}", service.OpTasksApprove, ok, json, RoleAdmin),

		route(get, "/v1/catalog/registries", service.OpCatalogRegistriesList, ok, none, RoleViewer),
		route(post, "/v1/catalog/registries", service.OpCatalogRegistriesCreate, created, json, RoleInstance),
		route(get, "/v1/catalog/items", service.OpCatalogItemsList, ok, none, RoleViewer),
		route(post, "/v1/catalog/registries/{r}/items", service.OpCatalogItemsPublish, created, archive, RoleInstance),
		route(get, "/v1/catalog/registries/{r}/items/{id}/findings", service.OpCatalogItemsFindings, ok, none, RoleViewer),
		route(put, "/v1/catalog/registries/{r}/public_key", service.OpCatalogRegistriesSetKey, ok, json, RoleInstance),
		route(get, "/v1/catalog/registries/{r}/items/{id}/version", service.OpCatalogItemsVersion, ok, none, RoleViewer),
	}
}

// RouteFor returns the route of an operation.
func RouteFor(op service.Operation) (Route, bool) {
	for _, rt := range Routes() {
		if rt.Op.Name == op.Name && op.Name != "" {
			return rt, true
		}
	}
	return Route{}, false
}
