// The batch API on a write-blocked repository (issue 31): a private repository of an organization
// without a subscription in force refuses uploads with its `quota:` reason (402), and still serves
// downloads. A real server in this process; billing is switched on after the repository exists
// (a billed organization on the free plan could not create a private one).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "bun";
import type { Config } from "../../../src/config.ts";
import { gitHandler } from "../../../src/http/git.ts";
import { startHttp } from "../../../src/http/server.ts";
import { openAppNode, signedInOwner, type AppNode } from "../../helpers/app-node.ts";
import { batchBody, postBatch } from "../../blackbox/lfs/lfs-helpers.ts";

let root: string;
let node: AppNode;
let server: Server<undefined>;
let base: string;
let auth: Record<string, string>;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "svc-lfs-quota-"));
  node = await openAppNode({
    SVC_DATA_DIR: join(root, "data"),
    SVC_SECRETS_KEY: "5a".repeat(32),
    SVC_BILLING_PROVIDER: "stripe",
    SVC_STRIPE_SECRET_KEY: "sk_test_unused",
    SVC_STRIPE_WEBHOOK_SECRET: "whsec_unused",
    SVC_STRIPE_PRICE_ID: "price_unused",
  });
  server = startHttp(node.ctx, { hostname: "127.0.0.1", port: 0, git: gitHandler(node.ctx) });
  base = `http://127.0.0.1:${server.port}`;
  (node.ctx as { baseUrl: string }).baseUrl = base;
  const config = node.ctx.config as { billing: Config["billing"] };
  const billing = config.billing;
  expect(billing).not.toBeNull();
  config.billing = null;
  try {
    const owner = await signedInOwner(node, "acme");
    expect((await owner("POST", "/v1/orgs/acme/repos", { name: "assets" })).status).toBe(201);
    const token = (await owner("POST", "/v1/orgs/acme/tokens", { scopes: ["repo:write"], label: "lfs" })).body.token;
    auth = { authorization: `Basic ${btoa(`x-token:${token}`)}` };
  } finally {
    config.billing = billing;
  }
});

afterAll(async () => {
  await server?.stop(true);
  node?.ctx.close();
  rmSync(root, { recursive: true, force: true });
});

test("a write-blocked repository refuses an upload batch with 402 and its quota: reason; downloads are still answered", async () => {
  const objects = [{ oid: "ab".repeat(32), size: 10 }];
  const up = await postBatch(base, "acme", "assets", batchBody("upload", objects), auth);
  expect(up.status).toBe(402);
  expect(up.body.message).toMatch(/^quota: acme has no active subscription/);
  const down = await postBatch(base, "acme", "assets", batchBody("download", objects), auth);
  expect(down.status).toBe(200);
  expect(down.body.objects[0].error.code).toBe(404);
});
