// A "node" inside the test process: a context opened on settings of its own and the HTTP app
// over it, called without a socket. Two of them over one database stand for two svc nodes
// (test/cluster/signals.test.ts on PostgreSQL, test/service/ci/signals.test.ts on SQLite), so
// a test can reach into each node's context (its claim hub, its signals) between requests.
import { buildApp } from "../../src/http/app.ts";
import type { Ctx } from "../../src/services/context.ts";
import { createUserWithOrg } from "../../src/services/people/accounts.ts";
import { openTestContext } from "./context.ts";
import { readBody } from "./server.ts";

/** The password every owner made by signedInOwner has. */
export const OWNER_PASSWORD = "a long enough password";

export interface AppNode {
  ctx: Ctx & { close(): void };
  app: ReturnType<typeof buildApp>;
  /** One request through the app (the facts cache checked fresh first, as a new request would be). */
  call(method: string, path: string, o?: { body?: unknown; token?: string; cookie?: string }): Promise<{ status: number; text: string; body: any }>;
}

/**
 * Opens a context on `settings` (SVC_*; SVC_HTTP_ADDR, SVC_BASE_URL and SVC_LOG have test
 * defaults) and builds the app over it. The caller closes `ctx`.
 */
export async function openAppNode(settings: Record<string, string>): Promise<AppNode> {
  const ctx = await openTestContext({ SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: "http://svc.test", SVC_LOG: "error", ...settings });
  const app = buildApp(ctx);
  async function call(method: string, path: string, o: { body?: unknown; token?: string; cookie?: string } = {}) {
    const headers: Record<string, string> = {};
    if (o.body !== undefined) headers["content-type"] = "application/json";
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.cookie) headers.cookie = o.cookie;
    ctx.facts.fresh();
    const res = await app.handle(new Request(`http://svc.test${path}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) }));
    const { text, body } = await readBody(res);
    return { status: res.status, text, body };
  }
  return { ctx, app, call };
}

/** Makes the org `org` with an owner and signs them in on `node`: a caller with the owner's session. */
export async function signedInOwner(node: AppNode, org: string) {
  const email = `owner@${org}.example`;
  await createUserWithOrg(node.ctx, { org, email, name: "Owner", password: OWNER_PASSWORD, role: "owner" });
  const res = await node.app.handle(
    new Request("http://svc.test/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: OWNER_PASSWORD }),
    }),
  );
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  return (method: string, path: string, body?: unknown) => node.call(method, path, { body: body ?? (method === "GET" ? undefined : {}), cookie });
}
