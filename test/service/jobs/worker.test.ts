// The durable job loop survives a database that refuses it for a while: a failed claim is
// logged and retried, and jobs queued meanwhile still run.
import { afterAll, expect, test } from "bun:test";
import { Database as Sqlite } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../../src/config.ts";
import { openContext } from "../../../src/runtime.ts";
import { REPO_GC } from "../../../src/services/git/maintenance.ts";
import { startWorkers } from "../../../src/services/jobs/worker.ts";

const root = mkdtempSync(join(tmpdir(), "svc-worker-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Polls `fn` until it is true or the deadline passes. */
async function until(fn: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!fn()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

test("a failing claim is logged and retried; the loop goes on and runs the next job", async () => {
  const dataDir = join(root, "data");
  const ctx = await openContext(loadConfig({ SVC_DATA_DIR: dataDir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" }));
  const errors: string[] = [];
  ctx.log = { ...ctx.log, error: (msg: string) => void errors.push(msg) };
  // Another connection takes the jobs table away: every claim fails until it is back.
  const other = new Sqlite(join(dataDir, "svc.db"));
  other.exec("ALTER TABLE jobs RENAME TO jobs_away");
  const ran: unknown[] = [];
  const workers = startWorkers(ctx, { "repo.gc": async (_c, payload) => void ran.push(payload) }, 10);
  try {
    await until(() => errors.includes("job claim failed"), "a logged claim failure");
    other.exec("ALTER TABLE jobs_away RENAME TO jobs");
    await ctx.db.transaction((tx) => ctx.work.enqueue(tx, REPO_GC, { repoId: "r1" }));
    await until(() => ran.length === 1, "the job to run");
    expect(ran).toEqual([{ repoId: "r1" }]);
  } finally {
    await workers.stop();
    other.close();
    ctx.close();
  }
});
