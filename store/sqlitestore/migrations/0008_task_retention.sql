-- Task retention: how long a workspace keeps its finished tasks, when it
-- overrides the server's --task-retention (a Go duration; '' means the
-- server's, '0s' forever), and an index that finds a workspace's tasks
-- that finished before a time, oldest first, without reading the others.
-- Unfinished tasks have no finished_at and stay out of the index.

ALTER TABLE workspaces ADD COLUMN task_retention TEXT NOT NULL DEFAULT '';
CREATE INDEX tasks_finished ON tasks (workspace_id, finished_at) WHERE finished_at IS NOT NULL;
