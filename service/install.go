package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/store"
)

type InstallSkillParams struct {
	Item    string `json:"item" jsonschema:"the catalog item as registry/name"`
	Version int    `json:"version,omitempty" jsonschema:"item version to pin; the latest when omitted"`
}

// InstallSkill installs a catalog item into the workspace as a skill pinned
// to an item version (members and up), after asking the install policy.
// Installing an item again returns the existing skill, if the policy still
// allows it. The skill shares the
// item's package: nothing is copied.
func (s *Service) InstallSkill(ctx context.Context, a Actor, p InstallSkillParams) (*SkillView, error) {
	if err := a.can(skilld.RoleMember); err != nil {
		return nil, err
	}
	item, err := s.catalogItem(ctx, p.Item)
	if err != nil {
		return nil, err
	}
	// The policy is asked first, on every call: an item installed before
	// a deny rule is refused like a new one, as runs withhold it.
	if err := s.checkInstall(ctx, a.WorkspaceID, item.Registry, item.Trust, item.Name, nil, nil); err != nil {
		return nil, err
	}
	if existing, err := s.installed(ctx, a, item.ID); skilld.ErrorCode(err) != skilld.ENOTFOUND {
		if err == nil {
			// Asked again with what the scanner found in the installed
			// version, as a run would.
			err = s.checkInstall(ctx, a.WorkspaceID, item.Registry, item.Trust, item.Name, s.storedFindings(existing.Digest), s.catalogSigned(existing.CatalogItemID, existing.CatalogVersion, existing.Digest))
		}
		if err != nil {
			return nil, err
		}
		return existing, nil
	}
	v, err := s.itemVersion(ctx, item, p.Version)
	if err != nil {
		return nil, err
	}
	if err := s.checkInstall(ctx, a.WorkspaceID, item.Registry, item.Trust, item.Name, s.storedFindings(v.Digest), s.catalogSigned(item.ID, v.Number, v.Digest)); err != nil {
		return nil, err
	}
	var id string
	err = s.db.Tx(ctx, func(q store.Querier) error {
		sk, err := q.SkillCreate(ctx, &store.SkillCreateParams{
			WorkspaceID: a.WorkspaceID, Name: item.Name, Description: v.Description, SourceType: skilld.SourceCatalog,
			SourceURL: "catalog://" + item.Registry + "/" + item.Name, Registry: item.Registry, Trust: item.Trust,
			CatalogItemID: item.ID, CatalogVersion: v.Number, CreatedBy: a.Name,
		})
		if err != nil {
			return err
		}
		if _, err := q.SkillVersionCreate(ctx, &store.SkillVersionCreateParams{WorkspaceID: a.WorkspaceID, SkillID: sk.ID, Digest: v.Digest,
			Message: fmt.Sprintf("installed %s/%s version %d", item.Registry, item.Name, v.Number), CreatedBy: a.Name}); err != nil {
			return err
		}
		_, err = q.InstallCreate(ctx, &store.InstallCreateParams{WorkspaceID: a.WorkspaceID, ItemID: item.ID, SkillID: sk.ID, Version: v.Number})
		id = sk.ID
		return err
	})
	if skilld.ErrorCode(err) == skilld.ECONFLICT {
		// Another request installed the item since the check above.
		if existing, ierr := s.installed(ctx, a, item.ID); ierr == nil {
			return existing, nil
		}
	}
	if err != nil {
		return nil, err
	}
	s.event(ctx, a, a.WorkspaceID, "skill.installed", id)
	sk, err := s.db.SkillGet(ctx, &store.SkillGetParams{WorkspaceID: a.WorkspaceID, ID: id})
	if err != nil {
		return nil, err
	}
	return view(sk, nil), nil
}

// installed returns the workspace's install of an item, marked Existing,
// or an ENOTFOUND error.
func (s *Service) installed(ctx context.Context, a Actor, itemID string) (*SkillView, error) {
	in, err := s.db.InstallGet(ctx, &store.InstallGetParams{WorkspaceID: a.WorkspaceID, ItemID: itemID})
	if err != nil {
		return nil, err
	}
	sk, err := s.db.SkillGet(ctx, &store.SkillGetParams{WorkspaceID: a.WorkspaceID, ID: in.SkillID})
	if err != nil {
		return nil, err
	}
	v := view(sk, nil)
	v.Existing = true
	return v, nil
}

// InstalledItems returns the workspace's installs of the given catalog
// items, by item ID; items it has not installed are absent (viewers and
// up). It reads one install per item: callers pass one page of a catalog
// list.
func (s *Service) InstalledItems(ctx context.Context, a Actor, itemIDs []string) (map[string]*skilld.Install, error) {
	if err := a.can(skilld.RoleViewer); err != nil {
		return nil, err
	}
	out := map[string]*skilld.Install{}
	for _, id := range itemIDs {
		in, err := s.db.InstallGet(ctx, &store.InstallGetParams{WorkspaceID: a.WorkspaceID, ItemID: id})
		switch {
		case skilld.ErrorCode(err) == skilld.ENOTFOUND:
		case err != nil:
			return nil, err
		default:
			out[id] = in
		}
	}
	return out, nil
}

// catalogItem finds an item by "registry/name" or by ID.
func (s *Service) catalogItem(ctx context.Context, ref string) (*skilld.CatalogItem, error) {
	if reg, name, ok := strings.Cut(ref, "/"); ok {
		return s.db.CatalogItemGet(ctx, &store.CatalogItemGetParams{Registry: reg, Name: name})
	}
	if ref == "" {
		return nil, invalidField("item", "item is required, as registry/name")
	}
	return s.db.CatalogItemGet(ctx, &store.CatalogItemGetParams{ID: ref})
}

type UpdateInstalledSkillParams struct {
	SkillRef
	Version int `json:"version,omitempty" jsonschema:"item version to pin; the latest when omitted"`
	// Reset discards the workspace's own edits of a forked install.
	Reset bool `json:"reset,omitempty" jsonschema:"also update a skill edited in this workspace, discarding its edits from the current version on"`
	// Eval compares the candidate's trigger evals with the pinned
	// version's first (an install rule's eval_max_regression asks for it
	// anyway).
	Eval *EvalGateParams `json:"eval,omitempty" jsonschema:"compare the candidate version's trigger evals with the pinned version's before updating"`
}

// UpdateInstalledSkill moves an installed skill's pin to another item
// version (admins only), as a new skill version. A skill edited in the
// workspace is not updated unless Reset is set.
func (s *Service) UpdateInstalledSkill(ctx context.Context, a Actor, p UpdateInstalledSkillParams) (*SkillView, error) {
	if err := a.can(skilld.RoleAdmin); err != nil {
		return nil, err
	}
	sk, err := s.skill(ctx, a, p.ID)
	if err != nil {
		return nil, err
	}
	if sk.CatalogItemID == "" {
		return nil, skilld.Errorf(skilld.EINVALID, "skill %q was not installed from the catalog", sk.Name)
	}
	if sk.Forked && !p.Reset {
		return nil, skilld.Errorf(skilld.ECONFLICT, "skill %q was edited in this workspace; update it with reset (skilld skills update --reset, or \"reset\": true in the API) to replace its edits with the catalog version", sk.Name)
	}
	item, err := s.db.CatalogItemGet(ctx, &store.CatalogItemGetParams{ID: sk.CatalogItemID})
	if err != nil {
		return nil, err
	}
	v, err := s.itemVersion(ctx, item, p.Version)
	if err != nil {
		return nil, err
	}
	if err := s.checkInstall(ctx, a.WorkspaceID, item.Registry, item.Trust, item.Name, s.storedFindings(v.Digest), s.catalogSigned(item.ID, v.Number, v.Digest)); err != nil {
		return nil, err
	}
	if v.Digest != sk.Digest {
		if err := s.checkPermissionsCovered(ctx, sk, v.Digest, fmt.Sprintf("version %d of %s/%s", v.Number, item.Registry, item.Name)); err != nil {
			return nil, err
		}
	}
	gate, err := s.gateUpdate(ctx, a, sk, item, v, p.Eval)
	if err != nil {
		return nil, err
	}
	var out *skilld.Skill
	err = s.db.Tx(ctx, func(q store.Querier) error {
		sv, err := q.SkillVersionCreate(ctx, &store.SkillVersionCreateParams{WorkspaceID: a.WorkspaceID, SkillID: sk.ID, Digest: v.Digest,
			Message: fmt.Sprintf("updated to %s/%s version %d", item.Registry, item.Name, v.Number), CreatedBy: a.Name})
		if err != nil {
			return err
		}
		// An update to the pin the skill already has, with its files and
		// description, changes nothing. It is decided after the version
		// is written, which locks the skill (see newVersion).
		cur, err := q.SkillGet(ctx, &store.SkillGetParams{WorkspaceID: a.WorkspaceID, ID: sk.ID})
		if err != nil {
			return err
		}
		same, err := sameAsBefore(ctx, q, a.WorkspaceID, sv, v.Digest)
		if err != nil {
			return err
		}
		if same && !cur.Forked && cur.CatalogVersion == v.Number && cur.Description == v.Description {
			return errUnchanged
		}
		// The skill read back here is the one this update made; after the
		// transaction a concurrent edit could already have moved it on.
		forked, number, desc := false, v.Number, v.Description
		if out, err = q.SkillUpdate(ctx, &store.SkillUpdateParams{WorkspaceID: a.WorkspaceID, ID: sk.ID, CatalogVersion: &number,
			Forked: &forked, Description: &desc, UpdatedBy: a.Name}); err != nil {
			return err
		}
		_, err = q.InstallUpdate(ctx, &store.InstallUpdateParams{WorkspaceID: a.WorkspaceID, ItemID: item.ID, Version: v.Number})
		return err
	})
	if errors.Is(err, errUnchanged) {
		return s.unchanged(ctx, a, sk.ID, nil)
	}
	if err != nil {
		return nil, err
	}
	s.event(ctx, a, a.WorkspaceID, "skill.updated_from_catalog", sk.ID)
	sv := view(out, nil)
	sv.EvalGate = gate
	return sv, nil
}

// itemVersion returns version n of a catalog item, the latest for 0. A
// missing one is named by the item's registry and name, with how many
// versions it has.
func (s *Service) itemVersion(ctx context.Context, item *skilld.CatalogItem, n int) (*skilld.CatalogItemVersion, error) {
	v, err := s.db.CatalogItemVersionGet(ctx, &store.CatalogItemVersionGetParams{ItemID: item.ID, Number: n})
	if skilld.ErrorCode(err) == skilld.ENOTFOUND && n != 0 {
		return nil, &skilld.Error{Code: skilld.ENOTFOUND, Err: err,
			Message: fmt.Sprintf("version %d of catalog item %q not found (it has %s)", n, item.Registry+"/"+item.Name, versionCount(item.LatestVersion))}
	}
	return v, err
}
