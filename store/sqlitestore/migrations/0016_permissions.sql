-- What an admin approved of what a skill's package asks for in its
-- skilld.yaml (network hosts, secrets, tools), pinned to the package
-- digest: a later version is approved by this row only while it asks for
-- no more than this. approved is the approved request as JSON.
--
-- And the workspace's secrets, encrypted by the server (AES-256-GCM)
-- before they reach the store: ciphertext is nonce || sealed value, and
-- key_id names the operator key that sealed it, so values sealed under a
-- retired key can be found and sealed again.

CREATE TABLE permission_approvals (
	workspace_id   TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	skill_id       TEXT NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
	package_digest TEXT NOT NULL,
	approved       TEXT NOT NULL,
	approved_by    TEXT NOT NULL,
	approved_at    DATETIME NOT NULL,
	PRIMARY KEY (skill_id, package_digest)
);

CREATE TABLE secrets (
	workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name         TEXT NOT NULL,
	key_id       TEXT NOT NULL,
	ciphertext   BLOB NOT NULL,
	updated_by   TEXT NOT NULL,
	updated_at   DATETIME NOT NULL,
	PRIMARY KEY (workspace_id, name)
);
