// PostgreSQL drivers side by side (issue 27: pick the driver by measurement): Bun's built-in
// Bun.sql, postgres.js (`postgres`) and node-postgres (`pg`), against one real server started by
// test/helpers/postgres.ts, interleaved round by round so all three meet the same load.
//
//   NODE_PATH=/tmp/pgscratch/node_modules bun bench/pg-drivers.ts [--rounds 3] [--scale 1]
//
// postgres.js and pg are not the project's dependencies (yet): install them anywhere
// (`npm install --prefix /tmp/pgscratch postgres pg`) and point NODE_PATH there; a driver that
// does not load is reported as missing. Measures, per driver:
//   - point read `select … where id = $1` on a 10,000-row table, 1 and 16 concurrent (pool of
//     16): p50/p99 and throughput; at concurrency 1 also without prepared statements, and through
//     drizzle-orm (what store modules would write)
//   - a small transaction, 1 and 16 concurrent: BEGIN; SELECT … FOR UPDATE; UPDATE; INSERT; COMMIT
//   - reading 10,000 rows (int, text, int, timestamptz, bool, jsonb)
//   - LISTEN/NOTIFY on a dedicated connection: latency from sending NOTIFY to the callback
//   - then, once for all: the server stopped and started again: does the listener come back by
//     itself, how long until a notification arrives again, how many pool queries fail first
//   - drizzle-orm 0.45 with each (drizzle-orm/bun-sql, /postgres-js, /node-postgres):
//     transactions, FOR UPDATE SKIP LOCKED, advisory locks, and how a unique violation (23505)
//     and a serialization failure (40001) reach the caller (class, code, constraint name).
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { eq, sql as dsql } from "drizzle-orm";
import { integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { type PostgresServer, startPostgres } from "../test/helpers/postgres.ts";
import { machine } from "./lib/machine.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: { rounds: { type: "string", default: "3" }, scale: { type: "string", default: "1" } },
});
const ROUNDS = Number(opt.rounds);
const SCALE = Number(opt.scale);
const N_POINT_1 = Math.round(2000 * SCALE);
const N_POINT_16 = Math.round(8000 * SCALE);
const N_TX_1 = Math.round(600 * SCALE);
const N_TX_16 = Math.round(2400 * SCALE);
const N_BULK = Math.max(3, Math.round(10 * SCALE));
const N_NOTIFY = Math.round(300 * SCALE);
const ROWS = 10_000;
const COUNTERS = 64;
const POOL = 16;

// The part of each driver's API used here (they are loaded by name at run time).
type Rows = Record<string, unknown>[];
interface Tagged {
  (strings: TemplateStringsArray, ...values: unknown[]): Promise<Rows>;
  begin<T>(fn: (tx: Tagged) => Promise<T>): Promise<T>;
  listen(channel: string, onnotify: (payload: string) => void, onlisten?: () => void): Promise<unknown>;
  end?(): Promise<void>;
  close?(): Promise<void>;
}
interface PgQueryResult {
  rows: Rows;
}
interface PgClientLike {
  query(text: string | { name?: string; text: string; values?: unknown[] }, values?: unknown[]): Promise<PgQueryResult>;
  release(err?: Error | boolean): void;
}
interface PgPool {
  query(text: string | { name?: string; text: string; values?: unknown[] }, values?: unknown[]): Promise<PgQueryResult>;
  connect(): Promise<PgClientLike>;
  on(event: "error", fn: (err: Error) => void): void;
  end(): Promise<void>;
}
interface PgClient {
  connect(): Promise<void>;
  query(text: string, values?: unknown[]): Promise<PgQueryResult>;
  on(event: "notification", fn: (msg: { channel: string; payload?: string }) => void): void;
  on(event: "error" | "end", fn: (err?: Error) => void): void;
  end(): Promise<void>;
}
interface PgModule {
  Pool: new (config: { connectionString: string; max: number }) => PgPool;
  Client: new (config: { connectionString: string }) => PgClient;
}
type PostgresJs = (url: string, options: Record<string, unknown>) => Tagged;

// ---------------------------------------------------------------------------------------------
// Each driver behind one small interface.

interface Driver {
  name: string;
  point(id: number): Promise<unknown>;
  pointUnprepared(id: number): Promise<unknown>;
  pointDrizzle(id: number): Promise<unknown>;
  /** The same through a drizzle `.prepare(name)` statement. */
  pointDrizzlePrepared(id: number): Promise<unknown>;
  /** Bun only: `sql.unsafe(text, params)`, the call drizzle-orm/bun-sql makes. */
  pointUnsafe?(id: number): Promise<unknown>;
  tx(counter: number): Promise<void>;
  bulk(): Promise<number>;
  notify(channel: string, payload: string): Promise<void>;
  /** Starts listening on a dedicated connection; resolves once LISTEN is acknowledged. */
  listen(channel: string, onPayload: (p: string) => void, events: ListenEvents): Promise<void>;
  drizzle: DrizzleDb;
  close(): Promise<void>;
}
interface ListenEvents {
  listens: number;
  errors: string[];
}
// drizzle's PgDatabase, as far as used here (the three drivers' databases share it; their types differ, the methods used are the same).
type DrizzleDb = any;

const kv = pgTable("kv", { id: integer().primaryKey(), name: text().notNull(), value: integer().notNull() });

function drizzlePrepared(db: DrizzleDb): (id: number) => Promise<unknown> {
  const q = db
    .select()
    .from(kv)
    .where(eq(kv.id, dsql.placeholder("id")))
    .prepare("kv_point");
  return (id) => q.execute({ id });
}

const POINT = "select id, name, value from kv where id = $1";
const TX_LOCK = "select n from counters where id = $1 for update";
const TX_UPDATE = "update counters set n = n + 1 where id = $1";
const TX_INSERT = "insert into log (counter) values ($1)";

async function bunDriver(url: string): Promise<Driver> {
  const sql = new Bun.SQL({ url, max: POOL }) as unknown as Tagged & InstanceType<typeof Bun.SQL>;
  const unprepared = new Bun.SQL({ url, max: POOL, prepare: false });
  const { drizzle } = await import("drizzle-orm/bun-sql");
  const db = drizzle({ client: new Bun.SQL({ url, max: POOL }) });
  return {
    name: "Bun.sql",
    point: (id) => sql`select id, name, value from kv where id = ${id}`,
    pointUnprepared: (id) => unprepared`select id, name, value from kv where id = ${id}`,
    pointDrizzle: (id) => db.select().from(kv).where(eq(kv.id, id)),
    pointDrizzlePrepared: drizzlePrepared(db),
    pointUnsafe: (id) => sql.unsafe(POINT, [id]),
    tx: (c) =>
      sql.begin(async (tx: Tagged) => {
        await tx`select n from counters where id = ${c} for update`;
        await tx`update counters set n = n + 1 where id = ${c}`;
        await tx`insert into log (counter) values (${c})`;
      }),
    bulk: async () => (await sql`select * from big`).length,
    notify: async (channel, payload) => void (await sql`select pg_notify(${channel}, ${payload})`),
    listen: async (channel, onPayload, events) => {
      // One dedicated connection for all of this client's listens, outside the pool.
      await sql.listen(channel, onPayload, () => void events.listens++);
    },
    drizzle: db,
    close: async () => {
      await Promise.all([sql.close(), unprepared.close(), db.$client.close()]);
    },
  };
}

async function postgresJsDriver(url: string): Promise<Driver> {
  const postgres = ((await import("postgres" as string)) as { default: PostgresJs }).default;
  const onnotice = () => {};
  const sql = postgres(url, { max: POOL, onnotice });
  const unprepared = postgres(url, { max: POOL, prepare: false, onnotice });
  const { drizzle } = await import("drizzle-orm/postgres-js");
  const dbClient = postgres(url, { max: POOL, onnotice });
  const db = drizzle({ client: dbClient as never });
  return {
    name: "postgres.js",
    point: (id) => sql`select id, name, value from kv where id = ${id}`,
    pointUnprepared: (id) => unprepared`select id, name, value from kv where id = ${id}`,
    pointDrizzle: (id) => db.select().from(kv).where(eq(kv.id, id)),
    pointDrizzlePrepared: drizzlePrepared(db),
    tx: (c) =>
      sql.begin(async (tx) => {
        await tx`select n from counters where id = ${c} for update`;
        await tx`update counters set n = n + 1 where id = ${c}`;
        await tx`insert into log (counter) values (${c})`;
      }),
    bulk: async () => (await sql`select * from big`).length,
    notify: async (channel, payload) => void (await sql`select pg_notify(${channel}, ${payload})`),
    // postgres.js listens on a connection of its own, outside the pool.
    listen: async (channel, onPayload, events) => {
      await sql.listen(channel, onPayload, () => void events.listens++);
    },
    drizzle: db,
    close: async () => {
      await Promise.all([sql.end!(), unprepared.end!(), dbClient.end!()]);
    },
  };
}

async function nodePostgresDriver(url: string): Promise<Driver> {
  const pg = ((await import("pg" as string)) as { default: PgModule }).default;
  const pool = new pg.Pool({ connectionString: url, max: POOL });
  // Without this, an idle pooled connection that the server ends crashes the process.
  const poolErrors: string[] = [];
  pool.on("error", (err) => void poolErrors.push(err.message));
  const { drizzle } = await import("drizzle-orm/node-postgres");
  const dbPool = new pg.Pool({ connectionString: url, max: POOL });
  dbPool.on("error", () => {});
  const db = drizzle({ client: dbPool as never });
  const listenClients: PgClient[] = [];
  return {
    name: "node-postgres",
    // A query with a name is a prepared statement on each connection; without, it is not.
    point: (id) => pool.query({ name: "point", text: POINT, values: [id] }),
    pointUnprepared: (id) => pool.query(POINT, [id]),
    pointDrizzle: (id) => db.select().from(kv).where(eq(kv.id, id)),
    pointDrizzlePrepared: drizzlePrepared(db),
    tx: async (c) => {
      const client = await pool.connect();
      try {
        await client.query("begin");
        await client.query({ name: "tx_lock", text: TX_LOCK, values: [c] });
        await client.query({ name: "tx_update", text: TX_UPDATE, values: [c] });
        await client.query({ name: "tx_insert", text: TX_INSERT, values: [c] });
        await client.query("commit");
        client.release();
      } catch (err) {
        await client.query("rollback").catch(() => {});
        client.release(err as Error);
        throw err;
      }
    },
    bulk: async () => (await pool.query("select * from big")).rows.length,
    notify: async (channel, payload) => void (await pool.query("select pg_notify($1, $2)", [channel, payload])),
    // pg has no listen helper: a Client of its own, LISTEN, 'notification' events. It does not
    // reconnect: after an error or end the application must make a new client and LISTEN again.
    listen: async (channel, onPayload, events) => {
      const listenClient = new pg.Client({ connectionString: url });
      listenClients.push(listenClient);
      listenClient.on("error", (err) => void events.errors.push(err?.message ?? "error"));
      listenClient.on("end", () => void events.errors.push("end"));
      listenClient.on("notification", (msg) => {
        if (msg.channel === channel) onPayload(msg.payload ?? "");
      });
      await listenClient.connect();
      await listenClient.query(`listen ${channel}`);
      events.listens++;
    },
    drizzle: db,
    close: async () => {
      await Promise.all([pool.end(), dbPool.end(), ...listenClients.map((c) => c.end().catch(() => {}))]);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Measuring.

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
interface Series {
  p50_ms: number;
  p99_ms: number;
  per_s: number;
}
async function measure(n: number, concurrency: number, op: (i: number) => Promise<unknown>): Promise<Series> {
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) {
        const t = performance.now();
        await op(i);
        lat.push(performance.now() - t);
      }
    }),
  );
  const wall = performance.now() - t0;
  lat.sort((a, b) => a - b);
  return { p50_ms: round(percentile(lat, 50), 3), p99_ms: round(percentile(lat, 99), 3), per_s: Math.round((n / wall) * 1000) };
}
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const randomId = () => 1 + Math.floor(Math.random() * ROWS);
const randomCounter = () => 1 + Math.floor(Math.random() * COUNTERS);

async function notifyLatency(d: Driver, channel: string, n: number): Promise<Series> {
  let waiting: { payload: string; resolve: () => void } | null = null;
  const events: ListenEvents = { listens: 0, errors: [] };
  await d.listen(
    channel,
    (payload) => {
      if (waiting && payload === waiting.payload) waiting.resolve();
    },
    events,
  );
  return measure(n, 1, async (i) => {
    const arrived = Promise.withResolvers<void>();
    waiting = { payload: `n${i}`, resolve: arrived.resolve };
    await Promise.all([d.notify(channel, `n${i}`), arrived.promise]);
  });
}

// ---------------------------------------------------------------------------------------------
// Setup.

async function setup(url: string): Promise<void> {
  const sql = new Bun.SQL({ url, max: 1 });
  await sql.unsafe(`
    create table kv (id int primary key, name text not null, value int not null);
    insert into kv select g, 'name-' || g, g * 7 from generate_series(1, ${ROWS}) g;
    create table counters (id int primary key, n bigint not null);
    insert into counters select g, 0 from generate_series(1, ${COUNTERS}) g;
    create table log (id bigserial primary key, counter int not null, at timestamptz not null default now());
    create table big (id int primary key, name text not null, value int not null, created timestamptz not null,
                      flag boolean not null, meta jsonb not null);
    insert into big select g, 'row number ' || g, g, now() - g * interval '1 minute', g % 2 = 0,
                           jsonb_build_object('k', g, 'tags', jsonb_build_array('a', 'b')) from generate_series(1, ${ROWS}) g;
    create table d_accounts (id int primary key, name text not null);
    create unique index d_accounts_name_lower on d_accounts (lower(name));
    create table d_jobs (id int primary key, state text not null);
    create table d_deferred (k int, constraint d_deferred_k_uq unique (k) deferrable initially deferred);
    analyze;
  `);
  await sql.close();
}

// ---------------------------------------------------------------------------------------------
// drizzle-orm checks.

const dAccounts = pgTable("d_accounts", { id: integer().primaryKey(), name: text().notNull() }, (t) => [
  uniqueIndex("d_accounts_name_lower").on(dsql`lower(${t.name})`),
]);
const dJobs = pgTable("d_jobs", { id: integer().primaryKey(), state: text().notNull() });

// Where an error's facts are, whatever wraps it.
function describeError(err: unknown): Record<string, unknown> {
  const e = err as Record<string, unknown> & Error;
  const c = (e?.cause ?? null) as (Record<string, unknown> & Error) | null;
  const pick = (o: Record<string, unknown> | null) =>
    o && {
      class: o.constructor?.name,
      code: o.code,
      errno: o.errno,
      constraint: o.constraint ?? o.constraint_name,
      table: o.table ?? o.table_name,
      detail: o.detail,
    };
  return { message: String(e?.message ?? e).split("\n")[0], ...pick(e), cause: pick(c) };
}

async function drizzleChecks(d: Driver, url: string): Promise<Record<string, unknown>> {
  const db = d.drizzle;
  const out: Record<string, unknown> = {};
  const admin = new Bun.SQL({ url, max: 1 });
  await admin`truncate d_accounts, d_jobs, d_deferred`;
  await admin`insert into d_jobs select g, 'queued' from generate_series(1, 4) g`;

  // Transactions: commit, rollback on throw, explicit tx.rollback().
  await db.transaction(async (tx: DrizzleDb) => {
    await tx.insert(dAccounts).values({ id: 1, name: "Alice" });
  });
  const thrown = await db
    .transaction(async (tx: DrizzleDb) => {
      await tx.insert(dAccounts).values({ id: 2, name: "Bob" });
      throw new Error("boom");
    })
    .catch((e: Error) => e.message);
  const rolled = await db
    .transaction(async (tx: DrizzleDb) => {
      await tx.insert(dAccounts).values({ id: 3, name: "Carol" });
      tx.rollback();
    })
    .catch((e: Error) => e.constructor.name);
  const names = (await db.select().from(dAccounts)).map((r: { name: string }) => r.name);
  out.transactions = { committed_then: names, throw_rejects_with: thrown, rollback_rejects_with: rolled };

  // FOR UPDATE SKIP LOCKED: A holds the first queued job; B, at the same time, gets the next.
  const claimQuery = (tx: DrizzleDb) => tx.select().from(dJobs).where(eq(dJobs.state, "queued")).orderBy(dJobs.id).limit(1).for("update", { skipLocked: true });
  const aHas = Promise.withResolvers<void>();
  const bDone = Promise.withResolvers<void>();
  const claims: number[] = [];
  await Promise.all([
    db.transaction(async (tx: DrizzleDb) => {
      const [job] = await claimQuery(tx);
      claims[0] = job?.id;
      aHas.resolve();
      await bDone.promise;
    }),
    (async () => {
      await aHas.promise;
      await db.transaction(async (tx: DrizzleDb) => {
        const [job] = await claimQuery(tx);
        claims[1] = job?.id;
      });
      bDone.resolve();
    })(),
  ]);
  out.for_update_skip_locked = { sql: claimQuery(db).toSQL().sql, a_got: claims[0], b_got: claims[1] };

  // Transaction-scoped advisory lock: B's try fails while A holds it; C succeeds after.
  const tryLock = async (tx: DrizzleDb) => {
    const res = await tx.execute(dsql`select pg_try_advisory_xact_lock(${42}) as ok`);
    const rows = Array.isArray(res) ? res : res.rows;
    return { ok: rows[0].ok as boolean, shape: Array.isArray(res) ? "array of rows" : "{ rows }" };
  };
  const aLocked = Promise.withResolvers<void>();
  const bTried = Promise.withResolvers<void>();
  const locks: { ok: boolean; shape: string }[] = [];
  await Promise.all([
    db.transaction(async (tx: DrizzleDb) => {
      locks[0] = await tryLock(tx);
      aLocked.resolve();
      await bTried.promise;
    }),
    (async () => {
      await aLocked.promise;
      await db.transaction(async (tx: DrizzleDb) => void (locks[1] = await tryLock(tx)));
      bTried.resolve();
    })(),
  ]);
  locks[2] = await db.transaction(tryLock);
  out.advisory_xact_lock = { a: locks[0]?.ok, b_while_a_holds: locks[1]?.ok, c_after: locks[2]?.ok, execute_returns: locks[0]?.shape };

  // Unique violation (case-folded unique index), outside and inside a transaction.
  out.unique_violation = await db
    .insert(dAccounts)
    .values({ id: 9, name: "ALICE" })
    .then(() => "no error")
    .catch(describeError);
  out.unique_violation_in_tx = await db
    .transaction(async (tx: DrizzleDb) => {
      await tx.insert(dAccounts).values({ id: 9, name: "alice" });
    })
    .then(() => "no error")
    .catch(describeError);

  // Serialization failure: write skew under SERIALIZABLE, both read before either writes.
  const bothRead = { n: 0, all: Promise.withResolvers<void>() };
  const skew = async (id: number) =>
    db
      .transaction(
        async (tx: DrizzleDb) => {
          await tx.select().from(dJobs).where(eq(dJobs.state, "done"));
          if (++bothRead.n === 2) bothRead.all.resolve();
          await bothRead.all.promise;
          await tx.insert(dJobs).values({ id, state: "done" });
        },
        { isolationLevel: "serializable" },
      )
      .then(() => "committed")
      .catch(describeError);
  out.serialization_failure = await Promise.all([skew(101), skew(102)]);

  // An error raised by COMMIT itself (a deferred unique constraint): the drivers whose begin()
  // sends COMMIT (Bun.sql, postgres.js) hand it over unwrapped, unlike errors of statements.
  out.commit_time_unique_violation = await db
    .transaction(async (tx: DrizzleDb) => {
      await tx.execute(dsql`insert into d_deferred (k) values (1), (1)`);
    })
    .then(() => "no error")
    .catch(describeError);

  // What values come back as through db.execute (raw SQL, as store modules write it today).
  const res = await db.execute(
    dsql`select count(*) as count, 1::int4 as int4, 9007199254740993::int8 as int8, now() as timestamptz,
              true as bool, '{"a":1}'::jsonb as jsonb, '\\x0102'::bytea as bytea, 1.5::numeric as numeric`,
  );
  const row = (Array.isArray(res) ? res[0] : res.rows[0]) as Record<string, unknown>;
  out.execute_value_types = Object.fromEntries(
    Object.entries(row).map(([k, v]) => [k, `${v?.constructor?.name ?? typeof v} ${JSON.stringify(typeof v === "bigint" ? String(v) : v)}`]),
  );
  // And through the query builder with a typed count.
  const [counted] = await db.select({ n: dsql<number>`count(*)` }).from(dAccounts);
  out.builder_count_type = typeof counted.n;
  await admin.close();
  return out;
}

// ---------------------------------------------------------------------------------------------
// Restart: all listeners at once, one stop and start.

async function restartCheck(server: PostgresServer, drivers: Driver[]): Promise<Record<string, unknown>> {
  const state = drivers.map((d) => ({
    d,
    events: { listens: 0, errors: [] } as ListenEvents,
    received: new Set<string>(),
    waiters: new Map<string, () => void>(),
  }));
  for (const s of state) {
    await s.d.listen(
      "restart",
      (p) => {
        s.received.add(p);
        s.waiters.get(p)?.();
      },
      s.events,
    );
  }
  await server.stopServer();
  // A query while the server is down: does it fail, how soon, with what?
  const whileDown = await Promise.all(
    drivers.map(async (d) => {
      const t = performance.now();
      const outcome = await Promise.race([
        d.point(1).then(
          () => ({ ok: true }),
          (err) => ({ rejected: describeError(err) }),
        ),
        Bun.sleep(10_000).then(() => ({ hung: "no answer within 10 s" })),
      ]);
      return [d.name, { ...outcome, after_ms: Math.round(performance.now() - t) }] as const;
    }),
  );
  await server.startServer();
  const up = performance.now();
  const results = await Promise.all(
    state.map(async (s) => {
      let failedQueries = 0;
      let firstQueryOkMs: number | null = null;
      for (let i = 0; performance.now() - up < 30_000; i++) {
        const payload = `r${i}`;
        const arrived = new Promise<boolean>((resolve) => {
          s.waiters.set(payload, () => resolve(true));
          setTimeout(() => resolve(false), 250);
        });
        try {
          await s.d.notify("restart", payload);
          firstQueryOkMs ??= performance.now() - up;
        } catch {
          failedQueries++;
          continue;
        }
        if (await arrived) {
          return {
            driver: s.d.name,
            listener_back: true,
            notification_after_ms: Math.round(performance.now() - up),
            pool_queries_failed_first: failedQueries,
            first_pool_query_ok_after_ms: Math.round(firstQueryOkMs),
            listen_acknowledged_times: s.events.listens,
            listener_errors: s.events.errors,
          };
        }
      }
      return {
        driver: s.d.name,
        listener_back: false,
        pool_queries_failed_first: failedQueries,
        first_pool_query_ok_after_ms: firstQueryOkMs === null ? null : Math.round(firstQueryOkMs),
        listen_acknowledged_times: s.events.listens,
        listener_errors: s.events.errors,
      };
    }),
  );
  return { query_while_down: Object.fromEntries(whileDown), after_restart: Object.fromEntries(results.map((r) => [r.driver, r])) };
}

// ---------------------------------------------------------------------------------------------

const load0 = loadavg();
const server = await startPostgres();
const db = await server.createDatabase();
await setup(db.url);

const factories: [string, (url: string) => Promise<Driver>][] = [
  ["Bun.sql", bunDriver],
  ["postgres.js", postgresJsDriver],
  ["node-postgres", nodePostgresDriver],
];
const drivers: Driver[] = [];
const missing: Record<string, string> = {};
for (const [name, make] of factories) {
  try {
    drivers.push(await make(db.url));
  } catch (err) {
    missing[name] = String((err as Error).message).split("\n")[0]!;
  }
}

type Row = Record<string, Series[]>;
const figures = new Map<string, Row>();
const bulkMs = new Map<string, number[]>();
for (const d of drivers) {
  figures.set(d.name, {});
  bulkMs.set(d.name, []);
  // Warm-up: connections open, statements prepared, JIT warm.
  await measure(500, POOL, () => d.point(randomId()));
  await measure(200, POOL, () => d.pointDrizzle(randomId()));
  await measure(200, POOL, () => d.pointDrizzlePrepared(randomId()));
  if (d.pointUnsafe) await measure(200, POOL, () => d.pointUnsafe!(randomId()));
  await measure(100, POOL, () => d.tx(randomCounter()));
  await d.bulk();
}
const add = (d: Driver, key: string, s: Series) => {
  const row = figures.get(d.name)!;
  (row[key] ??= []).push(s);
};

for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? drivers : [...drivers].reverse();
  for (const d of order) {
    add(d, "point_c1", await measure(N_POINT_1, 1, () => d.point(randomId())));
    add(d, "point_c1_unprepared", await measure(N_POINT_1, 1, () => d.pointUnprepared(randomId())));
    add(d, "point_c1_drizzle", await measure(N_POINT_1, 1, () => d.pointDrizzle(randomId())));
    add(d, "point_c1_drizzle_prepared", await measure(N_POINT_1, 1, () => d.pointDrizzlePrepared(randomId())));
    if (d.pointUnsafe) add(d, "point_c1_unsafe", await measure(N_POINT_1, 1, () => d.pointUnsafe!(randomId())));
    add(d, "point_c16", await measure(N_POINT_16, POOL, () => d.point(randomId())));
    add(d, "tx_c1", await measure(N_TX_1, 1, () => d.tx(randomCounter())));
    add(d, "tx_c16", await measure(N_TX_16, POOL, () => d.tx(randomCounter())));
    for (let i = 0; i < N_BULK; i++) {
      const t = performance.now();
      const n = await d.bulk();
      if (n !== ROWS) throw new Error(`${d.name} read ${n} rows`);
      bulkMs.get(d.name)!.push(performance.now() - t);
    }
    add(d, "notify", await notifyLatency(d, `bench_${r}_${d.name.replace(/\W/g, "")}`, N_NOTIFY));
  }
}

const drizzle: Record<string, unknown> = {};
for (const d of drivers) drizzle[d.name] = await drizzleChecks(d, db.url).catch((err) => ({ failed: describeError(err) }));
const restart = await restartCheck(server, drivers);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const summary = Object.fromEntries(
  [...figures].map(([name, row]) => [
    name,
    {
      ...Object.fromEntries(
        Object.entries(row).map(([k, series]) => [
          k,
          {
            p50_ms: round(median(series.map((s) => s.p50_ms)), 3),
            p99_ms: round(median(series.map((s) => s.p99_ms)), 3),
            per_s: median(series.map((s) => s.per_s)),
            rounds: series.map((s) => `${s.p50_ms}/${s.p99_ms}ms ${s.per_s}/s`),
          },
        ]),
      ),
      read_10000_rows_ms: { median: round(median(bulkMs.get(name)!)), all: bulkMs.get(name)!.map((x) => Math.round(x)) },
    },
  ]),
);

console.log(
  JSON.stringify(
    {
      machine: machine(),
      postgres: server.version,
      load_before: load0.map((x) => round(x, 2)),
      load_after: loadavg().map((x) => round(x, 2)),
      rounds: ROUNDS,
      counts: { N_POINT_1, N_POINT_16, N_TX_1, N_TX_16, N_BULK, N_NOTIFY },
      missing,
      summary,
      drizzle,
      restart,
    },
    null,
    2,
  ),
);
for (const d of drivers) await d.close().catch(() => {});
await server.stop();
process.exit(0);
