// Every route of SPEC §4.1 with its statuses, the per-job calls of DECISIONS §3, and the audit
// rows of SPEC §6.3, driven over HTTP against the real server (raw calls stand in for machines).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, expectError, person, type Person } from "../../helpers/api.ts";
import { clone, gitSandbox, repoUrl, type GitSandbox } from "../../helpers/git.ts";
import { client, mintToken, type RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, claimJob, commitFiles, dbRows, registerRaw, registrationToken, startCiServer, waitForRun } from "./helpers.ts";

let ci: CiServer;
let server: RunningServer;
let owner: Person;
let api: Api;
let admin: ReturnType<typeof caller>;
let member: ReturnType<typeof caller>;
let viewer: ReturnType<typeof caller>;
let outsider: ReturnType<typeof caller>;
let anon: ReturnType<typeof caller>;
let g: GitSandbox;

beforeAll(async () => {
  ci = await startCiServer({
    env: { SVC_RUNNER_CLAIM_WAIT_MS: "800" },
    repos: [
      ["api", false],
      ["site", true],
      ["web", false],
    ],
  });
  ({ server, owner, api } = ci);
  admin = caller(server, await person(server, "acme", "admin@acme.example", "admin"));
  member = caller(server, await person(server, "acme", "member@acme.example", "member"));
  viewer = caller(server, await person(server, "acme", "viewer@acme.example", "viewer"));
  outsider = caller(server, await person(server, "rival", "o@rival.example", "owner"));
  anon = caller(server);
  g = gitSandbox();
});

afterAll(async () => {
  await ci?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
});

const audit = (action: string) =>
  dbRows<{ action: string; actor_kind: string; target: string; data: string }>(
    server,
    "SELECT action, actor_kind, target, data FROM audit_events WHERE action = ? ORDER BY created_at",
    action,
  );

/** A machine registered with a raw call; answers its credential and id. */
const raw = (name: string, labels: string[] = [], group?: string) => registerRaw(server, api, name, labels, group);
const claim = (credential: string) => claimJob(server, credential);

describe("runner policy", () => {
  test("GET answers the default policy to any member; 401 anonymous, 404 outsiders", async () => {
    expect(await viewer.get("/v1/orgs/acme/runner-policy")).toMatchObject({
      status: 200,
      body: { hosted: "allowed", self_hosted: "all", self_hosted_repos: [] },
    });
    expectError(await anon.get("/v1/orgs/acme/runner-policy"), 401);
    expectError(await outsider.get("/v1/orgs/acme/runner-policy"), 404);
    expectError(await viewer.get("/v1/orgs/nosuch/runner-policy"), 404);
  });

  test("PATCH changes only the keys sent; repos replaced wholesale, sorted; [] clears; 404 to non-admins; 422 bad values", async () => {
    expectError(await member.patch("/v1/orgs/acme/runner-policy", { hosted: "disabled" }), 404);
    expectError(await outsider.patch("/v1/orgs/acme/runner-policy", { hosted: "disabled" }), 404);
    expectError(await anon.patch("/v1/orgs/acme/runner-policy", { hosted: "disabled" }), 401);
    let r = await admin.patch("/v1/orgs/acme/runner-policy", { self_hosted: "selected", self_hosted_repos: ["web", "API"] });
    expect(r).toMatchObject({ status: 200, body: { hosted: "allowed", self_hosted: "selected", self_hosted_repos: ["api", "web"] } });
    r = await admin.patch("/v1/orgs/acme/runner-policy", { hosted: "disabled" });
    expect(r.body).toEqual({ hosted: "disabled", self_hosted: "selected", self_hosted_repos: ["api", "web"] });
    expectError(await admin.patch("/v1/orgs/acme/runner-policy", { hosted: "sometimes" }), 422);
    expectError(await admin.patch("/v1/orgs/acme/runner-policy", { self_hosted: "some" }), 422);
    expectError(await admin.patch("/v1/orgs/acme/runner-policy", { self_hosted_repos: ["api", "ghost"] }), 422, /ghost/);
    // A refused PATCH changed nothing.
    expect((await viewer.get("/v1/orgs/acme/runner-policy")).body).toEqual({ hosted: "disabled", self_hosted: "selected", self_hosted_repos: ["api", "web"] });
    r = await admin.patch("/v1/orgs/acme/runner-policy", { hosted: "allowed", self_hosted: "all", self_hosted_repos: [] });
    expect(r.body).toEqual({ hosted: "allowed", self_hosted: "all", self_hosted_repos: [] });
    const rows = audit("runner_policy.updated");
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatchObject({ actor_kind: "user", target: "acme" });
    expect(JSON.parse(rows[2]!.data)).toEqual({ hosted: "allowed", self_hosted: "all", self_hosted_repos: [] });
  });
});

describe("runner groups", () => {
  test("the list is never empty: the default group is created lazily", async () => {
    const r = await viewer.get("/v1/orgs/acme/runner-groups");
    expect(r.status).toBe(200);
    expect(r.body.groups).toHaveLength(1);
    expect(r.body.groups[0]).toMatchObject({ name: "default", repo_access: "all", allow_public: false, is_default: true, repos: [], runners: 0 });
    expectError(await anon.get("/v1/orgs/acme/runner-groups"), 401);
    expectError(await outsider.get("/v1/orgs/acme/runner-groups"), 404);
  });

  test("create, patch, delete with every refusal", async () => {
    expectError(await member.post("/v1/orgs/acme/runner-groups", { name: "gpu" }), 404);
    const c = await admin.post("/v1/orgs/acme/runner-groups", { name: "gpu", repo_access: "selected", repos: ["web", "api"], allow_public: true });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ name: "gpu", repo_access: "selected", allow_public: true, is_default: false, repos: ["api", "web"], runners: 0 });
    expect(typeof c.body.created_at).toBe("number");
    expectError(await admin.post("/v1/orgs/acme/runner-groups", { name: "GPU" }), 409);
    expectError(await admin.post("/v1/orgs/acme/runner-groups", { name: "default" }), 409);
    expectError(await admin.post("/v1/orgs/acme/runner-groups", { name: "bad/name" }), 422);
    expectError(await admin.post("/v1/orgs/acme/runner-groups", { name: "" }), 422);
    expectError(await admin.post("/v1/orgs/acme/runner-groups", { name: "x", repo_access: "some" }), 422);
    expectError(await admin.post("/v1/orgs/acme/runner-groups", { name: "x", repo_access: "selected", repos: ["ghost"] }), 422, /ghost/);
    const other = await admin.post("/v1/orgs/acme/runner-groups", { name: "other" });
    expect(other.body).toMatchObject({ repo_access: "all", allow_public: false, repos: [] });

    const id = c.body.id;
    let p = await admin.patch(`/v1/orgs/acme/runner-groups/${id}`, { name: "gpus", repos: ["site"] });
    expect(p).toMatchObject({ status: 200, body: { id, name: "gpus", repo_access: "selected", repos: ["site"], allow_public: true } });
    p = await admin.patch(`/v1/orgs/acme/runner-groups/${id}`, { repo_access: "all" });
    expect(p.body).toMatchObject({ repo_access: "all", repos: [] });
    expectError(await admin.patch(`/v1/orgs/acme/runner-groups/${id}`, { name: "other" }), 409);
    expectError(await admin.patch(`/v1/orgs/acme/runner-groups/${id}`, { repo_access: "none" }), 422);
    expectError(await admin.patch(`/v1/orgs/acme/runner-groups/${id}`, { repos: ["ghost"] }), 422);
    expectError(await member.patch(`/v1/orgs/acme/runner-groups/${id}`, { name: "x" }), 404);
    expectError(await admin.patch("/v1/orgs/acme/runner-groups/nosuchgroup00000", { name: "x" }), 404);
    const def = (await viewer.get("/v1/orgs/acme/runner-groups")).body.groups.find((x: any) => x.is_default);
    expectError(await admin.patch(`/v1/orgs/acme/runner-groups/${def.id}`, { name: "main" }), 422);
    expect((await admin.patch(`/v1/orgs/acme/runner-groups/${def.id}`, { allow_public: true })).body).toMatchObject({ name: "default", allow_public: true });
    await admin.patch(`/v1/orgs/acme/runner-groups/${def.id}`, { allow_public: false });
    expectError(await admin.delete(`/v1/orgs/acme/runner-groups/${def.id}`), 422);

    // Deleting a group moves its machines to the default group and kills its registration tokens.
    const m = await raw("in-gpus", [], "gpus");
    const unused = await registrationToken(api, "acme", "gpus");
    expectError(await member.delete(`/v1/orgs/acme/runner-groups/${id}`), 404);
    const d = await admin.delete(`/v1/orgs/acme/runner-groups/${id}`);
    expect(d.status).toBe(204);
    expectError(await admin.delete(`/v1/orgs/acme/runner-groups/${id}`), 404);
    const runner = (await viewer.get("/v1/orgs/acme/runners")).body.runners.find((r: any) => r.id === m.id);
    expect(runner.group).toEqual({ id: def.id, name: "default" });
    expectError(await client(server, { token: unused }).post("/v1/runners/register", { name: "late", os: "linux", arch: "x64" }), 401);
    expect(audit("runner_group.created").map((r) => r.target)).toEqual(["gpu", "other"]);
    expect(audit("runner_group.updated").length).toBeGreaterThanOrEqual(3);
    expect(audit("runner_group.deleted").map((r) => r.target)).toEqual(["gpus"]);
  });
});

describe("registration", () => {
  test("a registration token: svcg_, one hour, the group, the full command line", async () => {
    const before = Date.now();
    const r = await admin.post("/v1/orgs/acme/runners/registration-token", {});
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(["command", "expires_at", "group", "token"]);
    expect(r.body.token).toMatch(/^svcg_[a-z2-7]{16}_[a-z2-7]{32}$/);
    expect(r.body.group).toBe("default");
    expect(r.body.expires_at).toBeGreaterThanOrEqual(before + 3600_000 - 5_000);
    expect(r.body.expires_at).toBeLessThanOrEqual(Date.now() + 3600_000 + 5_000);
    expect(r.body.command).toBe(`svc runner register --url ${server.url} --token ${r.body.token}`);
    expectError(await admin.post("/v1/orgs/acme/runners/registration-token", { group: "nope" }), 422);
    expectError(await member.post("/v1/orgs/acme/runners/registration-token", {}), 404);
    expectError(await anon.post("/v1/orgs/acme/runners/registration-token", {}), 401);
    expect(audit("runner.registration_token.created").length).toBeGreaterThan(0);
    // Only its digest is stored.
    const secret = r.body.token.slice(22);
    expect(dbRows(server, "SELECT 1 FROM runner_registration_tokens WHERE secret_hash LIKE ?", `%${secret}%`)).toEqual([]);
  });

  test("register: 201 with server-added labels; 422 for name, label, os, arch; the token is spent after one machine", async () => {
    const token = await registrationToken(api);
    const reg = client(server, { token });
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ os: "linux", arch: "x64" }, /name/],
      [{ name: "has space", os: "linux", arch: "x64" }, /name/],
      [{ name: "x".repeat(65), os: "linux", arch: "x64" }, /name/],
      [{ name: "ok", os: "solaris", arch: "x64" }, /os/],
      [{ name: "ok", os: "linux", arch: "mips" }, /arch/],
      [{ name: "ok", os: "linux", arch: "x64", labels: ["bad label"] }, /label/],
      [{ name: "ok", os: "linux", arch: "x64", labels: ["self-hosted"] }, /label/],
      [{ name: "ok", os: "linux", arch: "x64", ephemeral: "yes" }, /ephemeral/],
    ];
    for (const [body, msg] of bad) expectError(await reg.post("/v1/runners/register", body), 422, msg);
    const r = await reg.post("/v1/runners/register", { name: "build-01", os: "macos", arch: "arm64", labels: ["GPU", "big"], version: "1.2.3" });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ org: "acme", group: "default", labels: ["self-hosted", "macos", "arm64", "gpu", "big"] });
    expect(r.body.credential).toMatch(/^svcr_[a-z2-7]{16}_[a-z2-7]{32}$/);
    expect(r.body.credential.slice(5, 21)).toBe(r.body.runner_id);
    const listed = (await viewer.get("/v1/orgs/acme/runners")).body.runners.find((x: any) => x.id === r.body.runner_id);
    expect(listed).toMatchObject({
      name: "build-01",
      os: "macos",
      arch: "arm64",
      version: "1.2.3",
      ephemeral: false,
      state: "online",
      job: null,
      labels: ["self-hosted", "macos", "arm64", "gpu", "big"],
    });
    expect(audit("runner.registered").find((a) => a.target === "build-01")).toMatchObject({ actor_kind: "registration_token" });
  });

  test("every bad registration token answers the identical 401", async () => {
    const spent = await registrationToken(api);
    expect((await client(server, { token: spent }).post("/v1/runners/register", { name: "spender", os: "linux", arch: "x64" })).status).toBe(201);
    const good = await registrationToken(api);
    const unknown = `svcg_${"a".repeat(16)}_${"b".repeat(32)}`;
    const wrongSecret = `${good.slice(0, 22)}${"c".repeat(32)}`;
    const apiToken = await mintToken(server, owner.cookie, "acme", { scopes: ["org:admin"], label: "admin" });
    const machine = await raw("cred-holder");
    const body = JSON.stringify({ name: "again", os: "linux", arch: "x64" });
    const answers = new Set<string>();
    const tries: Record<string, string | undefined>[] = [
      { authorization: `Bearer ${spent}` },
      { authorization: `Bearer ${unknown}` },
      { authorization: `Bearer ${wrongSecret}` },
      { authorization: "Bearer svcg_garbage" },
      { authorization: "Bearer not-a-token-at-all" },
      { authorization: `Bearer ${apiToken}` },
      { authorization: `Bearer ${machine.credential}` },
      { authorization: undefined },
      { cookie: owner.cookie, authorization: undefined },
    ];
    for (const t of tries) {
      const headers: Record<string, string> = { "content-type": "application/json", origin: server.url };
      for (const [k, v] of Object.entries(t)) if (v) headers[k] = v;
      const res = await fetch(`${server.url}/v1/runners/register`, { method: "POST", headers, body });
      answers.add(`${res.status} ${res.headers.get("content-type")} ${await res.text()}`);
    }
    expect([...answers]).toEqual(['401 application/json {"error":"invalid or revoked token"}']);
    // The good token still works afterwards.
    expect((await client(server, { token: good }).post("/v1/runners/register", { name: "good", os: "linux", arch: "x64" })).status).toBe(201);
  });

  test("a live machine with the same name is replaced: the old credential dies, one machine is listed", async () => {
    const first = await raw("twin");
    const second = await raw("twin");
    expectError(await claim(first.credential), 401);
    const twins = (await viewer.get("/v1/orgs/acme/runners")).body.runners.filter((r: any) => r.name === "twin");
    expect(twins.map((r: any) => r.id)).toEqual([second.id]);
    expect(JSON.parse(audit("runner.registered").filter((a) => a.target === "twin")[1]!.data).replaced).toBe(first.id);
  });
});

describe("claim and the per-job calls", () => {
  test("claim: 204 after the wait; 401 for anything but a live machine credential", async () => {
    const m = await raw("idle", ["never-used-label"]);
    const r = await claim(m.credential);
    expect(r.status).toBe(204);
    expect(r.headers.get("x-svc-claim-wait-ms")).toBe("800");
    expectError(await claim(`svcr_${"a".repeat(16)}_${"b".repeat(32)}`), 401);
    expectError(await claim(await mintToken(server, owner.cookie, "acme", { scopes: ["org:admin"], label: "x" })), 401);
    expectError(await anon.post("/v1/runners/claim"), 401);
  });

  test("a claimed job: description, clone with the job token, idempotent logs, steps, heartbeat, verdict; then the token is dead", async () => {
    const m = await raw("worker", ["raw"]);
    const other = await raw("other-worker", ["raw2"]);
    const waiting = claim(m.credential);
    const sha = await commitFiles(api, "api", {
      ".svc/workflows/ci.yml":
        "on: push\njobs:\n  unit:\n    runs-on: [self-hosted, raw]\n    env: { A: b }\n    timeout-minutes: 30\n    steps:\n      - name: one\n        run: echo 1\n      - run: echo 2\n",
    });
    const c = await waiting;
    expect(c.status).toBe(200);
    expect(Object.keys(c.body).sort()).toEqual(["job_id", "runner_url", "token"]);
    expect(c.body.token).toMatch(/^svc_[a-z2-7]{16}_[a-z2-7]{32}$/);
    expect(c.body.runner_url).toBe(server.url);
    const job = client(server, { token: c.body.token });
    const base = `/v1/runner/jobs/${c.body.job_id}`;

    // One running job per machine.
    expect(await claim(m.credential)).toMatchObject({ status: 409, body: { error: "busy" } });

    const d = await job.get(base);
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({
      job_id: c.body.job_id,
      key: "unit",
      repo: "acme/api",
      clone_url: `${server.url}/acme/api.git`,
      commit: sha,
      ref: "refs/heads/main",
      runs_on: ["self-hosted", "raw"],
      env: { A: "b" },
      timeout_s: 1800,
      steps: [
        { name: "one", run: "echo 1", env: {} },
        { name: "echo 2", run: "echo 2", env: {} },
      ],
    });
    const dir = await clone(g, repoUrl(server, "acme", "api", c.body.token));
    expect(await g.ok(["rev-parse", "HEAD"], { cwd: dir })).toBe(sha);
    // The job token reads this repository only.
    expect((await job.get("/v1/orgs/acme/repos/web")).status).toBe(404);
    expect((await job.post("/v1/orgs/acme/repos/api/commits", { message: "x", operations: [{ op: "put", path: "x.txt", content: "x\n" }] })).status).toBe(403);

    // The listed machine is busy with the job.
    const listed = (await viewer.get("/v1/orgs/acme/runners")).body.runners.find((r: any) => r.id === m.id);
    expect(listed).toMatchObject({ state: "busy", job: { job_id: c.body.job_id, key: "unit", repo: "api" } });

    expect((await job.post(`${base}/logs`, { offset: 0, text: "héllo\n" })).body).toEqual({ offset: 7 });
    expect((await job.post(`${base}/logs`, { offset: 0, text: "héllo\n" })).body).toEqual({ offset: 7 });
    const gap = await job.post(`${base}/logs`, { offset: 100, text: "x" });
    expect(gap).toMatchObject({ status: 409, body: { offset: 7 } });
    expect((await job.post(`${base}/logs`, { offset: 7, text: "world\n" })).body).toEqual({ offset: 13 });
    expectError(await job.post(`${base}/steps/0`, { state: "exploded" }), 422);
    expectError(await job.post(`${base}/steps/9`, { state: "running" }), 422);
    expect((await job.post(`${base}/steps/0`, { state: "success", exit_code: 0 })).status).toBe(204);
    expect((await job.post(`${base}/heartbeat`)).body).toEqual({ cancel: false });
    // Another job's token, or the machine's credential, does not act on this job.
    const otherWaiting = claim(other.credential);
    await commitFiles(api, "web", { ".svc/workflows/o.yml": "on: push\njobs:\n  o:\n    runs-on: [self-hosted, raw2]\n    steps:\n      - run: echo o\n" });
    const oc = await otherWaiting;
    expect(oc.status).toBe(200);
    expectError(await client(server, { token: oc.body.token }).get(base), 404);
    expectError(await client(server, { token: m.credential }).get(base), 401);
    expectError(await job.post(`${base}/complete`, { verdict: "maybe" }), 422);
    expect((await job.post(`${base}/complete`, { verdict: "success" })).status).toBe(204);

    // After the verdict the job token is a 401 everywhere, git included.
    for (const r of [
      await job.get(base),
      await job.post(`${base}/logs`, { offset: 13, text: "late" }),
      await job.post(`${base}/heartbeat`),
      await job.post(`${base}/complete`, { verdict: "success" }),
    ])
      expectError(r, 401);
    const res = await fetch(`${server.url}/acme/api.git/info/refs?service=git-upload-pack`, { headers: { authorization: `Bearer ${c.body.token}` } });
    expect(res.status).toBe(401);

    const run = (await api.get("/v1/orgs/acme/repos/api/runs")).body.runs.find((r: any) => r.commit === sha);
    expect(run.jobs[0]).toMatchObject({
      state: "success",
      verdict: "success",
      steps: [
        { name: "one", state: "success", exit_code: 0 },
        { name: "echo 2", state: "pending", exit_code: null },
      ],
    });
    const log = await fetch(`${server.url}/v1/orgs/acme/repos/api/runs/${run.id}/jobs/${run.jobs[0].id}/logs`, { headers: { cookie: owner.cookie } });
    expect(await log.text()).toBe("héllo\nworld\n");
    // The check result of the commit, for required checks.
    expect(dbRows(server, 'SELECT key, state FROM check_results WHERE "commit" = ?', sha)).toEqual([{ key: "unit", state: "success" }]);
    // Logs and runs are readable by those who can read the repository, and no one else.
    expectError(await outsider.get(`/v1/orgs/acme/repos/api/runs/${run.id}`), 404);
    expectError(await anon.get(`/v1/orgs/acme/repos/api/runs`), 401);
    expect((await viewer.get(`/v1/orgs/acme/repos/api/runs/${run.id}`)).status).toBe(200);
    expectError(await viewer.post(`/v1/orgs/acme/repos/api/runs/${run.id}/cancel`), 403);
    expectError(await viewer.get(`/v1/orgs/acme/repos/api/runs/nosuchrun0000000`), 404);
  });

  test("removing a machine fails its running job with SPEC's text, does not reassign it, and kills its credential", async () => {
    const m = await raw("doomed", ["doom"]);
    const spare = await raw("spare", ["doom"]);
    const waiting = claim(m.credential);
    const sha = await commitFiles(api, "api", {
      ".svc/workflows/ci.yml": "on: push\njobs:\n  d:\n    runs-on: [self-hosted, doom]\n    steps:\n      - run: sleep 1\n",
    });
    const c = await waiting;
    expect(c.status).toBe(200);
    expectError(await member.delete(`/v1/orgs/acme/runners/${m.id}`), 404);
    expectError(await admin.delete("/v1/orgs/acme/runners/nosuchrunner0000"), 404);
    expect((await admin.delete(`/v1/orgs/acme/runners/${m.id}`)).status).toBe(204);
    expectError(await admin.delete(`/v1/orgs/acme/runners/${m.id}`), 404);
    expectError(await claim(m.credential), 401);
    expectError(await client(server, { token: c.body.token }).post(`/v1/runner/jobs/${c.body.job_id}/heartbeat`), 401);
    const run = (await api.get("/v1/orgs/acme/repos/api/runs")).body.runs.find((r: any) => r.commit === sha);
    expect(run).toMatchObject({
      state: "failure",
      jobs: [{ state: "failure", error: "runner removed while the job was running", runner: { id: m.id, name: "doomed" } }],
    });
    // Not reassigned: the spare machine finds nothing.
    expect((await claim(spare.credential)).status).toBe(204);
    expect((await viewer.get("/v1/orgs/acme/runners")).body.runners.map((r: any) => r.id)).not.toContain(m.id);
    expect(audit("runner.removed").map((a) => a.target)).toContain("doomed");
  });

  test("many machines claiming at once: each job goes to exactly one machine", async () => {
    const machines = await Promise.all(Array.from({ length: 12 }, (_, i) => raw(`swarm-${i}`, ["swarm"])));
    const claims = machines.map((m) => claim(m.credential));
    const sha = await commitFiles(api, "api", {
      ".svc/workflows/ci.yml":
        "on: push\njobs:\n  s:\n    runs-on: [self-hosted, swarm]\n    strategy:\n      matrix:\n        n: [1, 2, 3, 4, 5, 6, 7, 8]\n    steps:\n      - run: echo\n",
    });
    const answers = await Promise.all(claims);
    const got = answers.filter((a) => a.status === 200).map((a) => a.body.job_id);
    expect(answers.every((a) => a.status === 200 || a.status === 204)).toBe(true);
    expect(got.length).toBe(8);
    expect(new Set(got).size).toBe(8);
    const run = await waitForRun(api, "api", sha, "the run");
    expect(run.jobs.map((j: any) => j.state)).toEqual(Array(8).fill("running"));
    expect(new Set(run.jobs.map((j: any) => j.runner.id)).size).toBe(8);
  });
});
