// The LISTEN connection (services/events/pg-signals.ts over src/db/pg/client.ts): it goes to
// SVC_DATABASE_LISTEN_URL when set, its state is what svc_db_listen_connected shows (0 while it
// is down, 1 again once the driver has re-listened), and notifications from another node are
// counted by topic (svc_db_notify_received_total).
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import type { Config } from "../../src/config.ts";
import { type OpenDatabase, openDatabase } from "../../src/db/open.ts";
import { PgSignals } from "../../src/services/events/pg-signals.ts";
import { type PostgresDatabase, postgresDatabase } from "../helpers/postgres.ts";
import { eventually } from "../helpers/receiver.ts";

describe("the LISTEN connection [pg]", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const fn of cleanups.reverse()) await fn().catch(() => {});
  });

  test("uses SVC_DATABASE_LISTEN_URL; down is 0, re-listened is 1; other nodes' notifications are counted", async () => {
    const pgdb: PostgresDatabase = await postgresDatabase();
    cleanups.push(() => pgdb.drop());
    const admin = new SQL({ url: pgdb.url, database: pgdb.name, max: 1 });
    cleanups.push(() => admin.close());
    const role = `svc_listen_${crypto.randomUUID().slice(0, 8)}`;
    await admin.unsafe(`CREATE ROLE ${role} LOGIN PASSWORD 'listen-secret'`);
    cleanups.push(async () => {
      await admin.unsafe(`DROP ROLE IF EXISTS ${role}`);
    });
    const listenUrl = new URL(pgdb.url);
    listenUrl.username = role;
    listenUrl.password = "listen-secret";
    const base = { url: pgdb.url, name: pgdb.name, pool: 2 };
    const open = async (listen: { url: string; name: string } | null): Promise<OpenDatabase> => {
      const o = await openDatabase({ dataDir: "/nonexistent", database: { ...base, listen } } as unknown as Config);
      cleanups.push(async () => o.close());
      return o;
    };
    const a = await open(null);
    const b = await open({ url: listenUrl.toString(), name: pgdb.name });
    const sa = new PgSignals(a.db, a.channel!);
    const sb = new PgSignals(b.db, b.channel!);
    cleanups.push(
      () => sa.close(),
      () => sb.close(),
    );
    await Promise.all([sa.ready(), sb.ready()]);
    expect(sb.listenConnected).toBe(true);
    const sessions = async () => (await admin`SELECT pid, query FROM pg_stat_activity WHERE usename = ${role}`) as { pid: number; query: string }[];
    expect((await sessions()).map((s) => s.query)).toEqual(['LISTEN "svc"']);

    // A's notification reaches B and is counted by topic; A's own are not counted by A.
    let heard = 0;
    sb.subscribe("work", (key) => {
      if (key === "kind.x") heard++;
    });
    sa.notify("work", "kind.x");
    await eventually(async () => heard > 0, 30_000, "B hears A");
    expect(sb.notifyReceived.get("work")).toBeGreaterThanOrEqual(1);
    expect(sa.notifyReceived.get("work") ?? 0).toBe(0);

    // The LISTEN connection dropped and its role refused: 0 until it is back.
    await admin.unsafe(`ALTER ROLE ${role} NOLOGIN`);
    await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = ${role}`;
    await eventually(async () => !sb.listenConnected, 30_000, "the LISTEN connection seen down");
    await admin.unsafe(`ALTER ROLE ${role} LOGIN`);
    await eventually(async () => sb.listenConnected, 60_000, "the LISTEN connection back");
    heard = 0;
    sa.notify("work", "kind.x");
    await eventually(async () => heard > 0, 30_000, "B hears A after the reconnect");
  });
});
