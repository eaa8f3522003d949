-- Trigger eval results: how often a model given an agent's catalog
-- activated a skill version (by digest) where it should (recall) and how
-- often its activations were right (precision), over runs × queries, with
-- the per-query rates as JSON.

CREATE TABLE eval_results (
	id           TEXT PRIMARY KEY,
	workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	agent_id     TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
	skill_id     TEXT NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
	skill_name   TEXT NOT NULL,
	skill_digest TEXT NOT NULL,
	model        TEXT NOT NULL,
	precision    DOUBLE PRECISION NOT NULL CHECK (precision BETWEEN 0 AND 1),
	recall       DOUBLE PRECISION NOT NULL CHECK (recall BETWEEN 0 AND 1),
	runs         INTEGER NOT NULL,
	queries      INTEGER NOT NULL,
	rates        JSONB NOT NULL,
	tokens       BIGINT NOT NULL,
	created_at   TIMESTAMPTZ NOT NULL
);

CREATE INDEX eval_results_lookup ON eval_results (workspace_id, agent_id, skill_id, skill_digest, model, created_at);
CREATE INDEX eval_results_skill ON eval_results (skill_id);
