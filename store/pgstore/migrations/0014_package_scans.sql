-- What the package scanner found in each package, under the version of
-- its rules that scanned it. Packages are immutable, so a package is
-- scanned once per rules version: a row whose rules_version is not the
-- running scanner's is redone, and a package without a row (stored before
-- the scanner, or by a scan that failed) is scanned when first asked
-- about. The findings are a JSON array, read and written whole.

CREATE TABLE package_scans (
	package_digest TEXT PRIMARY KEY REFERENCES packages (digest) ON DELETE CASCADE,
	rules_version  INTEGER NOT NULL CHECK (rules_version >= 1),
	findings       JSONB NOT NULL,
	scanned_at     TIMESTAMPTZ NOT NULL
);

CREATE INDEX package_scans_version ON package_scans (rules_version);
