// Artifacts end to end with the real agent (issue 30, DECISIONS §5 "Actions"): a job uploads with
// the built-in actions/upload-artifact, a later job (`needs`) downloads with
// actions/download-artifact and checks the files; the API lists the run's artifacts and serves
// each as a zip whose content is checked by unzipping it; a private repository's artifacts are
// hidden from outsiders (404) and anonymous callers (401) like its runs, readable by viewers and
// deletable only by writers; names the artifact rules refuse fail the step with the reason.
// Retention with a moved clock is test/service/ci/artifacts.test.ts; S3 is artifacts-s3.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { caller, expectError, person, type Person } from "../../helpers/api.ts";
import type { RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, finishedRun, jobsBy, logOf, pushWorkflow, startCiServer } from "./helpers.ts";

let ci: CiServer;
let server: RunningServer;
let owner: Person;
let api: Api;
const scratch = mkdtempSync(join(tmpdir(), "svc-artifacts-bb-"));

beforeAll(async () => {
  ci = await startCiServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" }, repos: ["app"] });
  ({ server, owner, api } = ci);
  await ci.machine({ name: "art", labels: ["art"] });
}, 90_000);

afterAll(async () => {
  await ci?.[Symbol.asyncDispose]();
  rmSync(scratch, { recursive: true, force: true });
});

/** The unzipped entries of a zip (name → text), by the machine's `unzip`. */
async function unzipped(bytes: Uint8Array): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(scratch, "zip-"));
  const zip = join(dir, "a.zip");
  writeFileSync(zip, bytes);
  const list = Bun.spawnSync(["unzip", "-Z1", zip]);
  expect(list.exitCode).toBe(0);
  const names = new TextDecoder().decode(list.stdout).split("\n").filter(Boolean).sort();
  expect(Bun.spawnSync(["unzip", "-q", zip, "-d", join(dir, "x")]).exitCode).toBe(0);
  return Object.fromEntries(names.filter((n) => !n.endsWith("/")).map((n) => [n, readFileSync(join(dir, "x", n), "utf8")]));
}

const WORKFLOW = `on: push
jobs:
  build:
    runs-on: [self-hosted, art]
    steps:
      - run: |
          mkdir -p dist/sub logs
          echo alpha > dist/a.txt
          echo beta > dist/sub/b.txt
          echo hidden > dist/.env
          echo one > logs/one.log
          echo two > logs/two.log
          echo skip > logs/skip.txt
      - id: up
        uses: actions/upload-artifact@v4
        with:
          name: dist
          path: dist/
      - uses: actions/upload-artifact@v4.3.1
        with:
          name: logs
          path: |
            logs/*.log
            !logs/two.log
          retention-days: 5
      - run: echo "uploaded \${{ steps.up.outputs.artifact-id }}"
  check:
    needs: build
    runs-on: [self-hosted, art]
    steps:
      - uses: actions/download-artifact@v4
        with:
          name: dist
          path: got
      - run: |
          test "$(cat got/a.txt)" = alpha
          test "$(cat got/sub/b.txt)" = beta
          test ! -e got/.env
      - id: all
        uses: actions/download-artifact@v4
        with:
          path: every
      - run: |
          test "$(cat every/dist/a.txt)" = alpha
          test "$(cat every/logs/one.log)" = one
          test ! -e every/logs/two.log
          echo "path=\${{ steps.all.outputs.download-path }}"
      - uses: actions/download-artifact@v4
        with:
          pattern: "d*"
          path: merged
          merge-multiple: true
      - run: test -f merged/a.txt && test ! -e merged/one.log && echo checked-all
`;

describe("upload-artifact → download-artifact with the real agent (fs storage)", () => {
  let run: any;
  test("a job uploads two artifacts; the job that needs it downloads them by name, all, and by pattern", async () => {
    const sha = await pushWorkflow(api, "app", WORKFLOW);
    run = await finishedRun(api, "app", sha, 90_000);
    const jobs = jobsBy(run);
    const buildLog = await logOf(server, owner, "app", run.id, jobs.build.id);
    const checkLog = await logOf(server, owner, "app", run.id, jobs.check.id);
    expect({ state: run.state, build: buildLog.slice(-2000), check: checkLog.slice(-2000) }).toMatchObject({ state: "success" });
    expect(checkLog).toContain("checked-all");
    expect(checkLog).toMatch(/path=\/.+\/every/);
    const listed = (await api.get(`/v1/orgs/acme/repos/app/runs/${run.id}/artifacts`)).body.artifacts;
    expect(listed.map((a: any) => a.name)).toEqual(["dist", "logs"]);
    // The step's output is the artifact's id.
    expect(buildLog).toContain(`uploaded ${listed[0].id}`);
    const logs = listed[1];
    expect(logs.expires_at - logs.created_at).toBe(5 * 24 * 3600 * 1000);
    expect(listed[0].expires_at - listed[0].created_at).toBe(90 * 24 * 3600 * 1000);
  });

  test("the API serves each artifact as a zip with GitHub's layout (root at the path, hidden files left out)", async () => {
    const listed = (await api.get(`/v1/orgs/acme/repos/app/runs/${run.id}/artifacts`)).body.artifacts;
    const zip = async (id: string) => {
      const res = await fetch(`${server.url}/v1/orgs/acme/repos/app/artifacts/${id}/zip`, { headers: { cookie: owner.cookie } });
      expect({ status: res.status, type: res.headers.get("content-type") }).toEqual({ status: 200, type: "application/zip" });
      return { disposition: res.headers.get("content-disposition"), files: await unzipped(new Uint8Array(await res.arrayBuffer())) };
    };
    expect(await zip(listed[0].id)).toEqual({
      disposition: `attachment; filename="dist.zip"; filename*=UTF-8''dist.zip`,
      files: { "a.txt": "alpha\n", "sub/b.txt": "beta\n" },
    });
    expect((await zip(listed[1].id)).files).toEqual({ "one.log": "one\n" });
    // The run page lists them with sizes and links that download the same zip.
    const page = await (await fetch(`${server.url}/acme/app/runs/${run.id}`, { headers: { cookie: owner.cookie } })).text();
    expect(page).toContain('<h2 id="artifacts-h" class="inh">Artifacts</h2>');
    const href = `/acme/app/runs/${run.id}/artifacts/${listed[0].id}`;
    expect(page).toContain(`<a href="${href}" download="dist.zip">dist</a></td><td>${listed[0].size} B</td>`);
    const viaPage = await fetch(`${server.url}${href}`, { headers: { cookie: owner.cookie } });
    expect({ status: viaPage.status, files: await unzipped(new Uint8Array(await viaPage.arrayBuffer())) }).toEqual({
      status: 200,
      files: { "a.txt": "alpha\n", "sub/b.txt": "beta\n" },
    });
    // Another run's id in the address does not reach it.
    expect((await fetch(`${server.url}/acme/app/runs/nosuchrun0000000/artifacts/${listed[0].id}`, { headers: { cookie: owner.cookie } })).status).toBe(404);
    // Usage counts the zips.
    const usage = (await api.get("/v1/orgs/acme/usage")).body;
    expect(usage.storage_bytes).toBeGreaterThanOrEqual(listed[0].size + listed[1].size);
  });

  test("a private repository's artifacts: viewers read them, outsiders get 404, anonymous 401; only writers delete", async () => {
    const viewer = caller(server, await person(server, "acme", "viewer@acme.example", "viewer"));
    const rival = await person(server, "rival", "o@rival.example", "owner");
    const outsider = caller(server, rival);
    const anon = caller(server);
    const id = (await api.get(`/v1/orgs/acme/repos/app/runs/${run.id}/artifacts`)).body.artifacts[1].id;
    const list = `/v1/orgs/acme/repos/app/runs/${run.id}/artifacts`;
    const zip = `/v1/orgs/acme/repos/app/artifacts/${id}/zip`;
    expect((await viewer.get(list)).status).toBe(200);
    expect((await viewer.get(zip)).status).toBe(200);
    // The same answers as the run itself gives them (masked like a missing repository).
    for (const [who, status] of [
      [outsider, 404],
      [anon, 401],
    ] as const) {
      expect((await who.get(`/v1/orgs/acme/repos/app/runs/${run.id}`)).status).toBe(status);
      expectError(await who.get(list), status);
      expectError(await who.get(zip), status);
      expectError(await who.delete(`/v1/orgs/acme/repos/app/artifacts/${id}`), status);
    }
    // The page's link answers like the page: a missing repository's "not found" for an outsider.
    expect((await fetch(`${server.url}/acme/app/runs/${run.id}/artifacts/${id}`, { headers: { cookie: rival.cookie } })).status).toBe(404);
    expect((await fetch(`${server.url}/acme/app/runs/${run.id}/artifacts/${id}`)).status).toBe(401);
    expectError(await viewer.delete(`/v1/orgs/acme/repos/app/artifacts/${id}`), 403);
    expectError(await api.get("/v1/orgs/acme/repos/app/artifacts/nosuchartifact00/zip"), 404);
    expect((await api.delete(`/v1/orgs/acme/repos/app/artifacts/${id}`)).status).toBe(204);
    expect((await api.get(list)).body.artifacts.map((a: any) => a.name)).toEqual(["dist"]);
    expectError(await viewer.get(zip), 404);
  });

  test("a name the rules refuse fails the step with the reason; no files found warns, errors or stays quiet as asked", async () => {
    const sha = await pushWorkflow(
      api,
      "app",
      `on: push
jobs:
  bad:
    runs-on: [self-hosted, art]
    steps:
      - run: echo x > f.txt
      - uses: actions/upload-artifact@v4
        continue-on-error: true
        with:
          name: "a:b"
          path: f.txt
      - uses: actions/upload-artifact@v4
        with:
          name: none-warn
          path: nothing-here/
      - uses: actions/upload-artifact@v4
        with:
          name: none-quiet
          path: nothing-here/
          if-no-files-found: ignore
      - uses: actions/upload-artifact@v4
        with:
          name: none-error
          path: nothing-here/
          if-no-files-found: error
`,
    );
    const r = await finishedRun(api, "app", sha, 60_000);
    const log = await logOf(server, owner, "app", r.id, r.jobs[0].id);
    expect(r.state).toBe("failure");
    expect(log).toContain("contains a character artifacts may not use");
    expect(log).toContain("##[warning]No files were found with the provided path: nothing-here/");
    expect(r.jobs[0].steps.map((s: any) => s.state)).toEqual(["success", "failure", "success", "success", "failure"]);
    expect((await api.get(`/v1/orgs/acme/repos/app/runs/${r.id}/artifacts`)).body.artifacts).toEqual([]);
  });
});
