// A route whose answer breaks its own response schema is a server fault: 500, logged with the
// stack but without the answer's value (it may be a secret shown once). In-process, because only
// a deliberately broken route can produce it.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { t } from "elysia";
import { buildApp } from "../../../src/http/app.ts";
import { openTestContext } from "../../helpers/context.ts";
import type { Logger } from "../../../src/services/context.ts";

const root = mkdtempSync(join(tmpdir(), "svc-server-errors-"));
const ctx = await openTestContext({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" });
afterAll(() => {
  ctx.close();
  rmSync(root, { recursive: true, force: true });
});

const lines: { msg: string; fields: Record<string, unknown> }[] = [];
const log: Logger = {
  enabled: () => true,
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: (msg, fields = {}) => void lines.push({ msg, fields }),
};

const app = buildApp({ ...ctx, log })
  .get("/v1/test/broken-answer", () => ({ token: "svc_TOPSECRETVALUE" }) as never, { response: { 200: t.Object({ id: t.String() }) } })
  .get("/v1/test/crash", () => {
    throw new TypeError("boom");
  });

const get = (path: string) => app.handle(new Request(`http://localhost${path}`));

test("an answer that breaks its schema is a 500, logged without the value", async () => {
  const res = await get("/v1/test/broken-answer");
  expect(res.status).toBe(500);
  expect(await res.json()).toEqual({ error: "internal error", request_id: "unknown" });
  const line = lines.at(-1)!;
  expect(line.fields).toMatchObject({ request_id: "unknown", method: "GET", path: "/v1/test/broken-answer" });
  expect(String(line.fields.error)).toMatch(/response does not match its schema at \/id/);
  expect(String(line.fields.error)).toMatch(/\n\s+at /);
  expect(JSON.stringify(lines)).not.toContain("TOPSECRET");
});

test("a thrown error is a 500 logged with its stack", async () => {
  const res = await get("/v1/test/crash");
  expect(res.status).toBe(500);
  expect((await res.json()).error).toBe("internal error");
  const line = lines.at(-1)!;
  expect(line.fields).toMatchObject({ method: "GET", path: "/v1/test/crash" });
  expect(String(line.fields.error)).toMatch(/TypeError: boom\n\s+at /);
});
