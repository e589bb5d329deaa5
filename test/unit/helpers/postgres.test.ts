// The PostgreSQL test helper: a real server started by the test, queried, stopped and started
// again (the "PostgreSQL stopped → back" case of the multi-node suite), databases on the shared
// server, and nothing left behind when the process that started a server is SIGKILLed.
import { describe, expect, test } from "bun:test";
import { existsSync, watch } from "node:fs";
import { basename, dirname } from "node:path";
import { postgresDatabase, startPostgres } from "../../helpers/postgres.ts";

describe("startPostgres", () => {
  test("starts a server that answers, stops it and starts it again on the same port and data", async () => {
    await using pg = await startPostgres();
    expect(pg.url).toStartWith(`postgres://postgres:svc-test@127.0.0.1:${pg.port}/`);
    const sql = new Bun.SQL(pg.url, { max: 1 });
    try {
      expect(await sql`select 1 as one`).toEqual([{ one: 1 }]);
      await sql`create table kept (v text)`;
      await sql`insert into kept values ('before the restart')`;

      await pg.stopServer();
      expect(pg.running()).toBe(false);
      const refused = await sql`select 1`.then(
        () => null,
        (err: Error & { code?: string }) => err,
      );
      expect(refused?.code).toMatch(/^ERR_POSTGRES_(CONNECTION_REFUSED|CONNECTION_CLOSED)$/);

      await pg.startServer();
      expect(pg.running()).toBe(true);
      // The same client reconnects; the data survived.
      expect(await sql`select v from kept`).toEqual([{ v: "before the restart" }]);
    } finally {
      await sql.close();
    }
    await pg.stop();
    expect(existsSync(pg.dir)).toBe(false);
  });

  test("postgresDatabase: separate databases on one shared server, dropped on dispose", async () => {
    await using a = await postgresDatabase();
    await using b = await postgresDatabase();
    expect(a.server).toBe(b.server);
    expect(a.name).not.toBe(b.name);
    const sa = new Bun.SQL(a.url, { max: 1 });
    const sb = new Bun.SQL(b.url, { max: 1 });
    try {
      await sa`create table t (v int)`;
      const [{ n }] = await sb`select count(*)::int as n from pg_tables where tablename = 't'`;
      expect(n).toBe(0);
    } finally {
      await Promise.all([sa.close(), sb.close()]);
    }
    await a.drop();
    const admin = new Bun.SQL(a.server.url, { max: 1 });
    try {
      expect(await admin`select datname from pg_database where datname = ${a.name}`).toEqual([]);
    } finally {
      await admin.close();
    }
  });

  test("a SIGKILLed owner leaves no server and no directory behind", async () => {
    const helper = new URL("../../helpers/postgres.ts", import.meta.url).pathname;
    const child = Bun.spawn(
      [
        process.execPath,
        "-e",
        `const { startPostgres } = await import(${JSON.stringify(helper)});
const pg = await startPostgres();
console.log(JSON.stringify({ dir: pg.dir, port: pg.port }));
setInterval(() => {}, 1 << 30);`,
      ],
      { stdout: "pipe", stderr: "inherit" },
    );
    const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`child exited (${await child.exited}) before starting a server`);
      text += new TextDecoder().decode(value);
    }
    const { dir, port } = JSON.parse(text.slice(0, text.indexOf("\n"))) as { dir: string; port: number };
    expect(existsSync(dir)).toBe(true);

    // Wait for the directory's removal as an event (a watch on its parent), not by polling.
    const gone = Promise.withResolvers<void>();
    const watcher = watch(dirname(dir), (_event, name) => {
      if (name === basename(dir) && !existsSync(dir)) gone.resolve();
    });
    try {
      child.kill("SIGKILL");
      await child.exited;
      if (!existsSync(dir)) gone.resolve();
      await gone.promise;
    } finally {
      watcher.close();
    }
    // The janitor removes the directory only after the postmaster is gone.
    const connected = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }).then(
      (s) => (s.end(), true),
      () => false,
    );
    expect(connected).toBe(false);
  });
});
