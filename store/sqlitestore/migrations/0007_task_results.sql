-- What a task came to, in its row: a completed task's final answer, the
-- code of the error a failed one ended with, and the tokens its model
-- calls cost. The log holds all of it already; the row holds it so that a
-- task, and a page of tasks, is one read. A run adds each model call's
-- usage in the transaction that logs the call.
--
-- Tasks from before are filled in from their logs: llm.call.completed and
-- context.compacted events carry a call's usage, task.completed the
-- output, task.failed the code.

ALTER TABLE tasks ADD COLUMN output TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN error_code TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN completion_tokens INTEGER NOT NULL DEFAULT 0;

UPDATE tasks SET
	prompt_tokens = (SELECT COALESCE(SUM(COALESCE(json_extract(l.payload, '$.usage.prompt_tokens'), 0)), 0) FROM task_log l
		WHERE l.task_id = tasks.id AND l.kind = 'event' AND json_extract(l.payload, '$.type') IN ('llm.call.completed', 'context.compacted')),
	completion_tokens = (SELECT COALESCE(SUM(COALESCE(json_extract(l.payload, '$.usage.completion_tokens'), 0)), 0) FROM task_log l
		WHERE l.task_id = tasks.id AND l.kind = 'event' AND json_extract(l.payload, '$.type') IN ('llm.call.completed', 'context.compacted'))
WHERE last_seq > 0;

UPDATE tasks SET output = COALESCE((SELECT json_extract(l.payload, '$.output') FROM task_log l
		WHERE l.task_id = tasks.id AND l.kind = 'event' AND json_extract(l.payload, '$.type') = 'task.completed'
		ORDER BY l.seq DESC LIMIT 1), '')
WHERE status = 'completed';

UPDATE tasks SET error_code = COALESCE(NULLIF((SELECT json_extract(l.payload, '$.code') FROM task_log l
		WHERE l.task_id = tasks.id AND l.kind = 'event' AND json_extract(l.payload, '$.type') = 'task.failed'
		ORDER BY l.seq DESC LIMIT 1), ''), 'internal')
WHERE status = 'failed';

UPDATE tasks SET error_code = 'cancelled' WHERE status = 'cancelled';
