package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/skilld/skilld"
)

// view is a workspace's disclosed skills at one revision, with what is
// derived from them and asked for often: the activate_skill enum and the
// fingerprint of the resource list. Sessions of the workspace share it
// while the revision stands, so a new session lists nothing; everything
// in it is immutable once computed.
type view struct {
	// rev is the revision the view was read at (service.DisclosedRevision),
	// "" for a view read under rules that have none, which is never
	// shared.
	rev    string
	skills []*skilld.Skill
	byName map[string]*skilld.Skill

	mu sync.Mutex
	// schema is activate_skill's input schema offering names, encoded;
	// nil until computed.
	schema json.RawMessage
	names  []string
	// resources changes whenever resources/list may show something else.
	resources string
}

// current returns the view of the actor's workspace as it is now: the
// shared one while the revision stands, else one read now. The revision
// is read before the skills, so a write racing the read can only make the
// stored view miss later, never keep one older than its revision.
func (s *Server) current(ctx context.Context) (*view, error) {
	rev, err := s.svc.DisclosedRevision(ctx, s.actor)
	if err != nil {
		return nil, err
	}
	return s.viewAt(ctx, rev)
}

// viewAt is current with the revision already read.
func (s *Server) viewAt(ctx context.Context, rev string) (*view, error) {
	// Revisions of different workspaces may be equal: views are kept by
	// workspace, and match only at the revision asked for.
	ws := s.actor.WorkspaceID
	if v, ok := s.opts.caches.views.get(ws); ok && rev != "" && v.rev == rev {
		return v, nil
	}
	skills, err := s.svc.DisclosedSkills(ctx, s.actor)
	if err != nil {
		return nil, err
	}
	v := newView(rev, skills)
	if rev != "" {
		s.opts.caches.views.set(ws, v)
	}
	return v, nil
}

func newView(rev string, skills []*skilld.Skill) *view {
	h := sha256.New()
	for _, sk := range skills {
		// A skill's resources follow from its name and description (the
		// served SKILL.md), its package (the files) and its version.
		for _, f := range []string{sk.Name, sk.Description, sk.Digest, strconv.Itoa(sk.Version)} {
			h.Write([]byte(strconv.Itoa(len(f)) + ":" + f))
		}
	}
	v := &view{rev: rev, skills: skills, byName: make(map[string]*skilld.Skill, len(skills)), resources: hex.EncodeToString(h.Sum(nil))}
	for _, sk := range skills {
		v.byName[sk.Name] = sk
	}
	return v
}

// enum returns the names of the view's skills the model may activate,
// computing them and activate_skill's input schema offering them the first
// time a session of the view asks.
func (s *Server) enum(ctx context.Context, v *view) ([]string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.schema != nil {
		return v.names, nil
	}
	names := make([]string, 0, len(v.skills))
	for _, sk := range v.skills {
		// A skill only its user may invoke stays out of the model's
		// choices; its files are still resources a person may read.
		if ok, err := s.invocable(ctx, sk); err != nil {
			return nil, err
		} else if ok {
			names = append(names, sk.Name)
		}
	}
	schema, err := json.Marshal(activateSkillSchema(names))
	if err != nil {
		return nil, fmt.Errorf("encoding the activate_skill schema: %w", err)
	}
	v.names, v.schema = names, schema
	return v.names, nil
}

// invocable says whether the model may activate a skill's current
// version, remembered by package, so a new revision lists the files of
// new packages only.
func (s *Server) invocable(ctx context.Context, sk *skilld.Skill) (bool, error) {
	if ok, hit := s.opts.caches.invocable.get(sk.Digest); hit && sk.Digest != "" {
		return ok, nil
	}
	files, err := s.files(ctx, sk)
	if err != nil {
		return false, err
	}
	ok, err := s.svc.ModelInvocable(ctx, files)
	if err != nil {
		return false, err
	}
	return s.opts.caches.invocable.put(files.Digest, ok), nil
}
