-- Substring search over names and descriptions through pg_trgm GIN
-- indexes, which PostgreSQL uses for LIKE '%term%'. pg_trgm ships with
-- PostgreSQL (contrib) and is a trusted extension: a database owner may
-- create it. Where it cannot be created, the indexes are left out and
-- search reads the workspace's rows, as before; nothing else depends on it.

DO $$
DECLARE
	ext_schema text;
BEGIN
	SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
	IF ext_schema IS NULL THEN
		BEGIN
			CREATE EXTENSION pg_trgm;
		EXCEPTION WHEN OTHERS THEN
			RAISE NOTICE 'skilld: pg_trgm is not available (%); substring search will not use an index', SQLERRM;
			RETURN;
		END;
		SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
	END IF;
	EXECUTE format('CREATE INDEX skills_search ON skills USING gin (search_text %s.gin_trgm_ops)', quote_ident(ext_schema));
	EXECUTE format('CREATE INDEX catalog_items_search ON catalog_items USING gin (search_text %s.gin_trgm_ops)', quote_ident(ext_schema));
END
$$;
