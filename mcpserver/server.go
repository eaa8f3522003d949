// Package mcpserver serves a workspace's skills to any MCP client (Claude
// Desktop, Cursor, VS Code, Codex, …) by progressive disclosure: a
// list_skills tool, an activate_skill tool whose skill_name is an enum of
// the disclosed skills, a read_skill_file tool, every skill file as a
// skill://<name>/<path> resource, the skill://index.json index, and the
// Skills extension (io.modelcontextprotocol/skills: skills/list,
// skills/get, resources/directory/read). A skill is published under its
// stored name everywhere, its SKILL.md frontmatter included.
//
// It is a thin adapter over service.Service, like the REST API: every call
// runs as one service.Actor, so the token's role and the workspace's install
// policy apply exactly as they do elsewhere. The MCP SDK's types stay inside
// this package; callers get a Server (stdio) or an http.Handler.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/agent/tokenizer"
	"github.com/skilld/skilld/agent/tool"
	"github.com/skilld/skilld/service"
	"github.com/skilld/skilld/skilltools"
)

// DefaultWindow is the context window activations are budgeted against
// when neither the operator nor the client says otherwise: the window of
// today's common frontier models.
const DefaultWindow = 128000

// MaxFileRead caps what read_skill_file returns, the same cap as the agent
// toolset's skills_get_file, so a model never gets a file larger than a
// run would give it.
const MaxFileRead = skilltools.MaxFileRead

// Options configure a server; the zero value is usable.
type Options struct {
	// Window is the client model's context window in tokens (default
	// DefaultWindow). One activation may take EntryShare of it, as in runs.
	Window int
	// EntryShare is the share of the window one activation may take
	// (default agent.DefaultEntryShare).
	EntryShare float64
	// Tokenizer counts tokens for the budget (default o200k_base, the
	// runtime's approximation for unknown models).
	Tokenizer agent.Counter
	// ManagementTools also offers the agent toolset's skill operations
	// (skills_create, skills_edit_content, …). The service checks the
	// actor's role on each call, so a viewer token gets a forbidden tool
	// error for anything that changes the workspace.
	ManagementTools bool
	// Version is the server version reported to clients.
	Version string
	// Logger receives internal errors, whose details are never sent to
	// clients (default: discard).
	Logger *slog.Logger

	// caches are shared by the sessions of one HTTPHandler.
	caches *caches
}

func (o Options) withDefaults() (Options, error) {
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	if o.EntryShare == 0 {
		o.EntryShare = agent.DefaultEntryShare
	}
	switch {
	case o.Window < 0:
		return o, skilld.Errorf(skilld.EINVALID, "context window must be positive, not %d", o.Window)
	case o.EntryShare < 0 || o.EntryShare > 1:
		return o, skilld.Errorf(skilld.EINVALID, "entry share must be between 0 and 1, not %g", o.EntryShare)
	}
	if o.Tokenizer == nil {
		t, err := tokenizer.NewCache().Get(tokenizer.O200kBase)
		if err != nil {
			return o, err
		}
		o.Tokenizer = t
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.caches == nil {
		o.caches = newCaches()
	}
	return o, nil
}

// Server is one MCP server acting for one actor in one workspace.
type Server struct {
	svc   *service.Service
	actor service.Actor
	opts  Options
	mcp   *mcp.Server

	// mu guards what the session was last shown, so a later list can tell
	// whether the skills changed and the client must be told.
	mu    sync.Mutex
	shown *view
}

// New returns a server for actor, which must already act in the workspace
// to serve (service.In). It takes the workspace's disclosed skills as they
// are now for the activate_skill enum, from what earlier sessions read
// while the workspace's revision stands; the enum is brought up to date
// when a client lists tools or resources again. Resources are listed a
// page at a time when asked for.
func New(ctx context.Context, svc *service.Service, actor service.Actor, opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := actor.Can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	s := &Server{svc: svc, actor: actor, opts: opts}
	caps := &mcp.ServerCapabilities{
		Tools:     &mcp.ToolCapabilities{ListChanged: true},
		Resources: &mcp.ResourceCapabilities{ListChanged: true},
	}
	caps.AddExtension(ExtensionSkills, map[string]any{"directoryRead": true})
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "skilld", Title: "skilld skills", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       opts.Logger,
		Capabilities: caps,
		// Everything this server answers depends on the token's workspace
		// and policy: no result may be shared with another user.
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = cacheScope },
	})
	for _, t := range []*tool.Tool{s.listSkillsTool(), s.readSkillFileTool()} {
		s.addTool(t)
	}
	if opts.ManagementTools {
		tools, err := skilltools.New(svc, actor)
		if err != nil {
			return nil, fmt.Errorf("building the management tools: %w", err)
		}
		for _, t := range tools {
			s.addTool(t)
		}
	}
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "skill-file",
		Title:       "A file of a skill",
		Description: "Any file of a disclosed skill, by skill name and path in the skill",
		URITemplate: uriScheme + "://{skill}/{+path}",
	}, s.readResource)
	s.mcp.AddResource(indexResource(), s.readIndex)
	if err := s.registerExtension(); err != nil {
		return nil, err
	}
	// Lists are the moment a client looks again: that is when the enum
	// and the resources are brought up to date (and list_changed sent).
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/list" && method != "resources/list" {
				return next(ctx, method, req)
			}
			v, err := s.refresh(ctx)
			if err != nil {
				return nil, s.protocolError(err)
			}
			// The SDK would list only resources added to it: the files
			// of every skill are listed here instead, a page at a time.
			if r, ok := req.(*mcp.ListResourcesRequest); ok {
				return s.listResources(ctx, v, r)
			}
			res, err := next(ctx, method, req)
			if l, ok := res.(*mcp.ListToolsResult); ok && err == nil && method == "tools/list" {
				s.withEnum(l)
			}
			return res, err
		}
	})
	if _, err := s.refresh(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// instructions tell the client's model how the tools fit together.
const instructions = "This server holds Agent Skills: folders of instructions (SKILL.md) with scripts and references. " +
	"Call list_skills to see which skills exist, activate_skill before working on a task a skill covers, " +
	"and read_skill_file (or the skill:// resources) for the files its instructions point to."

// Run serves one client over the given streams (stdio for `skilld mcp`)
// until the client disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	if err := s.mcp.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out}); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

// refresh brings the activate_skill enum up to date with the disclosed
// skills, and tells the client when the enum or the resources changed
// since the session last looked.
func (s *Server) refresh(ctx context.Context) (*view, error) {
	v, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	names, err := s.enum(ctx, v)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	shown := s.shown
	if shown == v {
		return v, nil
	}
	s.shown = v
	// Every add announces a change, and a list must not announce one when
	// nothing moved.
	if shown == nil || !slices.Equal(names, shown.names) {
		s.addTool(s.activateSkillTool())
	}
	if shown != nil && shown.resources != v.resources {
		// The resources are listed by listResources, not added to the
		// SDK: adding the index again is how its clients are told.
		s.mcp.AddResource(indexResource(), s.readIndex)
	}
	return v, nil
}

// withEnum gives activate_skill in a tools/list result the input schema
// of the session's view. The SDK re-encodes a tool's whole schema when it
// is added, which with an enum of thousands of names would make every new
// session cost as much as the workspace is large; so the tool is added
// with a schema without the enum, and lists show the view's, encoded once
// per view.
func (s *Server) withEnum(l *mcp.ListToolsResult) {
	s.mu.Lock()
	shown := s.shown
	s.mu.Unlock()
	if shown == nil {
		return
	}
	for i, t := range l.Tools {
		if t.Name == toolActivateSkill {
			// The SDK's own tool stays as it is: the result gets a copy.
			c := *t
			c.InputSchema = shown.schema
			l.Tools[i] = &c
		}
	}
}

// addTool offers a runtime tool over MCP: the same name, description and
// schema, errors turned into MCP tool errors.
func (s *Server) addTool(t *tool.Tool) {
	schema := t.Schema
	if schema == nil {
		schema = &jsonschema.Schema{Type: "object"}
	}
	s.mcp.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: readOnly(t.Name)}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args json.RawMessage
			// Clients send no arguments, or null, for a tool without
			// parameters; the toolset reads both as {}.
			if req.Params != nil && string(req.Params.Arguments) != "null" {
				args = req.Params.Arguments
			}
			out, err := t.Call(ctx, args)
			if err != nil {
				return s.toolError(t.Name, err), nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil
		})
}

// readOnly says which tools only read: this package's own tools and the
// toolset's reads. Clients use the hint to skip confirmations.
func readOnly(name string) bool {
	switch name {
	case toolListSkills, toolActivateSkill, toolReadSkillFile, "skills_list", "skills_get", "skills_list_files", "skills_get_file":
		return true
	}
	return false
}

// toolError is how every failed call reaches the client: an MCP tool
// error whose text names the code and what was wrong, and whose
// structured content carries both for programs. Internal errors are
// logged and shown only as a generic message.
func (s *Server) toolError(name string, err error) *mcp.CallToolResult {
	code := skilld.ErrorCode(err)
	msg := skilld.ErrorMessage(err)
	if code == skilld.EINTERNAL {
		s.opts.Logger.Error("mcp tool failed", "tool", name, "err", err)
	}
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s failed (%s): %s", name, code, msg)}},
		StructuredContent: map[string]any{"error": map[string]any{"code": code, "message": msg}},
	}
}
