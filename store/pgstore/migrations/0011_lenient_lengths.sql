-- Whether a workspace stores skills whose description or compatibility is
-- over the specification's length limit, with a warning, instead of
-- refusing them (the clients people use load such skills; the catalog an
-- agent sees shortens them to its budget anyway). Off unless an instance
-- admin turns it on.

ALTER TABLE workspaces ADD COLUMN lenient_lengths BOOLEAN NOT NULL DEFAULT FALSE;
