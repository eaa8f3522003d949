-- skilld schema, version 1 (PostgreSQL). Times are TIMESTAMPTZ; JSON is
-- JSONB; booleans are BOOLEAN. IDs are UUIDv7 strings made by skilld.
-- Names sort in byte order (COLLATE "C"), as in SQLite, whatever the
-- cluster's locale, so both drivers list in the same order.

CREATE TABLE workspaces (
	id         TEXT PRIMARY KEY,
	name       TEXT COLLATE "C" NOT NULL UNIQUE,
	created_at TIMESTAMPTZ NOT NULL,
	-- Kept by SkillCreate and SkillDelete, so an unfiltered list has its
	-- total without counting a large workspace's skills.
	skill_count BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE members (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name         TEXT COLLATE "C" NOT NULL,
	role         TEXT NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
	created_at   TIMESTAMPTZ NOT NULL,
	UNIQUE (workspace_id, name)
);

CREATE TABLE tokens (
	id             TEXT PRIMARY KEY,
	workspace_id   TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	member_id      TEXT REFERENCES members (id) ON DELETE CASCADE,
	name           TEXT COLLATE "C" NOT NULL,
	role           TEXT NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
	instance_admin BOOLEAN NOT NULL DEFAULT false,
	hash           TEXT NOT NULL UNIQUE,
	created_by     TEXT NOT NULL DEFAULT '',
	created_at     TIMESTAMPTZ NOT NULL,
	expires_at     TIMESTAMPTZ,
	revoked_at     TIMESTAMPTZ,
	last_used_at   TIMESTAMPTZ
);
CREATE INDEX tokens_workspace ON tokens (workspace_id, created_at);

CREATE TABLE packages (
	digest     TEXT PRIMARY KEY,
	manifest   BYTEA NOT NULL,
	total_size BIGINT NOT NULL,
	file_count INTEGER NOT NULL,
	created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE package_files (
	package_digest TEXT NOT NULL REFERENCES packages (digest) ON DELETE CASCADE,
	path           TEXT COLLATE "C" NOT NULL,
	file_digest    TEXT NOT NULL,
	size           BIGINT NOT NULL,
	mode           INTEGER NOT NULL,
	PRIMARY KEY (package_digest, path)
);
-- Finds whether any package still uses a blob before it is deleted.
CREATE INDEX package_files_blob ON package_files (file_digest);

-- One row: the epoch bumped by whoever deletes unreferenced blobs.
CREATE TABLE blob_guard (
	id    INTEGER PRIMARY KEY CHECK (id = 1),
	epoch BIGINT NOT NULL
);
INSERT INTO blob_guard (id, epoch) VALUES (1, 0);

CREATE TABLE registries (
	id         TEXT PRIMARY KEY,
	name       TEXT COLLATE "C" NOT NULL UNIQUE,
	trust      TEXT NOT NULL CHECK (trust IN ('official', 'verified', 'community')),
	created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE catalog_items (
	id             TEXT PRIMARY KEY,
	registry_id    TEXT NOT NULL REFERENCES registries (id) ON DELETE CASCADE,
	registry       TEXT COLLATE "C" NOT NULL, -- the registry's name, so lists page in index order
	name           TEXT COLLATE "C" NOT NULL,
	description    TEXT NOT NULL,
	search_text    TEXT NOT NULL,
	latest_version INTEGER NOT NULL DEFAULT 0,
	created_at     TIMESTAMPTZ NOT NULL,
	updated_at     TIMESTAMPTZ NOT NULL,
	UNIQUE (registry_id, name)
);
CREATE INDEX catalog_items_list ON catalog_items (registry, name);
-- Counting what a workspace could install reads only published items.
CREATE INDEX catalog_items_published ON catalog_items (id) WHERE latest_version > 0;

CREATE TABLE catalog_item_versions (
	item_id        TEXT NOT NULL REFERENCES catalog_items (id) ON DELETE CASCADE,
	number         INTEGER NOT NULL,
	package_digest TEXT NOT NULL REFERENCES packages (digest),
	description    TEXT NOT NULL,
	created_by     TEXT NOT NULL DEFAULT '',
	created_at     TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (item_id, number)
);
CREATE INDEX catalog_item_versions_package ON catalog_item_versions (package_digest);

CREATE TABLE skills (
	id              TEXT PRIMARY KEY,
	workspace_id    TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name            TEXT COLLATE "C" NOT NULL,
	slug            TEXT COLLATE "C" NOT NULL,
	description     TEXT NOT NULL,
	search_text     TEXT NOT NULL,
	source_type     TEXT NOT NULL CHECK (source_type IN ('content', 'zip', 'github', 'path', 'catalog')),
	source_url      TEXT NOT NULL DEFAULT '',
	current_version INTEGER NOT NULL DEFAULT 0,
	registry        TEXT NOT NULL DEFAULT '',
	trust           TEXT NOT NULL DEFAULT '',
	catalog_item_id TEXT REFERENCES catalog_items (id) ON DELETE SET NULL,
	catalog_version INTEGER NOT NULL DEFAULT 0,
	forked          BOOLEAN NOT NULL DEFAULT false,
	created_by      TEXT NOT NULL DEFAULT '',
	updated_by      TEXT NOT NULL DEFAULT '',
	created_at      TIMESTAMPTZ NOT NULL,
	updated_at      TIMESTAMPTZ NOT NULL,
	UNIQUE (workspace_id, slug),
	UNIQUE (workspace_id, name)
);
-- The list page is "a workspace's skills by name" (served by the UNIQUE
-- index on workspace_id, name); these serve its filters.
CREATE INDEX skills_source ON skills (workspace_id, source_type, name);
CREATE INDEX skills_catalog ON skills (workspace_id, catalog_item_id);

CREATE TABLE skill_versions (
	skill_id       TEXT NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
	number         INTEGER NOT NULL,
	package_digest TEXT NOT NULL REFERENCES packages (digest),
	message        TEXT NOT NULL DEFAULT '',
	created_by     TEXT NOT NULL DEFAULT '',
	created_at     TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (skill_id, number)
);
CREATE INDEX skill_versions_package ON skill_versions (package_digest);

CREATE TABLE installs (
	workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	item_id      TEXT NOT NULL REFERENCES catalog_items (id) ON DELETE CASCADE,
	skill_id     TEXT NOT NULL UNIQUE REFERENCES skills (id) ON DELETE CASCADE,
	version      INTEGER NOT NULL,
	created_at   TIMESTAMPTZ NOT NULL,
	updated_at   TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (workspace_id, item_id)
);

CREATE TABLE policies (
	workspace_id  TEXT PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
	install_rules JSONB NOT NULL,
	tools         JSONB NOT NULL,
	updated_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE agents (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name         TEXT COLLATE "C" NOT NULL,
	config       JSONB NOT NULL,
	created_by   TEXT NOT NULL DEFAULT '',
	created_at   TIMESTAMPTZ NOT NULL,
	updated_at   TIMESTAMPTZ NOT NULL,
	UNIQUE (workspace_id, name)
);

CREATE TABLE agent_skills (
	agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
	skill_id TEXT NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
	position INTEGER NOT NULL,
	version  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (agent_id, skill_id)
);
CREATE INDEX agent_skills_skill ON agent_skills (skill_id);

CREATE TABLE tasks (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	agent_id     TEXT REFERENCES agents (id) ON DELETE SET NULL,
	input        TEXT NOT NULL,
	status       TEXT NOT NULL,
	config       JSONB NOT NULL DEFAULT '{}',
	error        TEXT NOT NULL DEFAULT '',
	last_seq     BIGINT NOT NULL DEFAULT 0,
	created_by   TEXT NOT NULL DEFAULT '',
	created_at   TIMESTAMPTZ NOT NULL,
	updated_at   TIMESTAMPTZ NOT NULL,
	started_at   TIMESTAMPTZ,
	finished_at  TIMESTAMPTZ
);
CREATE INDEX tasks_workspace ON tasks (workspace_id, id DESC);
CREATE INDEX tasks_agent ON tasks (agent_id, id DESC);

CREATE TABLE task_log (
	task_id    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	seq        BIGINT NOT NULL,
	kind       TEXT NOT NULL,
	payload    JSONB NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (task_id, seq)
);

CREATE TABLE events (
	id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	kind         TEXT NOT NULL,
	subject      TEXT NOT NULL DEFAULT '',
	actor        TEXT NOT NULL DEFAULT '',
	payload      JSONB NOT NULL DEFAULT '{}',
	created_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX events_workspace ON events (workspace_id, id);
