// The `svc` command line and its operating contract (DECISIONS §0; SPEC §5.7 last paragraph):
// help, version, boot failures (exit 2, one line naming the variable), user-create beside a
// running server, SIGTERM, migrate, and the compiled binary run from another directory.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pkg from "../../../package.json" with { type: "json" };
import { BUN, ROOT, cleanEnv, client, createUser, login, runSvc, startServer, tempDir, type RunningServer } from "../../helpers/server.ts";

const stripAnsi = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");
/** The non-empty lines of a text. */
const lines = (s: string) => s.split("\n").filter((l) => l.trim() !== "");

describe("help and version", () => {
  test("svc --help lists the commands and exits 0", async () => {
    const r = await runSvc(["--help"], {});
    expect(r.code).toBe(0);
    const out = stripAnsi(r.stdout + r.stderr);
    for (const cmd of ["serve", "user-create", "migrate", "version"]) expect(out).toContain(cmd);
  }, 20_000);

  test("svc serve --help describes serve and exits 0 without serving", async () => {
    const r = await runSvc(["serve", "--help"], {});
    expect(r.code).toBe(0);
    const out = stripAnsi(r.stdout + r.stderr);
    expect(out).toContain("serve");
    expect(out).not.toContain("listening");
  }, 20_000);

  test("svc user-create --help names its options", async () => {
    const r = await runSvc(["user-create", "--help"], {});
    expect(r.code).toBe(0);
    const out = stripAnsi(r.stdout + r.stderr);
    for (const opt of ["--org", "--email", "--name", "--password", "--role", "--handle"]) expect(out).toContain(opt);
  }, 20_000);

  test("svc version prints the package version", async () => {
    const r = await runSvc(["version"], {});
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`svc ${pkg.version}`);
  }, 20_000);
});

describe("a bad configuration is a boot failure: exit 2, one stderr line naming the variable", () => {
  let data: ReturnType<typeof tempDir>;
  beforeAll(() => {
    data = tempDir("svc-cli-bad-");
  });
  afterAll(() => data[Symbol.dispose]());
  const rows: [string, Record<string, string>, string, string[]][] = [
    ["unknown variable", { SVC_FOO: "1" }, "SVC_FOO", ["serve"]],
    ["malformed listen address", { SVC_HTTP_ADDR: "nonsense" }, "SVC_HTTP_ADDR", ["serve"]],
    ["s3 without an endpoint", { SVC_STORAGE: "s3" }, "SVC_S3_ENDPOINT", ["serve"]],
    ["unknown storage", { SVC_STORAGE: "tape" }, "SVC_STORAGE", ["serve"]],
    ["unknown mail transport", { SVC_MAIL_TRANSPORT: "pigeon" }, "SVC_MAIL_TRANSPORT", ["serve"]],
    ["bad log level", { SVC_LOG: "shout" }, "SVC_LOG", ["serve"]],
    ["unknown variable for migrate", { SVC_FOO: "1" }, "SVC_FOO", ["migrate"]],
    [
      "unknown variable for user-create",
      { SVC_FOO: "1" },
      "SVC_FOO",
      ["user-create", "--org", "x", "--email", "x@example.com", "--name", "X", "--password", "long enough password"],
    ],
  ];
  test.each(rows)(
    "%s",
    async (_name, env, variable, args) => {
      const r = await runSvc(args, { SVC_DATA_DIR: data.path, SVC_HTTP_ADDR: "127.0.0.1:0", ...env });
      expect(r.code).toBe(2);
      expect(lines(r.stderr)).toHaveLength(1);
      expect(r.stderr).toContain(variable);
      expect(r.stdout).not.toContain("listening");
    },
    20_000,
  );

  test("--addr overrides SVC_HTTP_ADDR and is validated the same way", async () => {
    const r = await runSvc(["serve", "--addr", "nonsense"], { SVC_DATA_DIR: data.path });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toHaveLength(1);
  }, 20_000);
});

describe("serve, user-create and migrate on one data dir", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  }, 30_000);
  afterAll(async () => {
    await server?.[Symbol.asyncDispose]();
  });

  test("serve prints `listening http=<url> ssh=off` and answers on that URL", async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.ssh).toBeNull();
    const r = await fetch(`${server.url}/v1/auth/me`);
    expect(r.status).toBe(401);
  });

  test("user-create prints the user as JSON with a handle while the server runs; login then works", async () => {
    const r = await server.cli([
      "user-create",
      "--org",
      "cli-co",
      "--email",
      "grace.hopper@example.com",
      "--name",
      "Grace Hopper",
      "--password",
      "a long enough password",
      "--role",
      "admin",
    ]);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toHaveLength(1);
    const user = JSON.parse(r.stdout);
    expect(typeof user.id).toBe("string");
    expect(user.email).toBe("grace.hopper@example.com");
    // Derived from the local part, shaped like any namespace name (DECISIONS §0, §1).
    expect(user.handle).toMatch(/^[a-z0-9](?:-?[a-z0-9])*$/);
    expect(user.handle).toContain("grace");
    const cookie = await login(server, "grace.hopper@example.com", "a long enough password");
    const me = await client(server, { cookie }).get("/v1/auth/me");
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: user.id, handle: user.handle, name: "Grace Hopper" });
    expect(me.body.orgs).toContainEqual({ id: expect.any(String), name: "cli-co", role: "admin" });
  }, 20_000);

  test("user-create adds people to an existing org, with an explicit handle", async () => {
    const u = await createUser(server, { org: "cli-co", email: "kay@example.com", role: "viewer", handle: "kay-j" });
    expect(u.handle).toBe("kay-j");
    const cookie = await login(server, u.email, u.password);
    const me = await client(server, { cookie }).get("/v1/auth/me");
    expect(me.body.orgs).toContainEqual({ id: expect.any(String), name: "cli-co", role: "viewer" });
  }, 20_000);

  test("derived handles do not collide", async () => {
    const a = await createUser(server, { org: "cli-co", email: "sam@one.example", role: "member" });
    const b = await createUser(server, { org: "cli-co", email: "sam@two.example", role: "member" });
    expect(a.handle).not.toBe(b.handle);
  }, 20_000);

  test("the derived handle is free even when the local part names the org being created", async () => {
    const u = await createUser(server, { org: "quinn", email: "quinn@example.com" });
    expect(u.handle).not.toBe("quinn");
    expect(u.handle).toMatch(/^[a-z0-9](?:-?[a-z0-9])*$/);
    const cookie = await login(server, u.email, u.password);
    const me = await client(server, { cookie }).get("/v1/auth/me");
    expect(me.body.orgs).toContainEqual({ id: expect.any(String), name: "quinn", role: "owner" });
  }, 20_000);

  test("user-create refuses a duplicate address or a short password with a non-zero exit and a message", async () => {
    const dup = await server.cli([
      "user-create",
      "--org",
      "cli-co",
      "--email",
      "grace.hopper@example.com",
      "--name",
      "G",
      "--password",
      "a long enough password",
    ]);
    expect(dup.code).not.toBe(0);
    expect(dup.stderr.trim().length).toBeGreaterThan(0);
    const short = await server.cli(["user-create", "--org", "cli-co", "--email", "short@example.com", "--name", "S", "--password", "short"]);
    expect(short.code).not.toBe(0);
    expect(short.stderr.trim().length).toBeGreaterThan(0);
  }, 20_000);

  test("migrate on a migrated data dir prints up to date", async () => {
    const r = await server.cli(["migrate"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("up to date");
  }, 20_000);

  test("migrate on an empty data dir applies, then is up to date", async () => {
    using data = tempDir("svc-cli-migrate-");
    const first = await runSvc(["migrate"], { SVC_DATA_DIR: data.path });
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).not.toBe("up to date");
    expect(existsSync(join(data.path, "svc.db"))).toBe(true);
    const second = await runSvc(["migrate"], { SVC_DATA_DIR: data.path });
    expect(second.stdout.trim()).toBe("up to date");
  }, 20_000);
});

describe("signals", () => {
  test("SIGTERM makes serve exit 0", async () => {
    await using server = await startServer();
    expect((await fetch(`${server.url}/v1/auth/me`)).status).toBe(401);
    expect(await server.stop()).toBe(0);
  }, 20_000);

  test("SIGINT makes serve exit 0", async () => {
    await using server = await startServer();
    expect((await fetch(`${server.url}/v1/auth/me`)).status).toBe(401);
    server.proc.kill("SIGINT");
    expect(await server.proc.exited).toBe(0);
  }, 20_000);

  test("SIGTERM the moment `listening` is printed still exits 0 (handlers are in place before the line)", async () => {
    for (let i = 0; i < 2; i++) {
      await using server = await startServer();
      expect(await server.stop()).toBe(0);
    }
  }, 30_000);
});

/** Waits for the `listening` line of a spawned server; returns the URL. */
async function listeningUrl(proc: ReturnType<typeof Bun.spawn>): Promise<string> {
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`exited before listening: ${out}`);
    out += new TextDecoder().decode(value);
    const m = /listening http=(\S+) ssh=(\S+)/.exec(out);
    if (m) {
      reader.releaseLock();
      return m[1]!;
    }
  }
}

describe("the compiled binary (DECISIONS §0: `bun run build` → dist/svc)", () => {
  const bin = join(ROOT, "dist/svc");
  const env = { ...cleanEnv(), PATH: `${dirname(BUN)}:${process.env.PATH ?? ""}` };

  test("builds, and runs from another working directory", async () => {
    const build = Bun.spawn([BUN, "run", "build"], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
    const [buildOut, buildErr, buildCode] = await Promise.all([new Response(build.stdout).text(), new Response(build.stderr).text(), build.exited]);
    expect({ code: buildCode, out: buildCode === 0 ? "" : buildOut + buildErr }).toEqual({ code: 0, out: "" });
    expect(existsSync(bin)).toBe(true);

    const cwd = mkdtempSync(join(tmpdir(), "svc-bin-cwd-"));
    try {
      const version = Bun.spawn([bin, "version"], { cwd, env, stdout: "pipe", stderr: "pipe" });
      const [vOut, vCode] = await Promise.all([new Response(version.stdout).text(), version.exited]);
      expect(vCode).toBe(0);
      expect(vOut.trim()).toBe(`svc ${pkg.version}`);

      // Default data dir is ./data relative to the working directory; migrations are embedded.
      const serve = Bun.spawn([bin, "serve"], { cwd, env: { ...env, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "warn" }, stdout: "pipe", stderr: "pipe" });
      try {
        const url = await listeningUrl(serve);
        expect((await fetch(`${url}/v1/auth/me`)).status).toBe(401);
        expect((await fetch(`${url}/v1/openapi.json`)).status).toBe(200);
        expect(existsSync(join(cwd, "data", "svc.db"))).toBe(true);
      } finally {
        serve.kill("SIGTERM");
      }
      expect(await serve.exited).toBe(0);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 60_000);
});
