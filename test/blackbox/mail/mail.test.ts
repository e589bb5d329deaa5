// Mail delivery seen from outside (SPEC §5.7, §4.3, §4.5): the real server with each transport —
// a real SMTP relay (smtp-server), capture files, the null transport, a SigV4-checking stand-in of
// the SES v2 API — and the boot failures of a bad mail configuration.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { deadPort, parseMail, startRelay, startSesStandin, type Relay, type SesStandin } from "../../helpers/mail-endpoints.ts";
import { client, createUser, login, runSvc, startServer, tempDir, type RunningServer } from "../../helpers/server.ts";

const FROM = "svc <no-reply@git.example.test>";
const FROM_ADDRESS = "no-reply@git.example.test";
const PASSWORD = "correct horse battery staple";

/** A port the OS just handed out (bound and released), for a server that must know its base URL up front. */
function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** Creates an org owner and returns a JSON client signed in as them. */
async function owner(server: RunningServer, org: string) {
  const u = await createUser(server, { org, email: `owner@${org}.example`, name: "Olivia Owner", password: PASSWORD });
  return client(server, { cookie: await login(server, u.email, PASSWORD) });
}

/** Polls a directory until it holds `n` .eml files (or the deadline passes). */
async function emlFiles(dir: string, n: number, ms = 15_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".eml"))
      .sort();
    if (files.length >= n) return files;
    if (Date.now() > deadline) throw new Error(`expected ${n} mail files in ${dir}, found ${files.length}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("smtp transport", () => {
  const BASE = "https://git.example.test";
  let relay: Relay;
  let server: RunningServer;
  /** The server addressed on its bound socket (the public base is not routable here). */
  let local: RunningServer;
  let admin: ReturnType<typeof client>;

  beforeAll(async () => {
    relay = await startRelay();
    const port = freePort();
    server = await startServer({
      env: {
        SVC_HTTP_ADDR: `127.0.0.1:${port}`,
        SVC_BASE_URL: BASE,
        SVC_MAIL_TRANSPORT: "smtp",
        SVC_MAIL_SMTP_HOST: `127.0.0.1:${relay.port}`,
        SVC_MAIL_FROM: FROM,
      },
    });
    local = { ...server, url: `http://127.0.0.1:${port}` };
    admin = await owner(local, "relayed");
  }, 30_000);
  afterAll(async () => {
    await server?.[Symbol.asyncDispose]();
    await relay?.close();
  });

  test("an invitation is relayed in cleartext with text and HTML parts carrying the returned link", async () => {
    const r = await admin.post("/v1/orgs/relayed/invites", { email: "invitee@example.com", role: "member" });
    expect(r.status).toBe(201);
    expect(r.body.mail).toEqual({ sent: true });
    expect(r.body.invite_link).toMatch(/^svcinv_[a-z2-7]+$/);
    const url = `${BASE}/invite?token=${r.body.invite_link}`;
    expect(r.body.invite_url).toBe(url);

    const got = await relay.waitFor((m) => m.to.includes("invitee@example.com"));
    expect({ from: got.from, to: got.to, secure: got.secure, auth: got.auth }).toEqual({
      from: "no-reply@git.example.test",
      to: ["invitee@example.com"],
      secure: false,
      auth: null,
    });
    const mail = await parseMail(got.raw);
    expect({ from: mail.from, name: mail.fromName }).toEqual({ from: FROM_ADDRESS, name: "svc" });
    expect(mail.to).toBe("invitee@example.com");
    expect(mail.subject).toContain("relayed");
    expect(mail.contentType).toBe("multipart/alternative");
    expect(mail.text).toContain(url);
    expect(mail.html).toContain(`href="${url}"`);
  });

  test("signup answers 202 while the relay is still busy; the confirmation mail follows", async () => {
    const release = relay.hold();
    try {
      const connected = relay.nextConnection();
      const started = Date.now();
      const r = await client(local).post("/v1/auth/signup", { email: "newcomer@example.com", name: "New Comer", password: PASSWORD, handle: "newcomer" });
      expect(r.status).toBe(202);
      expect(Date.now() - started).toBeLessThan(5_000);
      // The relay has the connection but has not acknowledged anything: the answer did not wait for it.
      await connected;
      expect(relay.messages.some((m) => m.to.includes("newcomer@example.com"))).toBe(false);
      release();
      const got = await relay.waitFor((m) => m.to.includes("newcomer@example.com"));
      const mail = await parseMail(got.raw);
      expect(mail.text).toMatch(new RegExp(`${BASE.replace(/\./g, "\\.")}/verify\\?token=svcv_[a-z2-7]+`));
      const token = /token=(svcv_[a-z2-7]+)/.exec(mail.text)![1]!;
      expect(mail.html).toContain(`href="${BASE}/verify?token=${token}"`);
      // The mailed token is the real one: it confirms the account.
      const v = await client(local).post("/v1/auth/verify", { token });
      expect(v.status).toBe(200);
    } finally {
      release();
    }
  });
});

describe("smtp relay down", () => {
  test("the invitation still answers 201 with its link, mail.sent false and the reason", async () => {
    await using server = await startServer({ env: { SVC_MAIL_TRANSPORT: "smtp", SVC_MAIL_SMTP_HOST: `127.0.0.1:${deadPort()}`, SVC_MAIL_FROM: FROM } });
    const admin = await owner(server, "downed");
    const r = await admin.post("/v1/orgs/downed/invites", { email: "invitee@example.com", role: "viewer" });
    expect(r.status).toBe(201);
    expect(r.body.invite_link).toMatch(/^svcinv_/);
    expect(r.body.mail.sent).toBe(false);
    expect(r.body.mail.error).toMatch(/ECONNREFUSED|refused/i);
  }, 30_000);
});

describe("capture transport", () => {
  test("each message is an RFC 822 file in SVC_MAIL_DIR with headers, both parts and the link", async () => {
    using mailDir = tempDir("svc-mail-dir-");
    await using server = await startServer({ env: { SVC_MAIL_TRANSPORT: "capture", SVC_MAIL_DIR: mailDir.path, SVC_MAIL_FROM: FROM } });
    const admin = await owner(server, "captured");
    const r = await admin.post("/v1/orgs/captured/invites", { email: "invitee@example.com", role: "admin" });
    expect(r.status).toBe(201);
    expect(r.body.mail).toEqual({ sent: true });
    const [file] = await emlFiles(mailDir.path, 1);
    expect(file).toMatch(/^\d{13}-\d{9}-[a-z2-7]{16}\.eml$/);
    const raw = readFileSync(join(mailDir.path, file!));
    expect(raw.toString("latin1")).toMatch(/\r\nMIME-Version: 1\.0\r\n/);
    const mail = await parseMail(raw);
    expect(mail).toMatchObject({ from: FROM_ADDRESS, fromName: "svc", to: "invitee@example.com", contentType: "multipart/alternative" });
    expect(mail.messageId).toMatch(/^<.+@.+>$/);
    expect(mail.date).toBeInstanceOf(Date);
    expect(mail.text).toContain(`${server.url}/invite?token=${r.body.invite_link}`);
    expect(mail.html).toContain(`href="${server.url}/invite?token=${r.body.invite_link}"`);

    // Mail sent by the background worker (no response waits for it): a password reset.
    const f = await client(server).post("/v1/auth/forgot-password", { email: "owner@captured.example" });
    expect(f.status).toBe(202);
    const files = await emlFiles(mailDir.path, 2);
    const reset = await parseMail(readFileSync(join(mailDir.path, files.find((x) => x !== file)!)));
    expect(reset.to).toBe("owner@captured.example");
    expect(reset.text).toMatch(new RegExp(`${server.url.replace(/\./g, "\\.")}/reset-password\\?token=svcrs_[a-z2-7]+`));
    expect(readdirSync(mailDir.path).filter((x) => !x.endsWith(".eml"))).toEqual([]);
  }, 30_000);
});

describe("null transport", () => {
  test("the invitation answers mail { sent: false } with no error, and the link", async () => {
    await using server = await startServer();
    const admin = await owner(server, "nulled");
    const r = await admin.post("/v1/orgs/nulled/invites", { email: "invitee@example.com", role: "member" });
    expect(r.status).toBe(201);
    expect(r.body.mail).toEqual({ sent: false });
    expect(r.body.invite_link).toMatch(/^svcinv_/);
  }, 30_000);
});

describe("cloudmail transport", () => {
  const CREDS = { accessKeyId: "AKIDSVCTEST0000000001", secretAccessKey: "svc-test-secret-access-key", region: "eu-west-1" };
  let standin: SesStandin;
  beforeAll(() => {
    standin = startSesStandin(CREDS);
  });
  afterAll(() => standin?.stop());

  /** Server environment: the SDK's default chain finds the credentials in the environment. */
  const env = (secret: string) => ({
    SVC_MAIL_TRANSPORT: "cloudmail",
    SVC_MAIL_FROM: FROM,
    SVC_MAIL_CLOUD_REGION: CREDS.region,
    SVC_MAIL_CLOUD_ENDPOINT: standin.url,
    AWS_ACCESS_KEY_ID: CREDS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: secret,
    AWS_SESSION_TOKEN: "",
    AWS_PROFILE: "",
    AWS_CONFIG_FILE: "/nonexistent/aws-config",
    AWS_SHARED_CREDENTIALS_FILE: "/nonexistent/aws-credentials",
    AWS_EC2_METADATA_DISABLED: "true",
  });

  test("an invitation goes out through a SigV4-signed SendEmail call carrying the raw message", async () => {
    await using server = await startServer({ env: env(CREDS.secretAccessKey) });
    const admin = await owner(server, "clouded");
    const r = await admin.post("/v1/orgs/clouded/invites", { email: "invitee@example.com", role: "member" });
    expect(r.status).toBe(201);
    expect(r.body.mail).toEqual({ sent: true });
    const call = await standin.waitFor();
    expect(standin.rejected).toEqual([]);
    expect(call.body.Destination).toEqual({ ToAddresses: ["invitee@example.com"] });
    expect(call.body.FromEmailAddress).toBe(FROM);
    const mail = await parseMail(call.raw!);
    expect(mail).toMatchObject({ from: FROM_ADDRESS, fromName: "svc", to: "invitee@example.com", contentType: "multipart/alternative" });
    expect(mail.text).toContain(`${server.url}/invite?token=${r.body.invite_link}`);
    expect(mail.html).toContain(`href="${server.url}/invite?token=${r.body.invite_link}"`);
  }, 30_000);

  test("a request the API refuses (wrong secret, 403) is reported as mail.error", async () => {
    await using server = await startServer({ env: env("not-the-secret") });
    const admin = await owner(server, "refused");
    const before = standin.calls.length;
    const r = await admin.post("/v1/orgs/refused/invites", { email: "invitee@example.com", role: "member" });
    expect(r.status).toBe(201);
    expect(r.body.mail.sent).toBe(false);
    expect(r.body.mail.error).toMatch(/signature/i);
    expect(standin.rejected.at(-1)).toEqual({ reason: "signature mismatch" });
    expect(standin.calls.length).toBe(before);
  }, 30_000);
});

describe("a bad mail configuration is a boot failure: exit 2, one stderr line naming the variable", () => {
  const rows: [string, Record<string, string>, string][] = [
    ["unknown transport", { SVC_MAIL_TRANSPORT: "pigeon" }, "SVC_MAIL_TRANSPORT"],
    ["capture without a directory", { SVC_MAIL_TRANSPORT: "capture" }, "SVC_MAIL_DIR"],
    ["smtp without a host", { SVC_MAIL_TRANSPORT: "smtp", SVC_MAIL_FROM: FROM }, "SVC_MAIL_SMTP_HOST"],
    ["smtp without a sender", { SVC_MAIL_TRANSPORT: "smtp", SVC_MAIL_SMTP_HOST: "127.0.0.1:25" }, "SVC_MAIL_FROM"],
    [
      "cleartext credentials to a non-loopback relay without the opt-in",
      { SVC_MAIL_TRANSPORT: "smtp", SVC_MAIL_SMTP_HOST: "mail.example.test:25", SVC_MAIL_FROM: FROM, SVC_MAIL_SMTP_USER: "u", SVC_MAIL_SMTP_PASSWORD: "p" },
      "SVC_MAIL_SMTP_",
    ],
    ["cloudmail without a sender", { SVC_MAIL_TRANSPORT: "cloudmail" }, "SVC_MAIL_FROM"],
    [
      "cloudmail with a malformed endpoint",
      { SVC_MAIL_TRANSPORT: "cloudmail", SVC_MAIL_FROM: FROM, SVC_MAIL_CLOUD_ENDPOINT: "ses.local" },
      "SVC_MAIL_CLOUD_ENDPOINT",
    ],
  ];
  test.each(rows)(
    "%s",
    async (_name, env, variable) => {
      using data = tempDir("svc-mail-boot-");
      const r = await runSvc(["serve"], { SVC_DATA_DIR: data.path, SVC_HTTP_ADDR: "127.0.0.1:0", ...env });
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain(variable);
      expect(r.stdout).not.toContain("listening");
    },
    20_000,
  );

  test("with SVC_MAIL_SMTP_ALLOW_CLEARTEXT_AUTH=1 the same settings boot", async () => {
    await using server = await startServer({
      env: {
        SVC_MAIL_TRANSPORT: "smtp",
        SVC_MAIL_SMTP_HOST: "mail.example.test:25",
        SVC_MAIL_FROM: FROM,
        SVC_MAIL_SMTP_USER: "u",
        SVC_MAIL_SMTP_PASSWORD: "p",
        SVC_MAIL_SMTP_ALLOW_CLEARTEXT_AUTH: "1",
      },
    });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  }, 20_000);
});
