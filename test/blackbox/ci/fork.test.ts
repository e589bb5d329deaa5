// Fork changes without secrets (issue 29, DECISIONS §5 CI "Runs for changes from forks get no
// secrets"), black-box with the real agent (`svc runner run`) and real git pushes: a change from a
// (private) fork runs its workflow as read from the fork, on the target (its checks show on the
// change) once a writer starts them (the fork's author may not write here), untrusted — secrets
// and variables expand to nothing, the agent fetches the
// commit from the fork with a job token that reads that fork alone and never writes — every new
// patchset pushed to the fork runs again, and the same workflow from the target's own branch
// still gets the secrets (masked).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { caller } from "../../helpers/api.ts";
import { commitFiles, createRepo, gitSandbox, initRepo, repoUrl, setupOwner, type OrgOwner } from "../../helpers/git.ts";
import { type RunningServer, startServer } from "../../helpers/server.ts";
import { csrfOf, getPage, postForm } from "../../helpers/web.ts";
import { type Agent, finishedRun, logOf, registerMachine, registrationToken, runnerHome, runsOf, startAgent, until } from "./helpers.ts";

const ORG_SECRET = "org-Secret-5d1e9a77c2";
const REPO_SECRET = "repo-Secret-0b4f6e18aa";

/**
 * The workflow both sides use: it prints the secrets (empty for a fork), a variable, a file of the
 * commit, and the github context a file written for GitHub reads (`on:` as given: `pull_request`
 * is GitHub's name for a change).
 */
function workflow(labels: string, on = "change"): string {
  return `name: Checks
on: ${on}
jobs:
  check:
    runs-on: [self-hosted, ${labels}]
    steps:
      - name: show
        run: |
          echo "org=[\${{ secrets.ORG_TOKEN }}] repo=[\${{ secrets.REPO_TOKEN }}]"
          echo "region=\${{ vars.REGION }}"
          cat marker.txt
          echo "compat=[$GITHUB_HEAD_REF $GITHUB_BASE_REF $GITHUB_EVENT_NAME $GITHUB_WORKFLOW] fork=[\${{ github.event.pull_request.head.repo.fork }}] pr=[\${{ github.event_name == 'pull_request' && github.event.number }}]"
          grep -o '"fork":[a-z]*' "$GITHUB_EVENT_PATH"
`;
}

let server: RunningServer;
let acme: OrgOwner;
let ada: OrgOwner;
let api: ReturnType<typeof caller>;
let adaApi: ReturnType<typeof caller>;
let agent: Agent;
let raw: { credential: string };
const g = gitSandbox("svc-ci-fork-");
const home = runnerHome();
let work: string;
let change: number;

beforeAll(async () => {
  server = await startServer();
  [acme, ada] = await Promise.all([setupOwner(server, "acme"), setupOwner(server, "ada")]);
  api = caller(server, { cookie: acme.cookie });
  adaApi = caller(server, { cookie: ada.cookie });
  await createRepo(server, acme, "app", true);
  await createRepo(server, acme, "vault");
  work = await initRepo(g, "work");
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: work });
  await commitFiles(g, work, { "README.md": "app\n" }, "seed");
  await g.ok(["push", "-q", repoUrl(server, "acme", "app", acme.token), "main"], { cwd: work });
  expect((await api.put("/v1/orgs/acme/secrets/ORG_TOKEN", { value: ORG_SECRET })).status).toBe(201);
  expect((await api.put("/v1/orgs/acme/repos/app/secrets/REPO_TOKEN", { value: REPO_SECRET })).status).toBe(201);
  expect((await api.put("/v1/orgs/acme/repos/app/variables/REGION", { value: "eu-west-1" })).status).toBe(201);
  // A group whose machines take jobs of public repositories (the default group's do not).
  expect((await api.post("/v1/orgs/acme/runner-groups", { name: "forks", allow_public: true })).status).toBe(201);
  const m = await registerMachine(server, await registrationToken(api, "acme", "forks"), home.dir, { name: "agent", labels: ["forks"] });
  raw = await registerMachine(server, await registrationToken(api, "acme", "forks"), home.dir, { name: "raw", labels: ["fork-raw"] });
  agent = startAgent(m.config, join(home.dir, "work"));
  await agent.saw(/waiting for jobs/);
  // Ada (no role in acme) forks the public repository and makes the fork private: only a token
  // bound to it can fetch its commits.
  expect((await adaApi.post("/v1/orgs/acme/repos/app/forks", { org: "ada", name: "app-fork" })).status).toBe(202);
  await until("the fork to be ready", async () => (await adaApi.get("/v1/orgs/ada/repos/app-fork")).body.fork_state === "ready");
  expect((await adaApi.patch("/v1/orgs/ada/repos/app-fork", { public: false })).status).toBe(200);
}, 90_000);

afterAll(async () => {
  await agent?.stop("SIGKILL");
  await server?.stop();
  home.cleanup();
  g[Symbol.dispose]();
});

test("a change from a fork runs on the target, untrusted: no secrets, no variables, the fork's commit checked out", async () => {
  await g.ok(["checkout", "-q", "-b", "topic"], { cwd: work });
  const head = await commitFiles(
    g,
    work,
    { ".svc/workflows/ci.yml": workflow("forks", "pull_request"), "marker.txt": "only in the fork's commit\n" },
    "from the fork",
  );
  await g.ok(["push", "-q", repoUrl(server, "ada", "app-fork", ada.token), "topic"], { cwd: work });
  const opened = await adaApi.post("/v1/orgs/acme/repos/app/changes", { title: "from a fork", branch: "topic", source: { org: "ada", repo: "app-fork" } });
  expect(opened.status).toBe(201);
  change = opened.body.number;
  // Ada may not write here: her change's runs wait for a writer, and she cannot start them herself.
  expect((await adaApi.post(`/v1/orgs/acme/repos/app/changes/${change}/runs`, {})).status).toBe(403);
  // The change page offers a writer the button, not Ada.
  const form = `action="/acme/app/changes/${change}/runs"`;
  expect((await getPage(server, `/acme/app/changes/${change}`, acme.cookie)).text).toContain(form);
  expect((await getPage(server, `/acme/app/changes/${change}`, ada.cookie)).text).not.toContain(form);
  expect((await api.post(`/v1/orgs/acme/repos/app/changes/${change}/runs`, {})).status).toBe(202);

  const run = await finishedRun(api, "app", head);
  expect(run).toMatchObject({ event: "change", ref: "refs/heads/topic", trusted: false, state: "success", workflow: ".svc/workflows/ci.yml" });
  // Started by the writer's approval, not by Ada's open (her trigger, queued first, created nothing).
  expect(run.actor?.handle).toBeTruthy();
  expect(run.actor?.handle).not.toBe(opened.body.author.handle);
  expect((await runsOf(api, "app")).filter((r) => r.commit === head).length).toBe(1);
  const log = await logOf(server, { cookie: acme.cookie } as never, "app", run.id, run.jobs[0].id);
  expect(log).toContain(`##[checkout] acme/app at ${head}`);
  expect(log).toContain("org=[] repo=[]\n");
  expect(log).toContain("region=\n");
  expect(log).not.toContain("eu-west-1");
  expect(log).toContain("only in the fork's commit\n");
  // GitHub's pull-request context: the branch, its target, the event as `on:` spells it, the workflow's name, a fork.
  expect(log).toContain(`compat=[topic main pull_request Checks] fork=[true] pr=[${change}]\n`);
  expect(log).toContain('"fork":true\n');
  for (const s of [ORG_SECRET, REPO_SECRET]) expect(log).not.toContain(s);
  // Its checks are the change's (the run belongs to the target).
  const c = await api.get(`/v1/orgs/acme/repos/app/changes/${change}`);
  expect(c.body.source).toEqual({ org: "ada", repo: "app-fork" });
  expect(c.body.checks).toEqual([{ key: "check", state: "success", run_id: run.id, job_id: run.jobs[0].id }]);
  // The pages show it like any run: the change's checks, the runs list, the run.
  const page = async (path: string) => {
    const r = await fetch(`${server.url}${path}`, { headers: { cookie: acme.cookie } });
    expect({ path, status: r.status }).toEqual({ path, status: 200 });
    return r.text();
  };
  expect(await page(`/acme/app/changes/${change}`)).toContain(`/acme/app/runs/${run.id}`);
  expect(await page("/acme/app/runs")).toContain(`/acme/app/runs/${run.id}`);
  const runPage = await page(`/acme/app/runs/${run.id}`);
  expect(runPage).toContain("topic");
  expect(runPage).toContain("from a fork (no secrets)");
  // The commit is the fork's: the target's tree does not have it, so the page does not link there.
  expect(runPage).not.toContain(`/acme/app/tree/${head}`);
  expect((await fetch(`${server.url}/acme/app/tree/${head}`, { headers: { cookie: acme.cookie } })).status).toBe(404);
}, 90_000);

test("a second push to the fork's branch runs again; its job token reads the fork alone, never writes, and dies with the job", async () => {
  const head2 = await commitFiles(g, work, { ".svc/workflows/ci.yml": workflow("fork-raw"), "marker.txt": "second\n" }, "second patchset");
  await g.ok(["push", "-q", repoUrl(server, "ada", "app-fork", ada.token), "topic"], { cwd: work });
  // The change follows the fork's branch (a new patchset); its runs wait for a writer again.
  await until("the new patchset", async () => (await api.get(`/v1/orgs/acme/repos/app/changes/${change}`)).body.head === head2);
  expect((await api.post(`/v1/orgs/acme/repos/app/changes/${change}/runs`, {})).status).toBe(202);
  const queued = await until("the second run", async () => (await runsOf(api, "app")).find((r) => r.commit === head2));
  expect(queued).toMatchObject({ event: "change", trusted: false });
  expect((await runsOf(api, "app")).filter((r) => r.event === "change").length).toBe(2);

  const claim = await until("a claimed job", async () => {
    const r = await fetch(`${server.url}/v1/runners/claim`, { method: "POST", headers: { authorization: `Bearer ${raw.credential}` } });
    return r.status === 200 ? ((await r.json()) as { job_id: string; token: string }) : null;
  });
  const auth = { authorization: `Bearer ${claim.token}` };
  const described = await fetch(`${server.url}/v1/runner/jobs/${claim.job_id}`, { headers: { ...auth, "x-svc-runner-format": "2" } });
  expect(described.status).toBe(200);
  const d = (await described.json()) as any;
  expect(d).toMatchObject({ format: 2, repo: "acme/app", commit: head2, ref: "refs/heads/topic", event: "change", secrets: {} });
  expect(d.clone_url).toBe(`${server.url}/ada/app-fork.git`);
  expect(d.contexts.vars).toEqual({});
  expect(d.contexts.github).toMatchObject({ head_ref: "topic", base_ref: "main", event_name: "change", workflow: "Checks" });
  expect(d.contexts.github.event).toMatchObject({
    number: change,
    pull_request: {
      number: change,
      title: "from a fork",
      head: { ref: "topic", sha: head2, repo: { full_name: "ada/app-fork", fork: true } },
      base: { ref: "main", repo: { full_name: "acme/app" } },
    },
  });
  for (const s of [ORG_SECRET, REPO_SECRET]) expect(JSON.stringify(d)).not.toContain(s);

  const advert = (repo: string, service: string) => fetch(`${server.url}/${repo}.git/info/refs?service=${service}`, { headers: auth });
  // The fork: readable, by the real git client too (the commit of the change).
  expect((await advert("ada/app-fork", "git-upload-pack")).status).toBe(200);
  const probe = await initRepo(g, "probe");
  await g.ok(["-c", `http.extraHeader=Authorization: Bearer ${claim.token}`, "fetch", "-q", "--depth", "1", d.clone_url, head2], { cwd: probe });
  // Nothing else: a private repository of the target's org is masked, the fork never writable.
  expect((await advert("acme/vault", "git-upload-pack")).status).toBe(404);
  const push = await g.run(["-c", `http.extraHeader=Authorization: Bearer ${claim.token}`, "push", d.clone_url, "HEAD:refs/heads/from-the-job"], { cwd: work });
  expect(push.code).not.toBe(0);
  expect(push.stderr).toContain("cannot write");
  expect((await fetch(`${server.url}/v1/orgs/acme/repos/vault`, { headers: auth })).status).toBe(404);

  const done = await fetch(`${server.url}/v1/runner/jobs/${claim.job_id}/complete`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ verdict: "success" }),
  });
  expect(done.status).toBe(204);
  expect((await finishedRun(api, "app", head2)).state).toBe("success");
  // The token ended with the job.
  expect((await advert("ada/app-fork", "git-upload-pack")).status).toBe(401);
}, 90_000);

test("the same workflow from a branch of the target itself gets the secrets, masked", async () => {
  await g.ok(["checkout", "-q", "-b", "inside", "main"], { cwd: work });
  const head = await commitFiles(g, work, { ".svc/workflows/ci.yml": workflow("forks"), "marker.txt": "from the target's branch\n" }, "inside");
  await g.ok(["push", "-q", repoUrl(server, "acme", "app", acme.token), "inside"], { cwd: work });
  expect((await api.post("/v1/orgs/acme/repos/app/changes", { title: "inside", branch: "inside" })).status).toBe(201);
  const run = await finishedRun(api, "app", head);
  expect(run).toMatchObject({ event: "change", trusted: true, state: "success" });
  const log = await logOf(server, { cookie: acme.cookie } as never, "app", run.id, run.jobs[0].id);
  expect(log).toContain("org=[***] repo=[***]\n");
  expect(log).toContain("region=eu-west-1\n");
  expect(log).toContain("from the target's branch\n");
  expect(log).toContain("compat=[inside main change Checks] fork=[false] pr=[false]\n");
  for (const s of [ORG_SECRET, REPO_SECRET]) expect(log).not.toContain(s);
  expect(server.stderr()).not.toContain(ORG_SECRET);
}, 90_000);

test("reopening a fork's change whose branch moved while it was closed runs the new head", async () => {
  await g.ok(["checkout", "-q", "topic"], { cwd: work });
  expect((await adaApi.patch(`/v1/orgs/acme/repos/app/changes/${change}`, { state: "closed" })).status).toBe(200);
  const head3 = await commitFiles(g, work, { ".svc/workflows/ci.yml": workflow("forks"), "marker.txt": "third, pushed while closed\n" }, "third");
  await g.ok(["push", "-q", repoUrl(server, "ada", "app-fork", ada.token), "topic"], { cwd: work });
  expect((await runsOf(api, "app")).some((r) => r.commit === head3)).toBe(false);
  const reopened = await adaApi.patch(`/v1/orgs/acme/repos/app/changes/${change}`, { state: "open" });
  expect(reopened.body).toMatchObject({ state: "open", head: head3 });
  // A writer starts them with the change page's "Run checks" button.
  const page = await getPage(server, `/acme/app/changes/${change}`, acme.cookie);
  expect(page.text).toContain("Run checks");
  const posted = await postForm(server, `/acme/app/changes/${change}/runs`, { csrf: csrfOf(page.text) }, { cookie: acme.cookie });
  expect(posted.status).toBe(303);
  const run = await finishedRun(api, "app", head3);
  expect(run).toMatchObject({ event: "change", trusted: false, state: "success" });
  const log = await logOf(server, { cookie: acme.cookie } as never, "app", run.id, run.jobs[0].id);
  expect(log).toContain("org=[] repo=[]\n");
  expect(log).toContain("third, pushed while closed\n");
}, 90_000);

test("a maintainer pushing the fork's commit to a branch here gets a trusted run beside the fork's untrusted one", async () => {
  const head3 = await g.ok(["rev-parse", "topic"], { cwd: work });
  await g.ok(["push", "-q", repoUrl(server, "acme", "app", acme.token), "topic"], { cwd: work });
  expect((await api.post("/v1/orgs/acme/repos/app/changes", { title: "trusted copy", branch: "topic" })).status).toBe(201);
  const trusted = await until("the trusted run", async () => {
    const r = (await runsOf(api, "app")).find((r) => r.commit === head3 && r.trusted);
    return r && ["success", "failure", "cancelled"].includes(r.state) ? r : null;
  });
  expect(trusted.state).toBe("success");
  expect((await runsOf(api, "app")).filter((r) => r.commit === head3).map((r) => r.trusted)).toEqual([true, false]);
  const log = await logOf(server, { cookie: acme.cookie } as never, "app", trusted.id, trusted.jobs[0].id);
  expect(log).toContain("org=[***] repo=[***]\n");
}, 90_000);
