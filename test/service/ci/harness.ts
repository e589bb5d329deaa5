// The in-process CI harness the service tests share (artifacts, caches, lifetimes): a fresh
// context per harness under one temp root, the HTTP application driven with app.handle() at
// http://svc.test, the service clock read from the test's own variable, an owner of org acme with
// repository app, and the calls every CI test makes (register a machine, push a workflow and run
// the trigger jobs). Contexts close and the clock is restored after each test; the root goes after
// the file.
import { afterAll, afterEach, expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../../src/http/app.ts";
import { CI_TRIGGER } from "../../../src/services/ci/trigger.ts";
import { setClock } from "../../../src/services/context.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { openTestContext } from "../../helpers/context.ts";
import { readBody } from "../../helpers/server.ts";

const PASSWORD = "a long enough password";
/** Where the application is reached; a URL the server hands out starts with it. */
export const ORIGIN = "http://svc.test";

/** A request's options: a JSON `body` or `raw` bytes, the bearer `token` or a session `cookie`, extra headers. */
export interface CallOptions {
  body?: unknown;
  raw?: Uint8Array | ReadableStream<Uint8Array>;
  token?: string;
  cookie?: string;
  headers?: Record<string, string>;
}

/**
 * Registers the hooks of one test file and answers its harness maker: `name` names the temp root,
 * `clock` is the service clock for the file (its tests move the variable it reads).
 */
export function ciHarnesses(name: string, clock: () => number) {
  const root = mkdtempSync(join(tmpdir(), `svc-ci-${name}-`));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let restoreClock: (() => void) | null = null;
  let open: { close(): void }[] = [];
  afterEach(() => {
    restoreClock?.();
    restoreClock = null;
    for (const c of open) c.close();
    open = [];
  });
  let made = 0;

  return async function harness(env: Record<string, string> = {}) {
    const dir = join(root, String(++made));
    restoreClock ??= setClock(clock);
    const ctx = await openTestContext({
      SVC_DATA_DIR: join(dir, "data"),
      SVC_HTTP_ADDR: "127.0.0.1:0",
      SVC_BASE_URL: ORIGIN,
      SVC_LOG: "error",
      SVC_RUNNER_CLAIM_WAIT_MS: "150",
      ...env,
    });
    open.push(ctx);
    const app = buildApp(ctx);
    /** The raw response to `path` (a path, or an absolute URL of this server). */
    async function raw(method: string, path: string, o: CallOptions = {}): Promise<Response> {
      const headers: Record<string, string> = { ...o.headers };
      if (o.body !== undefined) headers["content-type"] = "application/json";
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      if (o.cookie) headers.cookie = o.cookie;
      ctx.facts.fresh();
      const body: BodyInit | undefined = o.raw ? (o.raw as BodyInit) : o.body === undefined ? undefined : JSON.stringify(o.body);
      return app.handle(new Request(path.startsWith(ORIGIN) ? path : `${ORIGIN}${path}`, { method, headers, body }));
    }
    /** The response read: a zip as `bytes`, anything else as `text` and parsed `body`. */
    async function call(method: string, path: string, o: CallOptions = {}) {
      const res = await raw(method, path, o);
      if ((res.headers.get("content-type") ?? "").startsWith("application/zip"))
        return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()), text: "", body: null as any };
      const { text, body } = await readBody(res);
      return { status: res.status, headers: res.headers, text, body, bytes: new Uint8Array() };
    }
    await createUserWithOrg(ctx, { org: "acme", email: "o@acme.example", name: "Owner", password: PASSWORD, role: "owner" });
    const login = await raw("POST", "/v1/auth/login", { body: { email: "o@acme.example", password: PASSWORD } });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    /** A call as the org's owner (a session). */
    const owner = (method: string, path: string, body?: unknown) => call(method, path, { body: body ?? (method === "GET" ? undefined : {}), cookie });
    expect((await owner("POST", "/v1/orgs/acme/repos", { name: "app" })).status).toBe(201);

    /** Runs the pending ci.trigger jobs (the worker's job in `svc serve`). */
    async function drain() {
      while ((await ctx.work.runDue({ kinds: [CI_TRIGGER] })) > 0);
    }
    /** Commits `workflow` as .svc/workflows/ci.yml on `branch` and plans its runs; answers the commit. */
    async function push(workflow: string, branch = "main") {
      const r = await owner("POST", "/v1/orgs/acme/repos/app/commits", {
        branch,
        message: "ci",
        operations: [{ op: "put", path: ".svc/workflows/ci.yml", content: workflow }],
      });
      expect(r.status).toBe(201);
      await drain();
      return r.body.commit as string;
    }
    /** Registers a runner machine of acme; answers its credential. */
    async function machine(machineName: string, labels: string[] = []) {
      const tok = await owner("POST", "/v1/orgs/acme/runners/registration-token", {});
      const r = await call("POST", "/v1/runners/register", { token: tok.body.token, body: { name: machineName, os: "linux", arch: "x64", labels } });
      expect(r.status).toBe(201);
      return r.body.credential as string;
    }
    return { ctx, raw, call, owner, drain, push, machine };
  };
}
