-- The retry lane (issue 27): a table with no rows that a write transaction retried after a
-- serialization failure locks (LOCK TABLE … IN EXCLUSIVE MODE) as its first statement, before its
-- snapshot is taken (LOCK takes none). Retries in the whole cluster then run one at a time and
-- each sees every commit that beat it, so a hot row (the run that 40 machines complete jobs of,
-- a branch several nodes publish to) is written by queued retries instead of attempts that keep
-- failing each other until they give up with 503 database_busy. First attempts never take it.
CREATE TABLE svc_retry_lane ();
