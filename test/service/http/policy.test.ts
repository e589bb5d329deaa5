// Route policy is declared beside each route (http/policy.ts, issue 26). This test lists every
// route that takes a body with the policy it declares, so a new route that lets anonymous callers
// send a body, reads it leniently or reads raw bytes is a visible decision, not a default.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../../src/http/app.ts";
import { JSON_BODY_LIMIT } from "../../../src/http/body.ts";
import { buildDocument } from "../../../src/http/openapi.ts";
import { POLICY_KEY, isRaw, policy, policyOf, policyTable } from "../../../src/http/policy.ts";
import { openTestContext } from "../../helpers/context.ts";
import type { Ctx } from "../../../src/services/context.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-policy-"));
let ctx: Ctx;
let routes: { method: string; path: string; hooks?: unknown }[];

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: dir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" });
  routes = buildApp(ctx).routes;
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Every route whose policy is not the default (a credential, a JSON body), as `METHOD path: caller/body`. */
const DECLARED = [
  "POST /v1/auth/login: anonymous/uniform",
  "POST /v1/auth/logout: lenient/uniform",
  "POST /v1/auth/signup: anonymous/json",
  "POST /v1/auth/verify: anonymous/uniform",
  "POST /v1/auth/resend-verification: anonymous/uniform",
  "POST /v1/auth/forgot-password: anonymous/uniform",
  "POST /v1/auth/reset-password: anonymous/uniform",
  "POST /v1/auth/invite/preview: anonymous/uniform",
  "POST /v1/auth/accept-invite: anonymous/json",
  "POST /v1/users/:handle/emails/verify: credential/uniform",
  "POST /v1/runners/register: runner/json",
  "POST /v1/runners/claim: runner/json",
  // The cache archive's bytes on the fs store (issue 30): streamed to a file, capped by the service.
  "PUT /v1/runner/jobs/:job_id/caches/:cache_id/content: credential/stream",
  "PUT /v1/runner/jobs/:job_id/artifacts/:artifact_id/content: credential/stream",
  // A person's picture (issue 33): the raw image bytes, read within the limit by the route.
  "PUT /v1/user/avatar: credential/stream",
  "POST /webhooks/billing: anonymous/raw",
  "POST /webhooks/generic: anonymous/raw",
  "POST /webhooks/app: anonymous/raw",
].sort();

const show = (r: { method: string; path: string; hooks?: unknown }) => {
  const p = policyOf(r);
  return `${r.method} ${r.path}: ${p.caller}/${isRaw(p.body) ? "raw" : p.body}`;
};

describe("route policy", () => {
  test("every body-taking /v1 and /webhooks route declares its policy; all others are a credential and a JSON body", () => {
    const taking = routes.filter((r) => BODY_METHODS.has(r.method.toUpperCase()) && (r.path.startsWith("/v1/") || r.path.startsWith("/webhooks/")));
    expect(taking.length).toBeGreaterThan(50);
    const declared = taking
      .map(show)
      .filter((s) => !s.endsWith(": credential/json"))
      .sort();
    expect(declared).toEqual(DECLARED);
  });

  test("signed webhooks read their exact bytes, within a limit, after their headers are checked", () => {
    for (const r of routes.filter((r) => r.path.startsWith("/webhooks/"))) {
      const { body } = policyOf(r);
      expect({ route: r.path, raw: isRaw(body) }).toEqual({ route: r.path, raw: true });
      if (!isRaw(body)) continue;
      expect(body.raw).toBeGreaterThan(0);
      expect(body.raw).toBeLessThanOrEqual(JSON_BODY_LIMIT);
      expect(typeof body.admit).toBe("function");
    }
  });

  test("web pages and GET routes take no policy (pages read forms, checked by the page)", () => {
    // The Git LFS lock routes are not pages: they speak the LFS protocol (its own JSON media type, read raw and parsed by the route).
    const lfs = (p: string) => p.startsWith("/:org/:repo/info/lfs/");
    // The avatar upload form reads its multipart body itself, within the picture's limit.
    const upload = (p: string) => p === "/settings/profile/avatar";
    expect(routes.filter((r) => upload(r.path)).map(show)).toEqual(["POST /settings/profile/avatar: credential/stream"]);
    const pages = routes.filter((r) => !r.path.startsWith("/v1/") && !r.path.startsWith("/webhooks/") && !lfs(r.path) && !upload(r.path));
    expect(pages.map(show).filter((s) => !s.endsWith(": credential/json"))).toEqual([]);
  });

  test("the table answers by method and pattern, with the default for anything undeclared", () => {
    const of = policyTable([{ method: "POST", path: "/v1/x", hooks: { detail: { summary: "s", ...policy({ caller: "anonymous", body: "uniform" }) } } }]);
    expect(of("post", "/v1/x")).toEqual({ caller: "anonymous", body: "uniform" });
    expect(of("PUT", "/v1/x")).toEqual({ caller: "credential", body: "json" });
    expect(of("POST", "/v1/y")).toEqual({ caller: "credential", body: "json" });
  });

  test("the policy stays out of the OpenAPI document, which says what it implies (no 401 on logout, no 415 on uniform bodies)", () => {
    const doc = buildDocument(buildApp(ctx));
    expect(JSON.stringify(doc)).not.toContain(POLICY_KEY);
    const logout = doc.paths["/v1/auth/logout"].post.responses;
    expect(Object.keys(logout)).not.toContain("401");
    expect(Object.keys(doc.paths["/v1/auth/login"].post.responses)).not.toContain("415");
    expect(Object.keys(doc.paths["/v1/auth/signup"].post.responses)).toContain("415");
    expect(Object.keys(doc.paths["/v1/users/{handle}/emails/verify"].post.responses)).toEqual(expect.arrayContaining(["401"]));
    expect(Object.keys(doc.paths["/v1/users/{handle}/emails/verify"].post.responses)).not.toContain("415");
  });
});
