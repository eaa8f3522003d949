-- What each task keeps in storage, in its row: the bytes of its log
-- entries and of the large tool outputs it stored (each output counted
-- once per task, by the size recorded with it). The append and the output
-- record add to them in their own transactions, so a workspace's usage is
-- a sum over its task rows, never a scan of logs or blobs.
--
-- A workspace may have its own storage quota, set by an instance admin:
-- NULL is none of its own (serve --workspace-storage-quota applies), 0 is
-- no quota at all.
--
-- Logs from before are counted here; outputs from before are not (their
-- sizes were not recorded) and count 0.

ALTER TABLE tasks ADD COLUMN log_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN output_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE task_outputs ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workspaces ADD COLUMN storage_quota INTEGER CHECK (storage_quota >= 0);

UPDATE tasks SET log_bytes = (SELECT COALESCE(SUM(length(CAST(l.payload AS BLOB))), 0) FROM task_log l WHERE l.task_id = tasks.id);
