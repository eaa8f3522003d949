-- A workspace's own caps on its tasks, set by an instance admin: how many
-- may run at once and how many may wait to begin. NULL is none of its
-- own: the server's defaults (serve --workspace-max-running,
-- --workspace-max-queued) apply; 0 is no cap at all.
--
-- Starting a task counts the workspace's queued tasks against its cap;
-- the index keeps that count to the workspace's tasks of one status,
-- however many tasks it ran before.

ALTER TABLE workspaces ADD COLUMN max_running_tasks INTEGER CHECK (max_running_tasks >= 0);
ALTER TABLE workspaces ADD COLUMN max_queued_tasks INTEGER CHECK (max_queued_tasks >= 0);

CREATE INDEX tasks_workspace_status ON tasks (workspace_id, status);
