-- Revisions of what skill lists show, so a server can keep a page and
-- know with one small read whether it still stands: a workspace's
-- skills_rev moves with every change to its skills or installs, the one
-- row of list_revision with every change to the catalog. Triggers keep
-- them, so no write path can forget to.

ALTER TABLE workspaces ADD COLUMN skills_rev INTEGER NOT NULL DEFAULT 0;

CREATE TABLE list_revision (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	catalog INTEGER NOT NULL
);
INSERT INTO list_revision (id, catalog) VALUES (1, 0);

CREATE TRIGGER skills_rev_insert AFTER INSERT ON skills BEGIN
	UPDATE workspaces SET skills_rev = skills_rev + 1 WHERE id = NEW.workspace_id;
END;
CREATE TRIGGER skills_rev_update AFTER UPDATE ON skills BEGIN
	UPDATE workspaces SET skills_rev = skills_rev + 1 WHERE id IN (OLD.workspace_id, NEW.workspace_id);
END;
CREATE TRIGGER skills_rev_delete AFTER DELETE ON skills BEGIN
	UPDATE workspaces SET skills_rev = skills_rev + 1 WHERE id = OLD.workspace_id;
END;
CREATE TRIGGER installs_rev_insert AFTER INSERT ON installs BEGIN
	UPDATE workspaces SET skills_rev = skills_rev + 1 WHERE id = NEW.workspace_id;
END;
CREATE TRIGGER installs_rev_update AFTER UPDATE ON installs BEGIN
	UPDATE workspaces SET skills_rev = skills_rev + 1 WHERE id IN (OLD.workspace_id, NEW.workspace_id);
END;
CREATE TRIGGER installs_rev_delete AFTER DELETE ON installs BEGIN
	UPDATE workspaces SET skills_rev = skills_rev + 1 WHERE id = OLD.workspace_id;
END;
CREATE TRIGGER catalog_items_rev_insert AFTER INSERT ON catalog_items BEGIN
	UPDATE list_revision SET catalog = catalog + 1;
END;
CREATE TRIGGER catalog_items_rev_update AFTER UPDATE ON catalog_items BEGIN
	UPDATE list_revision SET catalog = catalog + 1;
END;
CREATE TRIGGER catalog_items_rev_delete AFTER DELETE ON catalog_items BEGIN
	UPDATE list_revision SET catalog = catalog + 1;
END;
CREATE TRIGGER registries_rev_update AFTER UPDATE ON registries BEGIN
	UPDATE list_revision SET catalog = catalog + 1;
END;
CREATE TRIGGER registries_rev_delete AFTER DELETE ON registries BEGIN
	UPDATE list_revision SET catalog = catalog + 1;
END;
