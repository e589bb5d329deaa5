-- Hand-written (drizzle's schema does not hold the search indexes; see 0000_baseline).
-- 1. The search index writes straight into its GIN tree instead of a pending list. With fastupdate
-- on (the default) every new or changed repository row (a push moves active_at, an indexed column,
-- so every push is a new index entry) is appended to an unsorted pending list that each search
-- reads through in full, until VACUUM, autoanalyze or the 4 MB gin_pending_list_limit merges it:
-- 10,000 entries cost a search about 3 ms per tier (bench/README.md §50). Searches far outnumber
-- repository writes, so the write pays instead (a GIN insert of the row's few words).
ALTER INDEX "repos_search_tsv_idx" SET (fastupdate = off);--> statement-breakpoint
-- Turning fastupdate off keeps what is already pending: merge it now.
SELECT gin_clean_pending_list('repos_search_tsv_idx');--> statement-breakpoint
-- 2. The words of the name alone (the search's name-word tier, `to_tsvector('simple', r.name)` in
-- services/discovery/store.ts). The index gives ANALYZE the expression's statistics: without them
-- the planner guesses that few names match a common word and reads every repository matching it
-- by name or description, then sorts (7 ms for one word of 10,000 repositories), where walking the
-- repositories in the tier's order stops after a page (1.4 ms); a rare word reads this index.
CREATE INDEX "repos_name_tsv_idx" ON "repos" USING gin (to_tsvector('simple', "name")) WITH (fastupdate = off);--> statement-breakpoint
-- 3. The folded name in byte order, what the name tiers compare and sort by (`lower(r.name) COLLATE
-- "C"` in services/discovery/store.ts): under a libc locale such as en_US.UTF-8, the default of most
-- installed clusters, U+FFFF sorts before the letters, so the prefix range [q, q || U+FFFF) held
-- only the exact name, and punctuation is skipped at first, so names sorted unlike SQLite's. The
-- ranges and the order need an index of the same collation.
CREATE INDEX "repos_name_c_idx" ON "repos" USING btree ((lower("name") COLLATE "C"));--> statement-breakpoint
ANALYZE "repos";
