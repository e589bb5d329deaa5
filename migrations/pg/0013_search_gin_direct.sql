-- Hand-written (drizzle's schema does not hold the search index; see 0000_baseline). The search
-- index writes straight into its GIN tree instead of a pending list. With fastupdate on (the
-- default) every new or changed repository row (a push moves active_at, an indexed column, so
-- every push is a new index entry) is appended to an unsorted pending list that each search reads
-- through in full, until VACUUM, autoanalyze or the 4 MB gin_pending_list_limit merges it: 10,000
-- entries cost a search about 3 ms per tier (bench/README.md §50). Searches far outnumber
-- repository writes, so the write pays instead (a GIN insert of the row's few words).
ALTER INDEX "repos_search_tsv_idx" SET (fastupdate = off);--> statement-breakpoint
-- Turning fastupdate off keeps what is already pending: merge it now.
SELECT gin_clean_pending_list('repos_search_tsv_idx');
