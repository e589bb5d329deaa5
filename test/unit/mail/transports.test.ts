// The transports themselves (SPEC §5.7): smtp stays cleartext even when STARTTLS is offered,
// authenticates only when configured and gives up on a silent relay; capture writes whole files;
// the configuration picks the transport and accepts the cloud endpoint override.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../../src/config.ts";
import { createMailTransport } from "../../../src/mail/index.ts";
import { verifyMail } from "../../../src/services/mail/messages.ts";
import { parseMail, startRelay, type Relay } from "../../helpers/mail-endpoints.ts";

const msg = verifyMail({ to: "nia@example.com", name: "Nia", token: "svcv_abc234", baseUrl: "https://git.example.test" });

describe("smtp", () => {
  let relay: Relay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay.close());

  test("cleartext even though the relay offers STARTTLS; From, both parts and the link arrive", async () => {
    const t = createMailTransport({ transport: "smtp", host: "127.0.0.1", port: relay.port, from: "svc@example.test" })!;
    expect(t.name).toBe("smtp");
    await t.send(msg);
    const got = await relay.waitFor((m) => m.to[0] === "nia@example.com" && m.auth === null);
    expect({ secure: got.secure, transmissionType: got.transmissionType, from: got.from }).toEqual({
      secure: false,
      transmissionType: "ESMTP",
      from: "svc@example.test",
    });
    const parsed = await parseMail(got.raw);
    expect(parsed.from).toBe("svc@example.test");
    expect(parsed.contentType).toBe("multipart/alternative");
    expect(parsed.text).toContain("https://git.example.test/verify?token=svcv_abc234");
    expect(parsed.html).toContain(`href="https://git.example.test/verify?token=svcv_abc234"`);
  });

  test("configured credentials are presented (loopback relay)", async () => {
    const t = createMailTransport({
      transport: "smtp",
      host: "127.0.0.1",
      port: relay.port,
      from: "svc@example.test",
      user: "relay-user",
      password: "relay-pass",
    })!;
    await t.send({ ...msg, to: "auth@example.com" });
    const got = await relay.waitFor((m) => m.to[0] === "auth@example.com");
    expect(got.auth).toEqual({ username: "relay-user", password: "relay-pass" });
    expect(got.secure).toBe(false);
  });

  test("a relay that accepts the connection but never greets fails within about 10 s", async () => {
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const t = createMailTransport({ transport: "smtp", host: "127.0.0.1", port: silent.port, from: "svc@example.test" })!;
      const started = Date.now();
      const error = await t.send(msg).then(
        () => null,
        (e: Error) => e,
      );
      expect(error?.message).toMatch(/greeting|timeout/i);
      expect(Date.now() - started).toBeLessThan(11_000);
    } finally {
      silent.stop(true);
    }
  }, 20_000);
});

describe("capture", () => {
  test("one complete, private .eml file per message and no temp files", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "svc-capture-")), "nested", "mail");
    try {
      const t = createMailTransport({ transport: "capture", dir, from: "svc@example.test" })!;
      expect(t.name).toBe("capture");
      await Promise.all([t.send(msg), t.send({ ...msg, to: "second@example.com" })]);
      const files = readdirSync(dir).sort();
      expect(files).toHaveLength(2);
      for (const f of files) {
        expect(f).toMatch(/^\d{13}-\d{9}-[a-z2-7]{16}\.eml$/);
        expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
      }
      const tos = await Promise.all(files.map(async (f) => (await parseMail(readFileSync(join(dir, f)))).to));
      expect(tos.sort()).toEqual(["nia@example.com", "second@example.com"]);
    } finally {
      rmSync(join(dir, "../.."), { recursive: true, force: true });
    }
  });
});

describe("configuration", () => {
  test("the null transport is no transport", () => {
    expect(createMailTransport(loadConfig({}).mail)).toBeNull();
  });

  test("cloudmail takes an endpoint override; a malformed one is refused naming the variable", () => {
    const env = { SVC_MAIL_TRANSPORT: "cloudmail", SVC_MAIL_FROM: "svc@example.test", SVC_MAIL_CLOUD_REGION: "eu-west-1" };
    expect(loadConfig({ ...env, SVC_MAIL_CLOUD_ENDPOINT: "http://127.0.0.1:4566/" }).mail).toEqual({
      transport: "cloudmail",
      region: "eu-west-1",
      from: "svc@example.test",
      endpoint: "http://127.0.0.1:4566",
    });
    expect(loadConfig(env).mail).toEqual({ transport: "cloudmail", region: "eu-west-1", from: "svc@example.test", endpoint: undefined });
    expect(() => loadConfig({ ...env, SVC_MAIL_CLOUD_ENDPOINT: "ses.local" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...env, SVC_MAIL_CLOUD_ENDPOINT: "ses.local" })).toThrow(/^SVC_MAIL_CLOUD_ENDPOINT: /);
    expect(createMailTransport(loadConfig(env).mail)!.name).toBe("cloudmail");
  });
});
