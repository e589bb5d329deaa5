-- The shared fact epoch (issue 27, plan-27 §2 #3), PostgreSQL only: one counter row that moves in
-- the same transaction as every write to a table the access fact cache loads from
-- (services/access/fact-cache.ts; the loads in access/facts-store.ts, access/lookup.ts,
-- access/target.ts, people/auth.ts, ci/credentials.ts, repos/repos.ts). Each node reads it at
-- most once per cache window (db/open.ts `external`) and drops its cached facts when it moved,
-- so a token revoked on one node is refused on every other node at its next request.
--
-- Why not in the drizzle schema: no store module reads or writes it (only these triggers and the
-- probe's one SELECT), SQLite has no counterpart (PRAGMA data_version does this job there), and
-- the triggers around it are plain SQL drizzle-kit does not model; the table stays out of
-- src/db/schema so both databases keep one table list.
--
-- Why statement-level triggers on every column but the stamps: the cached values are whole rows
-- (a repository, its org, the token's user) that answers show, so any change to them must reach
-- the other nodes, as SQLite's "any commit drops everything" does; the stamps written on every
-- use (tokens.last_used_at, runners.last_seen_at) decide nothing, are never read from the cache,
-- and would otherwise move the epoch (and empty every node's cache) every few seconds.
CREATE TABLE svc_fact_epoch (id integer PRIMARY KEY CHECK (id = 1), n bigint NOT NULL);
--> statement-breakpoint
INSERT INTO svc_fact_epoch (id, n) VALUES (1, 0);
--> statement-breakpoint
CREATE FUNCTION svc_fact_epoch_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE svc_fact_epoch SET n = n + 1 WHERE id = 1;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER svc_fact_epoch AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON users FOR EACH STATEMENT EXECUTE FUNCTION svc_fact_epoch_bump();
--> statement-breakpoint
CREATE TRIGGER svc_fact_epoch AFTER INSERT OR DELETE OR UPDATE OF id, org_id, user_id, kind, scopes, label, repo_id, secret_hash, created_at OR TRUNCATE ON tokens FOR EACH STATEMENT EXECUTE FUNCTION svc_fact_epoch_bump();
--> statement-breakpoint
CREATE TRIGGER svc_fact_epoch AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON sessions FOR EACH STATEMENT EXECUTE FUNCTION svc_fact_epoch_bump();
--> statement-breakpoint
CREATE TRIGGER svc_fact_epoch AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON orgs FOR EACH STATEMENT EXECUTE FUNCTION svc_fact_epoch_bump();
--> statement-breakpoint
CREATE TRIGGER svc_fact_epoch AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON memberships FOR EACH STATEMENT EXECUTE FUNCTION svc_fact_epoch_bump();
--> statement-breakpoint
CREATE TRIGGER svc_fact_epoch AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON teams FOR EACH STATEMENT EXECUTE FUNCTION svc_fact_epoch_bump();
--> statement-breakpoint
CREATE TRIGGER svc_fact_epoch AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON team_members FOR EACH STATEMENT EXECUTE FUNCTION svc_fact_epoch_bump();
--> statement-breakpoint
CREATE TRIGGER svc_fact_epoch AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON grants FOR EACH STATEMENT EXECUTE FUNCTION svc_fact_epoch_bump();
--> statement-breakpoint
CREATE TRIGGER svc_fact_epoch AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON repos FOR EACH STATEMENT EXECUTE FUNCTION svc_fact_epoch_bump();
--> statement-breakpoint
CREATE TRIGGER svc_fact_epoch AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON subscriptions FOR EACH STATEMENT EXECUTE FUNCTION svc_fact_epoch_bump();
--> statement-breakpoint
CREATE TRIGGER svc_fact_epoch AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON runner_registration_tokens FOR EACH STATEMENT EXECUTE FUNCTION svc_fact_epoch_bump();
--> statement-breakpoint
CREATE TRIGGER svc_fact_epoch AFTER INSERT OR DELETE OR UPDATE OF id, org_id, group_id, hosted, name, labels, os, arch, version, ephemeral, credential_hash, removed_at, created_at OR TRUNCATE ON runners FOR EACH STATEMENT EXECUTE FUNCTION svc_fact_epoch_bump();
