-- Revisions of what skill lists show, so a server can keep a page and
-- know with one small read whether it still stands: a workspace's
-- skills_rev moves with every change to its skills or installs, the one
-- row of list_revision with every change to the catalog. Triggers keep
-- them, so no write path can forget to; the catalog's are per statement,
-- so a sync of many items moves it once.

ALTER TABLE workspaces ADD COLUMN skills_rev BIGINT NOT NULL DEFAULT 0;

CREATE TABLE list_revision (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	catalog BIGINT NOT NULL
);
INSERT INTO list_revision (id, catalog) VALUES (1, 0);

CREATE FUNCTION bump_skills_rev() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP <> 'INSERT' THEN
		UPDATE workspaces SET skills_rev = skills_rev + 1 WHERE id = OLD.workspace_id;
	END IF;
	IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.workspace_id <> OLD.workspace_id) THEN
		UPDATE workspaces SET skills_rev = skills_rev + 1 WHERE id = NEW.workspace_id;
	END IF;
	RETURN NULL;
END $$;

CREATE FUNCTION bump_catalog_rev() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE list_revision SET catalog = catalog + 1;
	RETURN NULL;
END $$;

CREATE TRIGGER skills_rev AFTER INSERT OR UPDATE OR DELETE ON skills
	FOR EACH ROW EXECUTE FUNCTION bump_skills_rev();
CREATE TRIGGER installs_rev AFTER INSERT OR UPDATE OR DELETE ON installs
	FOR EACH ROW EXECUTE FUNCTION bump_skills_rev();
CREATE TRIGGER catalog_items_rev AFTER INSERT OR UPDATE OR DELETE ON catalog_items
	FOR EACH STATEMENT EXECUTE FUNCTION bump_catalog_rev();
CREATE TRIGGER registries_rev AFTER UPDATE OR DELETE ON registries
	FOR EACH STATEMENT EXECUTE FUNCTION bump_catalog_rev();
