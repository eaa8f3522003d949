package httpapi

import (
	"net/http"
	"strings"
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
	// Op is the service operation's name; "" for the public routes that
	// are not operations (health check, OpenAPI document).
	Op     string
	Status int // status of a success
	Body   BodyKind
	Reply  ReplyKind
	Role   string
}

// Workspace reports whether the route acts inside a workspace named in its
// path.
func (r Route) Workspace() bool { return strings.HasPrefix(r.Pattern, "/v1/workspaces/{ws}/") }

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
	r := func(method, pattern, op string, status int, body BodyKind, role string) Route {
		return Route{Method: method, Pattern: pattern, Op: op, Status: status, Body: body, Role: role}
	}
	withReply := func(rt Route, reply ReplyKind) Route { rt.Reply = reply; return rt }
	return []Route{
		r(get, HealthPath, "", ok, none, RolePublic),
		r(get, OpenAPIPath, "", ok, none, RolePublic),

		r(post, "/v1/workspaces", "workspaces.create", created, json, RoleInstance),
		r(get, "/v1/workspaces", "workspaces.list", ok, none, RoleViewer),
		r(post, "/v1/admin/fsck", "admin.fsck", ok, json, RoleInstance),

		r(post, ws+"/tokens", "tokens.create", created, json, RoleAdmin),
		r(get, ws+"/tokens", "tokens.list", ok, none, RoleAdmin),
		r(del, ws+"/tokens/{id}", "tokens.revoke", noContent, none, RoleAdmin),
		r(get, "/v1/token", "tokens.self", ok, none, RoleViewer),

		r(get, ws+"/skills", "skills.list", ok, none, RoleViewer),
		r(post, ws+"/skills", "skills.create", created, json, RoleMember),
		r(post, ws+"/skills/upload", "skills.create_from_archive", created, archive, RoleMember),
		withReply(r(post, ws+"/skills/import", "skills.import_github", created, json, RoleMember), ReplyOneOrMany),
		r(post, ws+"/skills/import-path", "skills.import_path", created, json, RoleAdmin),
		r(post, ws+"/skills/install", "skills.install", created, json, RoleMember),
		r(get, skill, "skills.get", ok, none, RoleViewer),
		r(patch, skill, "skills.edit_metadata", ok, json, RoleMember),
		r(del, skill, "skills.delete", noContent, none, RoleMember),
		r(get, skill+"/content", "skills.get_content", ok, none, RoleViewer),
		r(get, skill+"/files", "skills.list_files", ok, none, RoleViewer),
		withReply(r(get, skill+"/files/{path...}", "skills.get_file", ok, none, RoleViewer), ReplyFile),
		r(put, skill+"/files", "skills.edit_content", ok, json, RoleMember),
		r(post, skill+"/upload", "skills.edit_from_archive", ok, archive, RoleMember),
		r(get, skill+"/versions", "skills.versions.list", ok, none, RoleViewer),
		r(get, skill+"/versions/{n}", "skills.versions.get", ok, none, RoleViewer),
		r(post, skill+"/versions/{n}/restore", "skills.versions.restore", ok, json, RoleMember),
		r(post, skill+"/update", "skills.update_installed", ok, json, RoleAdmin),

		r(get, ws+"/policy", "policy.get", ok, none, RoleViewer),
		r(put, ws+"/policy", "policy.put", ok, json, RoleAdmin),

		r(get, ws+"/agents", "agents.list", ok, none, RoleViewer),
		r(post, ws+"/agents", "agents.create", created, json, RoleMember),
		r(get, ws+"/agents/{id}", "agents.get", ok, none, RoleViewer),
		r(patch, ws+"/agents/{id}", "agents.update", ok, json, RoleMember),
		r(del, ws+"/agents/{id}", "agents.delete", noContent, none, RoleMember),
		r(get, ws+"/agents/{id}/.well-known/agent-card.json", "agents.card", ok, none, RoleViewer),
		r(get, ws+DiscoveryIndexPath, "discovery.index", ok, none, RoleViewer),
		withReply(r(get, ws+DiscoveryArchivePath, "discovery.archive", ok, none, RoleViewer), ReplyFile),

		r(post, ws+"/agents/{id}/tasks", "tasks.start", created, json, RoleMember),
		r(get, ws+"/tasks", "tasks.list", ok, none, RoleViewer),
		r(get, ws+"/tasks/{id}", "tasks.get", ok, none, RoleViewer),
		withReply(r(get, ws+"/tasks/{id}/events", "tasks.events", ok, none, RoleViewer), ReplyEvents),
		r(post, ws+"/tasks/{id}/cancel", "tasks.cancel", ok, json, RoleMember),
		r(post, ws+"/tasks/{id}/approvals/{call}", "tasks.approve", ok, json, RoleAdmin),

		r(get, "/v1/catalog/registries", "catalog.registries.list", ok, none, RoleViewer),
		r(post, "/v1/catalog/registries", "catalog.registries.create", created, json, RoleInstance),
		r(get, "/v1/catalog/items", "catalog.items.list", ok, none, RoleViewer),
		r(post, "/v1/catalog/registries/{r}/items", "catalog.items.publish", created, archive, RoleInstance),
	}
}

// RouteFor returns the route of an operation.
func RouteFor(op string) (Route, bool) {
	for _, rt := range Routes() {
		if rt.Op == op && op != "" {
			return rt, true
		}
	}
	return Route{}, false
}
