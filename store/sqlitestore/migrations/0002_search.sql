-- Substring search over skills' names and descriptions through a trigram
-- index (FTS5's trigram tokenizer), kept in step with skills by triggers.
-- A LIKE '%term%' on the index reads the matching rows instead of every
-- row of the workspace.

CREATE VIRTUAL TABLE skills_search USING fts5(
	search_text,
	content = 'skills',
	content_rowid = 'rowid',
	tokenize = 'trigram'
);
INSERT INTO skills_search (skills_search) VALUES ('rebuild');

CREATE TRIGGER skills_search_insert AFTER INSERT ON skills BEGIN
	INSERT INTO skills_search (rowid, search_text) VALUES (new.rowid, new.search_text);
END;

CREATE TRIGGER skills_search_delete AFTER DELETE ON skills BEGIN
	INSERT INTO skills_search (skills_search, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
END;

-- Every skill update writes search_text; only a changed one touches the index.
CREATE TRIGGER skills_search_update AFTER UPDATE OF search_text ON skills
WHEN old.search_text IS NOT new.search_text BEGIN
	INSERT INTO skills_search (skills_search, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
	INSERT INTO skills_search (rowid, search_text) VALUES (new.rowid, new.search_text);
END;
