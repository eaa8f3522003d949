-- The blobs a task stored as large tool outputs: what read_tool_output of
-- that task may open, and references that keep the blobs from being
-- collected. Rows go with the task.

CREATE TABLE task_outputs (
	task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	digest  TEXT NOT NULL,
	PRIMARY KEY (task_id, digest)
);
CREATE INDEX task_outputs_digest ON task_outputs (digest);
