-- Skill names are unique by their confusable skeleton too (UTS #39), so
-- "pdf-tools" and "pdf-tооls" (Cyrillic о) cannot both exist in one
-- workspace. The store fills the column (the skeleton is computed in Go)
-- for new rows and, right after this migration, for existing ones; of
-- existing skills already confusable with each other, the oldest gets the
-- skeleton and the others keep NULL, which a unique index lets be.

ALTER TABLE skills ADD COLUMN name_skeleton TEXT;
CREATE UNIQUE INDEX skills_name_skeleton ON skills (workspace_id, name_skeleton);
