// Resolving a job's secrets and variables (plan-29 Part A "Resolution"), in process on the test
// run's database (SVC_TEST_DATABASE=sqlite|pg): repo shadows org, org values limited to repos,
// only the referenced names, none for an untrusted (fork) run, and the failure naming another key.
import { afterAll, afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo } from "../../../src/services/repos/repos.ts";
import { putOrgValue, putRepoValue } from "../../../src/services/ci/secrets.ts";
import { secretsForJob, variablesForJob } from "../../../src/services/ci/job-secrets.ts";
import { secretsKeyId } from "../../../src/services/ci/seal.ts";

const { users } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-job-secrets-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const open: { close(): void }[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

const KEY_A = "11".repeat(32);
const KEY_B = "22".repeat(32);
let n = 0;

async function setup(key = KEY_A, dir = join(root, String(++n))) {
  const ctx = await openTestContext({ SVC_DATA_DIR: dir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error", SVC_SECRETS_KEY: key });
  open.push(ctx);
  return { ctx, dir };
}

test("repo shadows org, org values reach only their repos, only referenced names, forks get none", async () => {
  const { ctx, dir } = await setup();
  const owner = await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "O", password: "a long enough password", role: "owner" });
  const actor: Principal = { kind: "session", user: (await ctx.db.read.select().from(users).where(eq(users.id, owner.id)))[0]!, sessionId: "t" };
  const app = await createRepo(ctx, actor, "acme", { name: "app" });
  const lib = await createRepo(ctx, actor, "acme", { name: "lib" });
  await putOrgValue(ctx, actor, "secret", "acme", "TOKEN", { value: "org-token" });
  await putOrgValue(ctx, actor, "secret", "acme", "LIB_ONLY", { value: "lib-secret", repos: ["lib"] });
  await putRepoValue(ctx, actor, "secret", "acme", "app", "TOKEN", { value: "app-token" });
  await putOrgValue(ctx, actor, "variable", "acme", "REGION", { value: "eu" });
  await putRepoValue(ctx, actor, "variable", "acme", "app", "REGION", { value: "us" });
  await putOrgValue(ctx, actor, "variable", "acme", "LIB_VAR", { value: "x", repos: ["lib"] });

  const refs = ["TOKEN", "LIB_ONLY", "UNSET"];
  const job = (repoId: string, trusted = true) => ({ orgId: app.org_id, repoId, trusted, refs });
  expect(await secretsForJob(ctx, ctx.db.read, job(app.id))).toEqual({ ok: true, secrets: { TOKEN: "app-token" } });
  expect(await secretsForJob(ctx, ctx.db.read, job(lib.id))).toEqual({ ok: true, secrets: { TOKEN: "org-token", LIB_ONLY: "lib-secret" } });
  expect(await secretsForJob(ctx, ctx.db.read, { ...job(lib.id), refs: ["LIB_ONLY"] })).toEqual({ ok: true, secrets: { LIB_ONLY: "lib-secret" } });
  expect(await secretsForJob(ctx, ctx.db.read, job(app.id, false))).toEqual({ ok: true, secrets: {} });
  expect(await variablesForJob(ctx.db.read, { orgId: app.org_id, repoId: app.id, trusted: true })).toEqual({ REGION: "us" });
  expect(await variablesForJob(ctx.db.read, { orgId: app.org_id, repoId: lib.id, trusted: true })).toEqual({ REGION: "eu", LIB_VAR: "x" });
  // A change from a fork: no variables either (readable by writers only; the fork's author need not be one).
  expect(await variablesForJob(ctx.db.read, { orgId: app.org_id, repoId: app.id, trusted: false })).toEqual({});

  // The same database opened with another key: the job fails naming the key the value was sealed with, never the value.
  ctx.close();
  open.splice(0);
  const other = await setup(KEY_B, dir);
  const r = await secretsForJob(other.ctx, other.ctx.db.read, job(app.id));
  const idA = secretsKeyId(new Uint8Array(Buffer.from(KEY_A, "hex")));
  expect(r).toEqual({
    ok: false,
    error: `secret TOKEN was encrypted with another key (id ${idA}); set SVC_SECRETS_KEY to that key or set the secret again`,
  });
});
