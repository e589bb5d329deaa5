// CI secrets and variables over HTTP (issue 29 part A, DECISIONS §5 CI, plan-29 §2.1), on SQLite
// (the data dir's secrets.key) and on PostgreSQL (SVC_SECRETS_KEY; without it a secret PUT is 503):
// both levels, every refusal, 404 masking for non-admins, audit events, and the value never in
// any answer — every body the test receives is searched for it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { caller, type Person, person } from "../../helpers/api.ts";
import { type PostgresDatabase, postgresDatabase } from "../../helpers/postgres.ts";
import { runSvc, type RunningServer, startServer } from "../../helpers/server.ts";

const VALUE = "s3cr3t-Value-7f1d0c9e";
const OTHER = "another-Secret-b83a21";
const HEX_KEY = "ab".repeat(32);

type Api = ReturnType<typeof caller>;
type Answer = { status: number; body: any };

/** Every answer the test saw: the value must be in none of them. */
function recorder(api: Api, seen: string[]): Api {
  const keep = async (p: Promise<Answer & { headers?: Headers }>) => {
    const r = await p;
    seen.push(JSON.stringify(r.body ?? null));
    return r as never;
  };
  return {
    get: (p, h) => keep(api.get(p, h)),
    post: (p, b, h) => keep(api.post(p, b, h)),
    put: (p, b, h) => keep(api.put(p, b, h)),
    patch: (p, b, h) => keep(api.patch(p, b, h)),
    delete: (p, h) => keep(api.delete(p, h)),
  };
}

function suite(label: string, start: () => Promise<{ server: RunningServer; done(): Promise<void> }>, keyFile: boolean) {
  describe(label, () => {
    let server: RunningServer;
    let done: () => Promise<void>;
    let owner: Person;
    let member: Person;
    let api: Api;
    let writer: Api;
    const seen: string[] = [];

    beforeAll(async () => {
      ({ server, done } = await start());
      owner = await person(server, "acme", "owner@acme.example", "owner");
      member = await person(server, "acme", "member@acme.example", "member");
      api = recorder(caller(server, owner), seen);
      writer = recorder(caller(server, member), seen);
      for (const name of ["app", "lib"]) expect((await api.post("/v1/orgs/acme/repos", { name })).status).toBe(201);
    }, 90_000);
    afterAll(async () => {
      await done?.();
    });

    test("org secrets: create 201, replace 200, names only, limited to repos, delete", async () => {
      const created = await api.put("/v1/orgs/acme/secrets/DEPLOY_TOKEN", { value: VALUE });
      expect(created.status).toBe(201);
      expect(Object.keys(created.body).sort()).toEqual(["name", "repos", "updated_at"]);
      expect(created.body).toMatchObject({ name: "DEPLOY_TOKEN", repos: null });
      const replaced = await api.put("/v1/orgs/acme/secrets/DEPLOY_TOKEN", { value: OTHER, repos: ["lib", "APP"] });
      expect(replaced.status).toBe(200);
      expect(replaced.body.repos).toEqual(["app", "lib"]);
      expect((await api.put("/v1/orgs/acme/secrets/NPM", { value: VALUE })).status).toBe(201);
      const list = await api.get("/v1/orgs/acme/secrets");
      expect(list.status).toBe(200);
      expect(list.body.secrets.map((s: any) => [s.name, s.repos, Object.keys(s).sort()])).toEqual([
        ["DEPLOY_TOKEN", ["app", "lib"], ["name", "repos", "updated_at"]],
        ["NPM", null, ["name", "repos", "updated_at"]],
      ]);
      expect((await api.delete("/v1/orgs/acme/secrets/NPM")).status).toBe(204);
      expect((await api.delete("/v1/orgs/acme/secrets/NPM")).status).toBe(404);
      expect((await api.get("/v1/orgs/acme/secrets")).body.secrets.map((s: any) => s.name)).toEqual(["DEPLOY_TOKEN"]);
    });

    test("every refusal is a 422 that never quotes the value", async () => {
      const cases: [string, unknown, RegExp][] = [
        ["/v1/orgs/acme/secrets/lower_case", { value: VALUE }, /upper case/],
        ["/v1/orgs/acme/secrets/1ABC", { value: VALUE }, /invalid secret name/],
        [`/v1/orgs/acme/secrets/${"A".repeat(101)}`, { value: VALUE }, /at most 100/],
        ["/v1/orgs/acme/secrets/GITHUB_TOKEN", { value: VALUE }, /GITHUB_ or SVC_/],
        ["/v1/orgs/acme/secrets/SVC_X", { value: VALUE }, /GITHUB_ or SVC_/],
        ["/v1/orgs/acme/secrets/EMPTY", { value: "" }, /empty/],
        ["/v1/orgs/acme/secrets/BIG", { value: VALUE + "x".repeat(48 * 1024) }, /larger than 48 KiB/],
        ["/v1/orgs/acme/secrets/NUM", { value: 12345 }, /value as a string/],
        ["/v1/orgs/acme/secrets/RAW", VALUE, /value as a string/],
        ["/v1/orgs/acme/secrets/ARR", [VALUE], /value as a string/],
        ["/v1/orgs/acme/secrets/NOREPOS", { value: VALUE, repos: [] }, /at least one/],
        ["/v1/orgs/acme/secrets/BADREPO", { value: VALUE, repos: ["nope"] }, /no repository named "nope"/],
        ["/v1/orgs/acme/secrets/REPOSTR", { value: VALUE, repos: "app" }, /list of repository names/],
        ["/v1/orgs/acme/repos/app/secrets/WITHREPOS", { value: VALUE, repos: ["app"] }, /organization secrets and variables only/],
        ["/v1/orgs/acme/variables/lower", { value: VALUE }, /upper case/],
      ];
      for (const [path, body, message] of cases) {
        const r = await api.put(path, typeof body === "string" ? JSON.stringify(body) : body);
        expect({ path, status: r.status }).toEqual({ path, status: 422 });
        expect(r.body.error).toMatch(message);
      }
      // The raw JSON string body was sent as JSON text, not as a bare word: the value is inside.
      expect(seen.some((s) => s.includes(VALUE))).toBe(false);
      expect((await api.get("/v1/orgs/acme/secrets")).body.secrets.map((s: any) => s.name)).toEqual(["DEPLOY_TOKEN"]);
    });

    test("non-admins: org secrets are 404, repo secrets 403; writers read variables", async () => {
      expect((await writer.put("/v1/orgs/acme/secrets/X", { value: VALUE })).status).toBe(404);
      expect((await writer.get("/v1/orgs/acme/secrets")).status).toBe(404);
      expect((await writer.delete("/v1/orgs/acme/secrets/DEPLOY_TOKEN")).status).toBe(404);
      expect((await writer.put("/v1/orgs/acme/repos/app/secrets/X", { value: VALUE })).status).toBe(403);
      expect((await writer.get("/v1/orgs/acme/repos/app/secrets")).status).toBe(403);
      expect((await writer.put("/v1/orgs/acme/variables/REGION", { value: "eu" })).status).toBe(404);
      expect((await writer.put("/v1/orgs/acme/repos/app/variables/REGION", { value: "eu" })).status).toBe(403);
      const anon = caller(server);
      expect((await anon.get("/v1/orgs/acme/secrets")).status).toBe(401);
    });

    test("repo secrets and variables: the repo's own, shadowing org ones of the same name", async () => {
      const r = await api.put("/v1/orgs/acme/repos/app/secrets/DEPLOY_TOKEN", { value: VALUE });
      expect(r.status).toBe(201);
      expect(Object.keys(r.body).sort()).toEqual(["name", "updated_at"]);
      expect((await api.get("/v1/orgs/acme/repos/app/secrets")).body).toEqual({ secrets: [{ name: "DEPLOY_TOKEN", updated_at: r.body.updated_at }] });
      expect((await api.get("/v1/orgs/acme/repos/lib/secrets")).body).toEqual({ secrets: [] });

      expect((await api.put("/v1/orgs/acme/variables/REGION", { value: "eu-west-1", repos: ["lib"] })).status).toBe(201);
      expect((await api.put("/v1/orgs/acme/repos/app/variables/REGION", { value: "us-east-2" })).status).toBe(201);
      const orgVars = await writer.get("/v1/orgs/acme/variables");
      expect(orgVars.status).toBe(200);
      expect(orgVars.body.variables.map((v: any) => [v.name, v.value, v.repos])).toEqual([["REGION", "eu-west-1", ["lib"]]]);
      expect((await writer.get("/v1/orgs/acme/variables/REGION")).body).toMatchObject({ name: "REGION", value: "eu-west-1" });
      expect((await writer.get("/v1/orgs/acme/repos/app/variables")).body.variables.map((v: any) => [v.name, v.value])).toEqual([["REGION", "us-east-2"]]);
      expect((await writer.get("/v1/orgs/acme/repos/app/variables/REGION")).body.value).toBe("us-east-2");
      expect((await writer.get("/v1/orgs/acme/repos/app/variables/NOPE")).status).toBe(404);
      expect((await api.delete("/v1/orgs/acme/repos/app/variables/REGION")).status).toBe(204);
      expect((await api.delete("/v1/orgs/acme/repos/app/secrets/DEPLOY_TOKEN")).status).toBe(204);
      expect((await api.delete("/v1/orgs/acme/repos/app/secrets/DEPLOY_TOKEN")).status).toBe(404);
    });

    test("audit events name every secret change, never its value", async () => {
      const r = await api.get("/v1/orgs/acme/audit?limit=100");
      expect(r.status).toBe(200);
      const events = (r.body.events ?? r.body.items ?? []) as any[];
      const secretEvents = events.filter((e) => String(e.action).startsWith("secret.")).map((e) => [e.action, e.target]);
      expect(secretEvents.sort()).toEqual(
        [
          ["secret.created", "DEPLOY_TOKEN"],
          ["secret.updated", "DEPLOY_TOKEN"],
          ["secret.created", "NPM"],
          ["secret.deleted", "NPM"],
          ["secret.created", "app/DEPLOY_TOKEN"],
          ["secret.deleted", "app/DEPLOY_TOKEN"],
        ].sort(),
      );
      expect(events.some((e) => e.action === "variable.created")).toBe(true);
      expect(JSON.stringify(r.body)).not.toContain(VALUE);
      expect(JSON.stringify(r.body)).not.toContain(OTHER);
    });

    test("no answer, and no line the server printed, held a value", () => {
      for (const s of seen) {
        expect(s).not.toContain(VALUE);
        expect(s).not.toContain(OTHER);
      }
      expect(server.stderr()).not.toContain(VALUE);
      expect(server.stderr()).not.toContain(OTHER);
    });

    if (keyFile)
      test("the key file: created once in the data dir, mode 0600, not the value's holder", async () => {
        const path = join(server.dataDir, "secrets.key");
        expect(statSync(path).mode & 0o777).toBe(0o600);
        const before = readFileSync(path, "utf8");
        expect((await api.put("/v1/orgs/acme/secrets/ROTATE", { value: VALUE })).status).toBe(201);
        expect(readFileSync(path, "utf8")).toBe(before);
        expect(before).not.toContain(VALUE);
        // `svc backup` carries it (README "Backup"): a restore without it would lose every secret.
        const dir = mkdtempSync(join(tmpdir(), "svc-secrets-backup-"));
        try {
          const b = await server.cli(["backup", "--to", join(dir, "b")]);
          expect(b.code).toBe(0);
          const manifest = JSON.parse(readFileSync(join(dir, "b", "manifest.json"), "utf8"));
          expect(manifest.data_files.map((f: any) => f.key)).toContain("data/secrets.key");
          expect(readFileSync(join(dir, "b", "data", "secrets.key"), "utf8")).toBe(before);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
  });
}

suite(
  "SQLite (the data dir's key file)",
  async () => {
    const server = await startServer();
    return { server, done: () => server[Symbol.asyncDispose]() };
  },
  true,
);

suite(
  "PostgreSQL (SVC_SECRETS_KEY)",
  async () => {
    const db: PostgresDatabase = await postgresDatabase();
    const server = await startServer({ env: { SVC_DATABASE_URL: db.url, SVC_SECRETS_KEY: HEX_KEY } });
    return {
      server,
      done: async () => {
        await server[Symbol.asyncDispose]();
        await db.drop();
      },
    };
  },
  false,
);

describe("PostgreSQL without SVC_SECRETS_KEY", () => {
  let db: PostgresDatabase;
  let server: RunningServer;
  beforeAll(async () => {
    db = await postgresDatabase();
    server = await startServer({ env: { SVC_DATABASE_URL: db.url } });
  }, 90_000);
  afterAll(async () => {
    await server?.[Symbol.asyncDispose]();
    await db?.drop();
  });
  test("a secret PUT is 503 naming the setting; variables still work", async () => {
    const owner = await person(server, "acme", "owner@acme.example", "owner");
    const api = caller(server, owner);
    const r = await api.put("/v1/orgs/acme/secrets/DEPLOY_TOKEN", { value: VALUE });
    expect(r.status).toBe(503);
    expect(r.body.error).toBe("secrets need SVC_SECRETS_KEY on a several-node installation");
    expect((await api.put("/v1/orgs/acme/variables/REGION", { value: "eu" })).status).toBe(201);
    expect((await api.get("/v1/orgs/acme/secrets")).body).toEqual({ secrets: [] });
  });
});

test("a malformed SVC_SECRETS_KEY stops the start (exit 2) without quoting it", async () => {
  const bad = "not-a-key-0123456789";
  const r = await runSvc(["serve"], { SVC_DATA_DIR: "/nonexistent-svc-data", SVC_SECRETS_KEY: bad });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("SVC_SECRETS_KEY");
  expect(r.stderr + r.stdout).not.toContain(bad);
});
