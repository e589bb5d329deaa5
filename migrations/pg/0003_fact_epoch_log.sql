-- The shared fact epoch without a shared row (issue 27; 0001_fact_epoch.sql is the first form).
-- 0001's triggers updated one counter row, so every write to a fact table, on every node, queued
-- on that row from its trigger to its COMMIT, and under SERIALIZABLE concurrent ones failed each
-- other ("concurrent update": 40 runner registration tokens at once answered four 503s).
-- Now a trigger only appends a row to svc_fact_epoch_log: an INSERT reads nothing, and no
-- serializable transaction reads the log (the probe reads it at READ COMMITTED), so fact writes
-- never meet there. The epoch is svc_fact_epoch.n + count(svc_fact_epoch_log), read in one
-- statement; it moves exactly when such a write commits, as before. A node folds the log into n
-- once it is long (src/db/open.ts: one statement, DELETE … RETURNING then n + the rows it
-- deleted), which leaves the sum unchanged for every reader.
--
-- Additive: 0001's table and row stay (they are the base); the trigger function is replaced.
CREATE TABLE svc_fact_epoch_log ();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION svc_fact_epoch_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO svc_fact_epoch_log DEFAULT VALUES;
  RETURN NULL;
END
$$;
