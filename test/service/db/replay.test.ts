// Every write transaction re-run once (plan-27 §1.4): with SVC_TEST_TX_REPLAY=1,
// Database.transaction runs each callback twice and rolls the first run back, as PostgreSQL's
// retry on a serialization failure will. A callback with in-memory effects before COMMIT (a
// reservation, an outer accumulator) breaks the service tests it is in. This runs representative
// files that way (the engine's claims, git pushes through publish); `npm run test:replay` runs
// the whole of test/service so.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { sqliteOnly } from "../../helpers/context.ts";

const root = join(import.meta.dir, "../../..");
const FILES = ["test/service/jobs/engine.test.ts", "test/service/git/git-service.test.ts"];

const onSqlite = test.skipIf(sqliteOnly("SVC_TEST_TX_REPLAY stands in for PostgreSQL's retries on SQLite; on PostgreSQL they are real"));

onSqlite("representative service tests pass with every transaction replayed once", async () => {
  const proc = Bun.spawn([process.execPath, "test", "--timeout", "120000", ...FILES], {
    cwd: root,
    env: { ...process.env, SVC_TEST_TX_REPLAY: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const report = `${out}\n${err}`;
  if (code !== 0)
    console.error(
      report
        .split("\n")
        .filter((l) => /\(fail\)|error:|^\s+at /.test(l))
        .slice(0, 60)
        .join("\n"),
    );
  expect(code).toBe(0);
  expect(report).toMatch(/\b0 fail\b/);
});
