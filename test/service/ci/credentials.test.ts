// Machine credentials (svcr_) are verified from a small cache of machines by id (services/ci/
// credentials.ts), with the machine's removal checked on every call (a fact-cache fact). These tests warm that
// cache first, then change the machine every way it can change, and require the very next call
// to see it: removal through the API, replacement by a new registration of the same name, the
// one-job life of an ephemeral machine, removal committed by another connection (the CLI or
// another process), a wrong secret for a cached id. In-process: the real context and HTTP
// application driven with app.handle(), the trigger jobs drained by hand.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../../src/http/app.ts";
import { openTestContext, otherConnection } from "../../helpers/context.ts";
import { CI_TRIGGER } from "../../../src/services/ci/trigger.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { readBody } from "../../helpers/server.ts";

const PASSWORD = "a long enough password";
const T = 60_000;
const root = mkdtempSync(join(tmpdir(), "svc-ci-cred-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let open: { close(): void }[] = [];
afterEach(() => {
  for (const c of open) c.close();
  open = [];
});

let harnesses = 0;
async function harness() {
  const dataDir = join(root, String(++harnesses), "data");
  const ctx = await openTestContext({
    SVC_DATA_DIR: dataDir,
    SVC_HTTP_ADDR: "127.0.0.1:0",
    SVC_BASE_URL: "http://svc.test",
    SVC_LOG: "error",
    SVC_RUNNER_CLAIM_WAIT_MS: "50",
  });
  open.push(ctx);
  const app = buildApp(ctx);
  async function call(method: string, path: string, o: { body?: unknown; token?: string; cookie?: string } = {}) {
    const headers: Record<string, string> = {};
    if (o.body !== undefined) headers["content-type"] = "application/json";
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.cookie) {
      headers.cookie = o.cookie;
      headers.origin = "http://svc.test";
    }
    ctx.facts.fresh();
    const res = await app.handle(new Request(`http://svc.test${path}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) }));
    const { text, body } = await readBody(res);
    return { status: res.status, text, body };
  }
  await createUserWithOrg(ctx, { org: "acme", email: "o@acme.example", name: "Owner", password: PASSWORD, role: "owner" });
  const login = await app.handle(
    new Request("http://svc.test/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "o@acme.example", password: PASSWORD }),
    }),
  );
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const owner = (method: string, path: string, body?: unknown) =>
    call(method, path, { body: body ?? (method === "GET" || method === "DELETE" ? undefined : {}), cookie });
  expect((await owner("POST", "/v1/orgs/acme/repos", { name: "app" })).status).toBe(201);
  async function drain() {
    while ((await ctx.work.runDue({ kinds: [CI_TRIGGER] })) > 0);
  }
  let pushes = 0;
  async function push(label: string) {
    const workflow = `on: push\njobs:\n  j:\n    runs-on: [self-hosted, ${label}]\n    steps:\n      - run: echo\n`;
    const r = await owner("POST", "/v1/orgs/acme/repos/app/commits", {
      branch: "main",
      message: `ci ${++pushes}`,
      operations: [{ op: "put", path: `.svc/workflows/${label}.yml`, content: `# ${pushes}\n${workflow}` }],
    });
    expect(r.status).toBe(201);
    await drain();
  }
  async function machine(name: string, labels: string[] = [], extra: Record<string, unknown> = {}) {
    const tok = await owner("POST", "/v1/orgs/acme/runners/registration-token", {});
    const r = await call("POST", "/v1/runners/register", { token: tok.body.token, body: { name, os: "linux", arch: "x64", labels, ...extra } });
    expect(r.status).toBe(201);
    return { id: r.body.runner_id as string, credential: r.body.credential as string };
  }
  const claim = (credential: string) => call("POST", "/v1/runners/claim", { token: credential });
  return { ctx, dataDir, call, owner, push, machine, claim };
}

const REVOKED = { status: 401, body: { error: "invalid or revoked token" } };

describe("machine credentials: a change is seen on the very next call", () => {
  test(
    "removed through the API: the cached credential is refused at once, its running job failed",
    async () => {
      const h = await harness();
      const m = await h.machine("doomed", ["doom"]);
      // Warm: several verified calls.
      expect((await h.claim(m.credential)).status).toBe(204);
      await h.push("doom");
      const c = await h.claim(m.credential);
      expect(c.status).toBe(200);
      expect((await h.claim(m.credential)).status).toBe(409);
      expect((await h.owner("DELETE", `/v1/orgs/acme/runners/${m.id}`)).status).toBe(204);
      expect(await h.claim(m.credential)).toMatchObject(REVOKED);
      expect(await h.claim(m.credential)).toMatchObject(REVOKED);
      expect((await h.call("POST", `/v1/runner/jobs/${c.body.job_id}/heartbeat`, { token: c.body.token })).status).toBe(401);
    },
    T,
  );

  test(
    "replaced by a registration of the same name: the old credential is refused at once, the new one works",
    async () => {
      const h = await harness();
      const first = await h.machine("twin", ["twin"]);
      expect((await h.claim(first.credential)).status).toBe(204);
      expect((await h.claim(first.credential)).status).toBe(204);
      const second = await h.machine("twin", ["twin"]);
      expect(await h.claim(first.credential)).toMatchObject(REVOKED);
      await h.push("twin");
      expect((await h.claim(second.credential)).status).toBe(200);
      expect(await h.claim(first.credential)).toMatchObject(REVOKED);
    },
    T,
  );

  test(
    "an ephemeral machine's credential is refused on the call after its one verdict",
    async () => {
      const h = await harness();
      const m = await h.machine("once", ["once"], { ephemeral: true });
      expect((await h.claim(m.credential)).status).toBe(204);
      await h.push("once");
      const c = await h.claim(m.credential);
      expect(c.status).toBe(200);
      expect((await h.call("POST", `/v1/runner/jobs/${c.body.job_id}/complete`, { token: c.body.token, body: { verdict: "success" } })).status).toBe(204);
      expect(await h.claim(m.credential)).toMatchObject(REVOKED);
    },
    T,
  );

  test(
    "removed by another connection (the CLI, another process): refused on the next call",
    async () => {
      const h = await harness();
      const m = await h.machine("elsewhere");
      const other = await h.machine("bystander");
      expect((await h.claim(m.credential)).status).toBe(204);
      expect((await h.claim(other.credential)).status).toBe(204);
      const db = await otherConnection(h.dataDir);
      try {
        await db.exec(`UPDATE runners SET removed_at = ${Date.now()} WHERE id = '${m.id}'`);
      } finally {
        await db.close();
      }
      // The very next call fails, on SQLite and on PostgreSQL (where another connection stands
      // for another node, and the claim confirms the machine live before it answers 204).
      expect(await h.claim(m.credential)).toMatchObject(REVOKED);
      // Only that machine: the other cached credential still works.
      expect((await h.claim(other.credential)).status).toBe(204);
      // A machine row deleted outright is refused the same way.
      const gone = await otherConnection(h.dataDir);
      try {
        await gone.exec(`DELETE FROM runners WHERE id = '${other.id}'`);
      } finally {
        await gone.close();
      }
      expect(await h.claim(other.credential)).toMatchObject(REVOKED);
    },
    T,
  );

  test(
    "a cached machine id with a wrong secret is the same 401 as an unknown credential",
    async () => {
      const h = await harness();
      const m = await h.machine("right");
      expect((await h.claim(m.credential)).status).toBe(204);
      const wrong = `${m.credential.slice(0, 22)}${"a".repeat(32)}`;
      const unknown = await h.claim(`svcr_${"a".repeat(16)}_${"b".repeat(32)}`);
      const r = await h.claim(wrong);
      expect({ status: r.status, text: r.text }).toEqual({ status: unknown.status, text: unknown.text });
      expect(r.status).toBe(401);
      expect((await h.claim(m.credential)).status).toBe(204);
    },
    T,
  );

  test(
    "a machine whose group is deleted claims through the default group at once",
    async () => {
      const h = await harness();
      expect((await h.owner("POST", "/v1/orgs/acme/runner-groups", { name: "gpu", repo_access: "selected", repos: [] })).status).toBe(201);
      const tok = await h.owner("POST", "/v1/orgs/acme/runners/registration-token", { group: "gpu" });
      const reg = await h.call("POST", "/v1/runners/register", { token: tok.body.token, body: { name: "g1", os: "linux", arch: "x64", labels: ["gpu"] } });
      expect(reg.status).toBe(201);
      const cred = reg.body.credential as string;
      await h.push("gpu");
      // The gpu group admits no repository: nothing for this machine.
      expect((await h.claim(cred)).status).toBe(204);
      const groups = (await h.owner("GET", "/v1/orgs/acme/runner-groups")).body.groups;
      const gpu = groups.find((g: any) => g.name === "gpu");
      expect((await h.owner("DELETE", `/v1/orgs/acme/runner-groups/${gpu.id}`)).status).toBe(204);
      expect((await h.claim(cred)).status).toBe(200);
    },
    T,
  );
});
