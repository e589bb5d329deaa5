// What a server asks its database, counted two ways: the server's own statement timing hooks
// (GET /metrics, every statement the node runs on SQLite or PostgreSQL) and, on PostgreSQL,
// the server's view (pg_stat_statements, pg_stat_database) over an admin connection.

/** Statements a node ran so far and the seconds they took (client side: queue + network + server). */
export interface NodeStatements {
  count: number;
  seconds: number;
}

/** Sums the statement histograms of one node's /metrics (svc_sqlite_… today, svc_db_… if renamed). */
export async function nodeStatements(url: string, metricsToken: string): Promise<NodeStatements> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`metrics: ${res.status} ${text.slice(0, 200)}`);
  let count = 0;
  let seconds = 0;
  for (const m of text.matchAll(/^svc_(?:sqlite|db)_statement_duration_seconds_(count|sum)(?:\{[^}]*\})? ([\d.e+-]+)/gm))
    if (m[1] === "count") count += Number(m[2]);
    else seconds += Number(m[2]);
  return { count, seconds };
}

/** The statements one scrape of /metrics costs itself (two scrapes back to back). */
export async function scrapeCost(url: string, metricsToken: string): Promise<number> {
  const a = await nodeStatements(url, metricsToken);
  const b = await nodeStatements(url, metricsToken);
  return Math.max(0, b.count - a.count);
}

type Sql = InstanceType<typeof Bun.SQL>;

/** PostgreSQL's own counters for one database (pg_stat_statements must be preloaded and created). */
export interface PgCounters {
  /** Statements executed (pg_stat_statements calls, utility statements such as BEGIN/COMMIT included). */
  calls: number;
  /** Of which BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE. */
  txControl: number;
  /** Server execution time of those statements, ms. */
  execMs: number;
  /** Transactions committed and rolled back (pg_stat_database). */
  xacts: number;
}

const TX_CONTROL = /^\s*(begin|commit|rollback|savepoint|release|start transaction|set transaction)/i;

/** Reads the counters of the database `db` (our own reads of them excluded by their text). */
export async function pgCounters(sql: Sql, db: string): Promise<PgCounters> {
  // pg_stat_statements counts at the end of each statement; pg_stat_database's transaction
  // counters reach shared memory up to ~10 s late from an idle backend (long windows only).
  const rows = (await sql.unsafe(
    `SELECT s.query, s.calls::float8 AS calls, s.total_exec_time::float8 AS ms FROM pg_stat_statements s
       JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 AND s.query NOT LIKE '%pg_stat_%'`,
    [db],
  )) as { query: string; calls: number; ms: number }[];
  const [x] = (await sql.unsafe(`SELECT (xact_commit + xact_rollback)::float8 AS n FROM pg_stat_database WHERE datname = $1`, [db])) as { n: number }[];
  let calls = 0;
  let txControl = 0;
  let execMs = 0;
  for (const r of rows) {
    calls += r.calls;
    execMs += r.ms;
    if (TX_CONTROL.test(r.query)) txControl += r.calls;
  }
  return { calls, txControl, execMs, xacts: x?.n ?? 0 };
}

/** The statements of `db` by calls since the last reset, most first. */
export async function pgTopStatements(sql: Sql, db: string, limit = 12): Promise<{ calls: number; mean_ms: number; query: string }[]> {
  const rows = (await sql.unsafe(
    `SELECT s.calls::float8 AS calls, s.mean_exec_time::float8 AS mean_ms, left(regexp_replace(s.query, '\\s+', ' ', 'g'), 160) AS query
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
      WHERE d.datname = $1 AND s.query NOT LIKE '%pg_stat_%' ORDER BY s.calls DESC LIMIT ${limit}`,
    [db],
  )) as { calls: number; mean_ms: number; query: string }[];
  return rows.map((r) => ({ calls: r.calls, mean_ms: Math.round(r.mean_ms * 1000) / 1000, query: r.query }));
}

export function diffPg(a: PgCounters, b: PgCounters): PgCounters {
  return { calls: b.calls - a.calls, txControl: b.txControl - a.txControl, execMs: b.execMs - a.execMs, xacts: b.xacts - a.xacts };
}
