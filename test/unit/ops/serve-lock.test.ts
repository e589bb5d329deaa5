// serve.lock (issue 27): `svc serve` writes its pid into the data dir; a command that needs the
// installation stopped (svc migrate-db) asks runningServer, which ignores a lock whose process
// is gone (a server killed with SIGKILL leaves one behind).
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runningServer, writeServeLock } from "../../../src/services/ops/serve-lock.ts";

test("the lock names a live pid while held; a dead pid or no lock is no server; removal leaves another server's lock", async () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-serve-lock-"));
  try {
    expect(runningServer(dir)).toBeNull();
    const unlock = writeServeLock(dir);
    expect(runningServer(dir)).toBe(process.pid);
    unlock();
    expect(existsSync(join(dir, "serve.lock"))).toBe(false);

    const gone = Bun.spawn(["true"]);
    await gone.exited;
    writeFileSync(join(dir, "serve.lock"), `${gone.pid}\n`);
    expect(runningServer(dir)).toBeNull();

    // Our remover does not delete a lock another server wrote since.
    const again = writeServeLock(dir);
    writeFileSync(join(dir, "serve.lock"), "1\n");
    again();
    expect(existsSync(join(dir, "serve.lock"))).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
