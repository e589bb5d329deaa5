// Rolling upgrades (issue 27, DECISIONS §5): on SIGTERM `svc serve` drains: /readyz answers 503
// (`draining: true`) for SVC_DRAIN_MS while requests are still served, so a balancer's health
// check takes the node out before connections are refused; then it stops and exits 0. The
// data dir holds `serve.lock` (the server's pid) while it runs, and not after.
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "../../helpers/server.ts";

test("SIGTERM: /readyz 503 draining while requests are still served, then exit 0; serve.lock names the pid while it runs", async () => {
  // The default drain (5 s) is what a balancer sees; the helper's 0 is for every other test.
  await using server = await startServer({ env: { SVC_DRAIN_MS: "5000" } });
  const lock = join(server.dataDir, "serve.lock");
  expect(readFileSync(lock, "utf8").trim()).toBe(String(server.proc.pid));
  const ready = await fetch(`${server.url}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ status: "ready", checks: { database: "ok", migrations: "ok", object_store: "ok" } });

  const exited = server.stop();
  // Poll until the drain shows (the signal is handled asynchronously).
  let body: any = null;
  for (;;) {
    const r = await fetch(`${server.url}/readyz`);
    body = await r.json();
    if (r.status === 503) break;
    expect(r.status).toBe(200);
  }
  expect(body).toEqual({ status: "unavailable", checks: { database: "ok", migrations: "ok", object_store: "ok" }, draining: true });
  // Still serving while draining.
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  expect((await fetch(`${server.url}/v1/orgs/nobody/repos/none`)).status).toBe(401);
  expect(await exited).toBe(0);
  expect(existsSync(lock)).toBe(false);
});
