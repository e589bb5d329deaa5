// Several svc nodes as one service (issue 27, DECISIONS §5 "Several nodes"): one private
// PostgreSQL server (its own, so a test can stop and start it), one s3rver bucket, and N
// `svc serve` processes started from source over them, each with its own data dir (temp files
// only) and port 0. A test talks to each node at `node(i).url`, as a load balancer would.
//
//   await using cluster = await startCluster({ nodes: 3 });
//   const [a, b, c] = cluster.nodes;
//   await cluster.kill(1, "SIGKILL");   // the node dies mid-whatever
//   await cluster.restart(1);           // same data dir, a new port
//   await cluster.pg.stopServer();       // the database goes away (and startServer() brings it back)
//   await cluster.sql`SELECT count(*) FROM jobs`;  // the shared database, as an operator sees it
//
// The suite is test/cluster/*.test.ts, one cluster per file (a start costs seconds), its cases
// sharing it with their own orgs and repositories. `nodeEnv(i)` gives one node settings of its
// own (e.g. its object store behind a fault proxy).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PostgresDatabase, type PostgresServer, startPostgres } from "./postgres.ts";
import { type S3rverHandle, startS3rver } from "./s3rver.ts";
import { type RunningServer, startServer } from "./server.ts";
import { SQL } from "bun";

export interface Cluster {
  /** The private PostgreSQL server (stopServer/startServer for database-down cases). */
  pg: PostgresServer;
  /** The database every node uses (empty at start; the first node migrates it). */
  database: PostgresDatabase;
  s3: S3rverHandle;
  /** The settings every node shares (database, object store), without the per-node data dir. */
  env: Record<string, string>;
  /** A client of the shared database for the test's own queries (closed by stop()). */
  sql: SQL;
  /** The running nodes, by index (a restarted node replaces its entry). */
  nodes: RunningServer[];
  node(i: number): RunningServer;
  /** Sends `signal` (default SIGKILL) to node `i` and waits for it to exit; answers its exit code. */
  kill(i: number, signal?: NodeJS.Signals): Promise<number>;
  /** Starts node `i` again on its data dir (after kill); answers the new server (a new port). */
  restart(i: number): Promise<RunningServer>;
  /** Stops every node (SIGTERM), the object store and the database server; removes the data dirs. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts PostgreSQL, s3rver and `nodes` svc servers over them (default 3). `env` adds settings
 * to every node. The first node starts alone (it applies the migrations), the others together.
 */
export async function startCluster(
  opts: {
    nodes?: number;
    env?: Record<string, string>;
    /** Node `i`'s own settings over the shared ones (called once per node, before it first starts). */
    nodeEnv?: (i: number, s3: S3rverHandle) => Record<string, string> | Promise<Record<string, string>>;
  } = {},
): Promise<Cluster> {
  const count = opts.nodes ?? 3;
  const root = mkdtempSync(join(tmpdir(), "svc-cluster-"));
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const [pg, s3] = await Promise.all([startPostgres(), startS3rver()]);
    cleanups.push(
      () => pg.stop(),
      () => s3.stop(),
    );
    const database = await pg.createDatabase();
    const env: Record<string, string> = {
      SVC_DATABASE_URL: database.url,
      SVC_STORAGE: "s3",
      SVC_S3_ENDPOINT: s3.endpoint,
      SVC_S3_BUCKET: s3.bucket,
      SVC_S3_ACCESS_KEY: s3.accessKey,
      SVC_S3_SECRET_KEY: s3.secretKey,
      ...opts.env,
    };
    const sql = new SQL({ url: database.url, max: 2 });
    cleanups.push(() => sql.close());
    const dataDirs = Array.from({ length: count }, (_, i) => join(root, `node-${i}`));
    const own: Record<string, string>[] = [];
    for (let i = 0; i < count; i++) own.push((await opts.nodeEnv?.(i, s3)) ?? {});
    const envOf = (i: number) => ({ ...env, ...own[i] });
    const nodes: RunningServer[] = [];
    cleanups.push(async () => {
      await Promise.all(nodes.map((n) => n.stop()));
    });
    // The first node alone (it applies the migrations), then the others side by side.
    nodes.push(await startServer({ env: envOf(0), dataDir: dataDirs[0]! }));
    const rest = await Promise.allSettled(dataDirs.slice(1).map((dataDir, k) => startServer({ env: envOf(k + 1), dataDir })));
    for (const r of rest) if (r.status === "fulfilled") nodes.push(r.value);
    for (const r of rest) if (r.status === "rejected") throw r.reason;
    const check = (i: number) => {
      if (!Number.isInteger(i) || i < 0 || i >= count) throw new Error(`no node ${i} in a cluster of ${count}`);
    };
    const cluster: Cluster = {
      pg,
      database,
      s3,
      env,
      sql,
      nodes,
      node(i) {
        check(i);
        return nodes[i]!;
      },
      async kill(i, signal = "SIGKILL") {
        check(i);
        const proc = nodes[i]!.proc;
        if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
        return await proc.exited;
      },
      async restart(i) {
        check(i);
        const old = nodes[i]!.proc;
        if (old.exitCode === null && old.signalCode === null) throw new Error(`node ${i} is still running: kill it first`);
        nodes[i] = await startServer({ env: envOf(i), dataDir: dataDirs[i]! });
        return nodes[i]!;
      },
      stop: cleanup,
      [Symbol.asyncDispose]: cleanup,
    };
    return cluster;
  } catch (error) {
    await cleanup();
    throw error;
  }
}
