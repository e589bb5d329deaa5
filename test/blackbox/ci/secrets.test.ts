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
import { runSvc, type RunningServer, startServer, serverDb } from "../../helpers/server.ts";
import { writeFileSync } from "node:fs";
import {
  claimJob,
  createRepos,
  dbRows,
  finishedRun,
  logOf,
  pushWorkflow,
  registerMachine,
  registrationToken,
  runnerHome,
  runOf,
  startMachine,
  until,
} from "./helpers.ts";

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
      await createRepos(api, ["app", "lib"]);
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

    if (keyFile) logCases(() => ({ server, owner, api, seen }));

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

/** A value whose derived forms (base64, URL-encoded) differ from it. */
const LOG_VALUE = "Lg-s3cr3t/Value+7f1d 0c9e&ok";

/** Writes to the server's SQLite database (a state no route makes yet: an untrusted run). */
function dbWrite(server: RunningServer, query: string, ...params: (string | number)[]): void {
  const db = serverDb(server);
  try {
    db.exec("PRAGMA busy_timeout = 10000");
    db.query(query).run(...params);
  } finally {
    db.close();
  }
}

/** The events of a finished job's live log from `from`: the log texts and the last id. */
async function liveLog(server: RunningServer, who: Person, path: string, from: number): Promise<{ text: string; next: number }> {
  const res = await fetch(`${server.url}${path}/events?from=${from}`, { headers: { cookie: who.cookie } });
  expect(res.status).toBe(200);
  const body = await res.text();
  let text = "";
  let next = from;
  for (const block of body.split("\n\n")) {
    const id = block.match(/^id: (\d+)$/m);
    const data = block.match(/^event: log\ndata: (.*)$/m);
    if (data) text += JSON.parse(data[1]!).text;
    if (id) next = Number(id[1]);
  }
  return { text, next };
}

/**
 * Secrets in job logs (plan-29 §5 A, part D): the agent masks what a step prints (the value, its
 * base64 and URL forms, a value split across two uploads), the server masks each append again
 * (a chunk it changed is served whole), outputs holding a secret are dropped, and an untrusted
 * (fork) run's description carries no secrets.
 */
function logCases(get: () => { server: RunningServer; owner: Person; api: Api; seen: string[] }) {
  const home = runnerHome();
  afterAll(() => home.cleanup());

  test("a run printing a secret, its base64 and URL forms, and a secret split across two uploads shows *** only", async () => {
    const { server, owner, api, seen } = get();
    expect((await api.post("/v1/orgs/acme/repos", { name: "logs" })).status).toBe(201);
    expect((await api.put("/v1/orgs/acme/repos/logs/secrets/LOG_SECRET", { value: LOG_VALUE })).status).toBe(201);
    await using agent = await startMachine(server, api, home.dir, { name: "masker", labels: ["masking"] });
    const marker = join(home.dir, "go-on");
    const wf = `on: push
jobs:
  leak:
    runs-on: [self-hosted, masking]
    env:
      S: \${{ secrets.LOG_SECRET }}
    outputs:
      leak: \${{ steps.out.outputs.v }}
      fine: ok
    steps:
      - id: out
        run: echo "v=$S" >> "$GITHUB_OUTPUT"
      - name: print
        run: |
          echo "plain=$S"
          printf '%s' "$S" | base64 | sed 's/^/b64=/'
          echo "url=${encodeURIComponent(LOG_VALUE)}"
          echo "expr=\${{ secrets.LOG_SECRET }}"
      - name: split
        run: |
          printf 'half=%s' "$(printf '%s' "$S" | cut -c1-12)"
          while [ ! -f ${marker} ]; do sleep 0.1; done
          printf '%s|end\\n' "$(printf '%s' "$S" | cut -c13-)"
`;
    const sha = await pushWorkflow(api, "logs", wf);
    const running = await until("the running job", async () => {
      const run = (await api.get("/v1/orgs/acme/repos/logs/runs")).body.runs.find((r: any) => r.commit === sha);
      if (run && run.state !== "queued" && run.state !== "running") throw new Error(`the run ended: ${JSON.stringify(run)}\n${agent.stderr()}`);
      return run?.jobs[0]?.state === "running" ? run : null;
    });
    // The first half is held back by the agent (it may start the secret): only "half=" reaches the server.
    await until("the first half's line in the log", async () => (await logOf(server, owner, "logs", running.id, running.jobs[0].id)).includes("half="));
    const early = await logOf(server, owner, "logs", running.id, running.jobs[0].id);
    expect(early).not.toContain(LOG_VALUE.slice(0, 12));
    writeFileSync(marker, "");
    const run = await finishedRun(api, "logs", sha, 60_000);
    expect(run.state).toBe("success");
    const log = await logOf(server, owner, "logs", run.id, run.jobs[0].id);
    expect(log).toContain("plain=***\n");
    expect(log).toMatch(/b64=\*\*\*/);
    expect(log).toContain("url=***\n");
    expect(log).toContain("expr=***\n");
    expect(log).toContain("half=***|end\n");
    expect(log).toContain("##[warning] output leak skipped: it contains a secret\n");
    const [row] = dbRows<{ outputs: string }>(server, "SELECT outputs FROM workflow_jobs WHERE id = ?", run.jobs[0].id);
    expect(JSON.parse(row!.outputs)).toEqual({ fine: "ok" });
    for (const form of [
      LOG_VALUE,
      Buffer.from(LOG_VALUE).toString("base64").slice(0, 36),
      encodeURIComponent(LOG_VALUE),
      LOG_VALUE.slice(0, 12),
      LOG_VALUE.slice(12),
    ])
      expect(log).not.toContain(form);
    // No API answer, page or error holds it.
    const page = await (await fetch(`${server.url}/acme/logs/runs/${run.id}/jobs/${run.jobs[0].id}`, { headers: { cookie: owner.cookie } })).text();
    const runPage = await (await fetch(`${server.url}/acme/logs/runs/${run.id}`, { headers: { cookie: owner.cookie } })).text();
    for (const body of [page, runPage, JSON.stringify((await api.get(`/v1/orgs/acme/repos/logs/runs/${run.id}`)).body), ...seen])
      expect(body).not.toContain(LOG_VALUE);
    expect(server.stderr()).not.toContain(LOG_VALUE);
  }, 120_000);

  test("the server masks each append again (a changed chunk is served whole), drops an output holding a secret, and an untrusted run gets no secrets", async () => {
    const { server, owner, api } = get();
    await api.post("/v1/orgs/acme/repos", { name: "logs" }); // 409 when the case above made it
    expect([200, 201]).toContain((await api.put("/v1/orgs/acme/repos/logs/secrets/LOG_SECRET", { value: LOG_VALUE })).status);
    const m = await registerMachine(server, await registrationToken(api), home.dir, { name: "raw", labels: ["raw-calls"] });
    const wf = 'on: push\njobs:\n  raw:\n    runs-on: [self-hosted, raw-calls]\n    steps:\n      - id: s\n        run: echo "${{ secrets.LOG_SECRET }}"\n';
    const sha = await pushWorkflow(api, "logs", wf);
    const claimed = async () => {
      const r = await claimJob(server, m.credential);
      return r.status === 200 ? (r.body as { job_id: string; token: string }) : null;
    };
    const claim = await until("a claimed job", claimed);
    const jobUrl = `${server.url}/v1/runner/jobs/${claim.job_id}`;
    const runnerCall = async (path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const r = await fetch(`${jobUrl}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: { authorization: `Bearer ${claim.token}`, "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      return { status: r.status, body: text ? JSON.parse(text) : null };
    };
    const runId = (await runOf(api, "logs", sha)).id;
    // An untrusted run (a change from a fork: CONTROL sets runs.trusted = 0) is described without secrets.
    dbWrite(server, "UPDATE runs SET trusted = 0 WHERE id = ?", runId);
    const untrusted = await runnerCall("", undefined, { "x-svc-runner-format": "2" });
    expect(untrusted.status).toBe(200);
    expect(untrusted.body).toMatchObject({ format: 2, secrets: {} });
    expect(JSON.stringify(untrusted.body)).not.toContain(LOG_VALUE);
    dbWrite(server, "UPDATE runs SET trusted = 1 WHERE id = ?", runId);
    const trusted = await runnerCall("", undefined, { "x-svc-runner-format": "2" });
    expect(trusted.body.secrets).toEqual({ LOG_SECRET: LOG_VALUE });
    // An agent that masked nothing: the server's pass stores "***"; offsets stay the agent's bytes.
    const first = `before ${LOG_VALUE} after\n`;
    const size = Buffer.byteLength(first);
    expect(await runnerCall("/logs", { offset: 0, text: first })).toEqual({ status: 200, body: { offset: size } });
    expect(await runnerCall("/logs", { offset: 0, text: first })).toEqual({ status: 200, body: { offset: size } });
    expect(await runnerCall("/logs", { offset: size, text: "tail\n" })).toEqual({ status: 200, body: { offset: size + 5 } });
    expect((await runnerCall("/complete", { verdict: "success", outputs: { leak: `x${LOG_VALUE}x`, fine: "ok" } })).status).toBe(204);
    const jobId = claim.job_id;
    const log = await logOf(server, owner, "logs", runId, jobId);
    expect(log).toBe("before *** after\ntail\n");
    expect(dbRows<{ masked: number }>(server, "SELECT masked FROM job_log_chunks WHERE job_id = ? ORDER BY offset", jobId).map((r) => r.masked)).toEqual([
      1, 0,
    ]);
    const [row] = dbRows<{ outputs: string }>(server, "SELECT outputs FROM workflow_jobs WHERE id = ?", jobId);
    expect(JSON.parse(row!.outputs)).toEqual({ fine: "ok" });
    // The live log: a masked chunk whole (also from inside it), resuming in the agent's bytes.
    const path = `/acme/logs/runs/${runId}/jobs/${jobId}`;
    expect(await liveLog(server, owner, path, 0)).toEqual({ text: "before *** after\ntail\n", next: size + 5 });
    expect(await liveLog(server, owner, path, 3)).toEqual({ text: "before *** after\ntail\n", next: size + 5 });
    expect(await liveLog(server, owner, path, size)).toEqual({ text: "tail\n", next: size + 5 });
    // An agent that does not say it runs format 2 gets a 409 for a v2 job, which fails saying to upgrade.
    const sha2 = await pushWorkflow(api, "logs", wf.replace("id: s", "id: t"));
    const claim2 = await until("a claimed job", claimed);
    const old = await fetch(`${server.url}/v1/runner/jobs/${claim2.job_id}`, { headers: { authorization: `Bearer ${claim2.token}` } });
    expect(old.status).toBe(409);
    expect(((await old.json()) as { error: string }).error).toStartWith("upgrade the runner");
    const failed = await finishedRun(api, "logs", sha2, 30_000);
    expect(failed.jobs[0]).toMatchObject({ state: "failure" });
    expect(failed.jobs[0].error).toStartWith("upgrade the runner");
    // fsck knows a masked chunk holds fewer bytes than the runner sent (backup too: the key-file case below).
    const fsck = await server.cli(["fsck"]);
    expect(fsck.stdout + fsck.stderr).not.toContain("recorded");
  }, 120_000);
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
