-- The packages a task's snapshot names, pinned while the task is not
-- finished: deleting a skill must not take a package from under a queued
-- or running task. Rows go when the task ends (or with the task).

CREATE TABLE task_packages (
	task_id        TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	package_digest TEXT NOT NULL REFERENCES packages (digest),
	PRIMARY KEY (task_id, package_digest)
);
CREATE INDEX task_packages_digest ON task_packages (package_digest);

-- Tasks still unfinished when this migration runs keep their packages too.
INSERT INTO task_packages (task_id, package_digest)
	SELECT DISTINCT t.id, s.value->>'digest'
	FROM tasks t, jsonb_array_elements(COALESCE(t.config->'skills', '[]'::jsonb)) s
	WHERE t.status IN ('queued', 'running', 'waiting_for_approval')
	  AND s.value->>'digest' IN (SELECT digest FROM packages)
	ON CONFLICT DO NOTHING;
