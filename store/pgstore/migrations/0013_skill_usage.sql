-- Skill analytics: one row per finished task and attached skill, read
-- from the task's log once (analytics.Extract) by the service's indexer,
-- and summed per skill on request. tasks.analytics_seq is the log entry
-- the task's rows were read up to: a finished task whose log is past it
-- (new, or run again) is indexed (again), its rows replaced in the
-- transaction that moves the mark. Rows go with the task.

ALTER TABLE tasks ADD COLUMN analytics_seq BIGINT NOT NULL DEFAULT 0;
CREATE INDEX tasks_analytics_pending ON tasks (workspace_id, id) WHERE analytics_seq < last_seq;

CREATE TABLE skill_usage (
	task_id         TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	skill_id        TEXT NOT NULL,
	workspace_id    TEXT NOT NULL,
	agent_id        TEXT NOT NULL DEFAULT '',
	skill_name      TEXT NOT NULL,
	version         BIGINT NOT NULL,
	digest          TEXT NOT NULL,
	offer           TEXT NOT NULL,
	withheld_rule   TEXT NOT NULL DEFAULT '',
	activations     BIGINT NOT NULL DEFAULT 0,
	first_iteration BIGINT NOT NULL DEFAULT -1,
	refusals        BIGINT NOT NULL DEFAULT 0,
	refusal_reasons TEXT NOT NULL DEFAULT '{}',
	unloads         BIGINT NOT NULL DEFAULT 0,
	found           BIGINT NOT NULL DEFAULT 0,
	outcome         TEXT NOT NULL,
	created_at      TIMESTAMPTZ NOT NULL,
	finished_at     TIMESTAMPTZ,
	PRIMARY KEY (task_id, skill_id)
);
CREATE INDEX skill_usage_workspace ON skill_usage (workspace_id, created_at);
CREATE INDEX skill_usage_agent ON skill_usage (agent_id, created_at);
