// Sending an address's confirmation link again and moving the sign-in address to another proved
// address, over real HTTP with the capture mail transport (the account settings page uses both).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { client, login, startServer, type RunningServer } from "../../helpers/server.ts";
import { caller, expectError, person, type Person } from "../../helpers/api.ts";
import { mailsTo, waitForLink } from "../../helpers/mail-capture.ts";

let server: RunningServer;
let mailDir: string;
let ada: Person;
let bob: Person;

beforeAll(async () => {
  mailDir = mkdtempSync(join(tmpdir(), "svc-email-primary-"));
  server = await startServer({ env: { SVC_MAIL_TRANSPORT: "capture", SVC_MAIL_DIR: mailDir } });
  ada = await person(server, "acme", "ada@example.com", "owner");
  bob = await person(server, "acme", "bob@example.com", "member");
}, 30_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  rmSync(mailDir, { recursive: true, force: true });
});

const path = (handle: string, address: string, rest = "") => `/v1/users/${handle}/emails/${encodeURIComponent(address)}${rest}`;

describe("POST /v1/users/{handle}/emails/{email}/resend", () => {
  test("mails a fresh claim link and spends the previous one", async () => {
    expect((await caller(server, ada).post(`/v1/users/${ada.handle}/emails`, { email: "ada.work@example.com" })).status).toBe(202);
    const first = await waitForLink(mailDir, "ada.work@example.com", "svce_");
    const r = await caller(server, ada).post(path(ada.handle, "ADA.work@example.com", "/resend"));
    expect({ status: r.status, body: r.body }).toEqual({
      status: 202,
      body: { address: "ada.work@example.com", status: "pending", detail: expect.any(String) },
    });
    const second = await waitForLink(mailDir, "ada.work@example.com", "svce_", 1, 15_000, [first.token]);
    expect(second.token).not.toBe(first.token);
    expectError(await caller(server, ada).post(`/v1/users/${ada.handle}/emails/verify`, { token: first.token }), 404);
    expect((await caller(server, ada).post(`/v1/users/${ada.handle}/emails/verify`, { token: second.token })).status).toBe(200);
  });

  test("refusals: a proved or unknown address 404, someone else's account 403, nobody 401", async () => {
    const before = mailsTo(mailDir, "ada.work@example.com").length;
    expectError(await caller(server, ada).post(path(ada.handle, "ada.work@example.com", "/resend")), 404);
    expectError(await caller(server, ada).post(path(ada.handle, "nobody@example.com", "/resend")), 404);
    expectError(await caller(server, bob).post(path(ada.handle, "ada.work@example.com", "/resend")), 403);
    expectError(await caller(server).post(path(ada.handle, "ada.work@example.com", "/resend")), 401);
    expect(mailsTo(mailDir, "ada.work@example.com").length).toBe(before);
  });
});

describe("PATCH /v1/users/{handle}/emails/{email} { primary: true }", () => {
  test("an unproved address cannot become the sign-in address (400); other bodies are 400; unknown 404; others 403", async () => {
    expect((await caller(server, bob).post(`/v1/users/${bob.handle}/emails`, { email: "bob.alt@example.com" })).status).toBe(202);
    expectError(await caller(server, bob).patch(path(bob.handle, "bob.alt@example.com"), { primary: true }), 400, /confirm this address/);
    expectError(await caller(server, ada).patch(path(ada.handle, "ada.work@example.com"), { primary: false }), 400);
    expectError(await caller(server, ada).patch(path(ada.handle, "ada.work@example.com"), {}), 400);
    expectError(await caller(server, ada).patch(path(ada.handle, "nobody@example.com"), { primary: true }), 404);
    expectError(await caller(server, bob).patch(path(ada.handle, "ada.work@example.com"), { primary: true }), 403);
    expectError(await caller(server).patch(path(ada.handle, "ada.work@example.com"), { primary: true }), 401);
  });

  test("a proved address becomes the sign-in address: sign-in and password reset follow it; the old one can then be removed", async () => {
    const r = await caller(server, ada).patch(path(ada.handle, "ada.work@example.com"), { primary: true });
    expect({ status: r.status, body: r.body }).toEqual({
      status: 200,
      body: { address: "ada.work@example.com", verified_at: expect.any(Number), private: true, primary: true, created_at: expect.any(Number) },
    });
    const list = (await caller(server, ada).get(`/v1/users/${ada.handle}/emails`)).body.emails;
    expect(list.map((e: { address: string; primary: boolean }) => [e.address, e.primary])).toEqual([
      ["ada.work@example.com", true],
      ["ada@example.com", false],
    ]);
    const cookie = await login(server, "ada.work@example.com", ada.password);
    expect((await client(server, { cookie }).get("/v1/auth/me")).body.email).toBe("ada.work@example.com");
    expect((await client(server).post("/v1/auth/login", { email: "ada@example.com", password: ada.password })).status).toBe(401);
    expect((await client(server).post("/v1/auth/forgot-password", { email: "ada.work@example.com" })).status).toBe(202);
    await waitForLink(mailDir, "ada.work@example.com", "svcrs_");
    expectError(await caller(server, ada).delete(path(ada.handle, "ada.work@example.com")), 404);
    expect((await caller(server, ada).delete(path(ada.handle, "ada@example.com"))).status).toBe(204);
    // Making the sign-in address primary again changes nothing.
    expect((await caller(server, ada).patch(path(ada.handle, "ada.work@example.com"), { primary: true })).status).toBe(200);
  });
});
