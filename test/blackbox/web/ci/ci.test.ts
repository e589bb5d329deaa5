// The CI pages over HTTP against the real server, with a machine driven through the runner API
// (raw calls, so each log append is a step the test controls): runs, a run, a job page that works
// without JavaScript, and the live log's server-sent events (access-checked like the API's log
// route, resumable from Last-Event-ID, ending when the job ends).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, person, type Person } from "../../../helpers/api.ts";
import { client, startServer, type RunningServer } from "../../../helpers/server.ts";
import { commitFiles, registrationToken, until } from "../../ci/helpers.ts";

let server: RunningServer;
let owner: Person;
let viewer: Person;
let outsider: Person;
let run: any;
let pubRun: any;
let job: { id: string; token: string };

const HOSTILE_STEP = `<script>alert("step")</script>`;
const WORKFLOW = `on: push\njobs:\n  build:\n    runs-on: [self-hosted, web]\n    steps:\n      - name: '${HOSTILE_STEP}'\n        run: echo one\n      - name: second\n        run: echo two\n`;

async function get(path: string, who?: { cookie: string }, headers: Record<string, string> = {}) {
  const res = await fetch(server.url + path, { headers: { ...(who ? { cookie: who.cookie } : {}), ...headers }, redirect: "manual" });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** An open event stream: what arrived so far, and waiting for more. */
async function events(path: string, who?: { cookie: string }, headers: Record<string, string> = {}) {
  const res = await fetch(server.url + path, { headers: { ...(who ? { cookie: who.cookie } : {}), ...headers } });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  const s = {
    res,
    text: "",
    /** Reads until `pred(text)` holds; throws when the stream ends first. */
    async until(pred: (t: string) => boolean) {
      while (!pred(s.text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before the condition; got:\n${s.text}`);
        s.text += dec.decode(value, { stream: true });
      }
    },
    /** Reads to the end of the stream. */
    async rest() {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return s.text;
        s.text += dec.decode(value, { stream: true });
      }
    },
    cancel: () => reader.cancel(),
  };
  return s;
}

/** The `data` of each event named `name`, parsed. */
function dataOf(text: string, name: string): any[] {
  return [...text.matchAll(new RegExp(`event: ${name}\\ndata: (.*)\\n\\n`, "g"))].map((m) => JSON.parse(m[1]!));
}

beforeAll(async () => {
  server = await startServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "3000" } });
  owner = await person(server, "acme", "owner@acme.example", "owner");
  viewer = await person(server, "acme", "viewer@acme.example", "viewer");
  outsider = await person(server, "rival", "someone@rival.example", "owner");
  const api = caller(server, owner);
  for (const [name, pub] of [
    ["app", false],
    ["pub", true],
  ] as const)
    expect((await api.post("/v1/orgs/acme/repos", { name, public: pub })).status).toBe(201);
  const reg = await client(server, { token: await registrationToken(api) }).post("/v1/runners/register", {
    name: "web-runner",
    os: "linux",
    arch: "x64",
    labels: ["web"],
  });
  expect(reg.status).toBe(201);
  const claiming = client(server, { token: reg.body.credential }).post("/v1/runners/claim");
  const sha = await commitFiles(api, "app", { ".svc/workflows/ci.yml": WORKFLOW });
  const c = await claiming;
  expect(c.status).toBe(200);
  job = { id: c.body.job_id, token: c.body.token };
  run = (await api.get("/v1/orgs/acme/repos/app/runs")).body.runs.find((r: any) => r.commit === sha);
  // A second run, in the public repository, that nobody claims (its job stays queued).
  const pubSha = await commitFiles(api, "pub", { ".svc/workflows/ci.yml": WORKFLOW.replace("web]", "nowhere]") });
  // The trigger runs in the background (its workflow parsed on a worker thread): wait for the run.
  pubRun = await until("the public run", async () => (await api.get("/v1/orgs/acme/repos/pub/runs")).body.runs.find((r: any) => r.commit === pubSha));
}, 60_000);

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

const jobCall = (path: string, body?: unknown) => client(server, { token: job.token }).post(`/v1/runner/jobs/${job.id}${path}`, body);

describe("runs and a run", () => {
  test("the runs list shows state, workflow, commit and ref; the run shows its job and steps, escaped", async () => {
    const list = await get("/acme/app/runs", owner);
    expect(list.status).toBe(200);
    expect(list.text).toContain(`href="/acme/app/runs/${run.id}">ci.yml</a>`);
    expect(list.text).toContain(`>${run.commit.slice(0, 10)}</a>`);
    expect(list.text).toContain("<td>main</td><td>push</td>");
    const page = await get(`/acme/app/runs/${run.id}`, owner);
    expect(page.text).toContain(`href="/acme/app/runs/${run.id}/jobs/${job.id}">build</a>`);
    expect(page.text).toContain("&lt;script&gt;alert(&quot;step&quot;)&lt;/script&gt;");
    expect(page.text).not.toContain(HOSTILE_STEP);
    expect(page.text).toContain("on web-runner");
  });

  test("readers see runs as the API shows them: outsiders the masked 404, anonymous 401 on a private repository, anyone on a public one", async () => {
    for (const path of ["/acme/app/runs", `/acme/app/runs/${run.id}`, `/acme/app/runs/${run.id}/jobs/${job.id}`]) {
      expect({ path, status: (await get(path, outsider)).status }).toEqual({ path, status: 404 });
      expect({ path, status: (await get(path)).status }).toEqual({ path, status: 401 });
      expect({ path, status: (await get(path, viewer)).status }).toEqual({ path, status: 200 });
    }
    expect((await get(`/acme/pub/runs/${pubRun.id}`)).status).toBe(200);
    expect((await get("/acme/app/runs/nosuchrun0000000", owner)).status).toBe(404);
    expect((await get(`/acme/app/runs/${pubRun.id}`, owner)).status).toBe(404);
  });
});

describe("the live log", () => {
  test("the event stream is checked like the log route: outsiders 404, anonymous 401, a job of another run 404", async () => {
    const path = `/acme/app/runs/${run.id}/jobs/${job.id}/events`;
    const api = (who?: Person) =>
      fetch(`${server.url}/v1/orgs/acme/repos/app/runs/${run.id}/jobs/${job.id}/logs`, { headers: who ? { cookie: who.cookie } : {} });
    for (const who of [outsider, undefined]) {
      const page = await get(path, who);
      expect({ status: page.status, type: page.headers.get("content-type") }).toEqual({ status: (await api(who)).status, type: "text/html; charset=utf-8" });
    }
    expect((await get(path, outsider)).status).toBe(404);
    expect((await get(path)).status).toBe(401);
    expect((await get(`/acme/app/runs/${run.id}/jobs/${pubRun.jobs[0].id}/events`, owner)).status).toBe(404);
    expect((await get(`/acme/app/runs/${pubRun.id}/jobs/${job.id}/events`, owner)).status).toBe(404);
    expect((await get(`/acme/pub/runs/${pubRun.id}/jobs/${job.id}/events`)).status).toBe(404);
  });

  test("a running job: the page shows the log so far (escaped) and a refresh link; the stream follows each append and ends with the job", async () => {
    expect((await jobCall("/logs", { offset: 0, text: "one <b>bold</b>\n" })).status).toBe(200);
    expect((await jobCall("/steps/0", { state: "running" })).status).toBe(204);
    const page = await get(`/acme/app/runs/${run.id}/jobs/${job.id}`, viewer);
    expect(page.text).toContain("one &lt;b&gt;bold&lt;/b&gt;\n</pre>");
    expect(page.text).toContain(`data-next="16"`);
    expect(page.text).toContain(`data-live="1"`);
    expect(page.text).toContain(`class="refresh">Refresh</a>`);

    const s = await events(`/acme/app/runs/${run.id}/jobs/${job.id}/events?from=0`, viewer);
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(s.res.headers.get("cache-control")).toBe("no-store");
    await s.until((t) => t.includes("event: state"));
    expect(dataOf(s.text, "log")).toEqual([{ text: "one <b>bold</b>\n" }]);
    expect(s.text).toContain("id: 16\nevent: log");
    expect(dataOf(s.text, "state")[0]).toMatchObject({ state: "running", steps: [{ state: "running" }, { state: "pending" }] });

    expect((await jobCall("/logs", { offset: 16, text: "two\r\nthree\n" })).status).toBe(200);
    await s.until((t) => dataOf(t, "log").length === 2);
    expect(dataOf(s.text, "log")[1]).toEqual({ text: "two\r\nthree\n" });
    expect(s.text).toContain("id: 27\nevent: log");

    expect((await jobCall("/steps/0", { state: "success", exit_code: 0 })).status).toBe(204);
    expect((await jobCall("/steps/1", { state: "failure", exit_code: 3 })).status).toBe(204);
    expect((await jobCall("/complete", { verdict: "failure" })).status).toBe(204);
    const all = await s.rest();
    expect(dataOf(all, "end")).toEqual([{ state: "failure" }]);
    expect(dataOf(all, "state").at(-1)).toMatchObject({
      state: "failure",
      steps: [
        { state: "success", exit_code: 0 },
        { state: "failure", exit_code: 3 },
      ],
    });

    const done = await get(`/acme/app/runs/${run.id}/jobs/${job.id}`, viewer);
    expect(done.text).toContain(`data-live="0"`);
    expect(done.text).not.toContain(`class="refresh"`);
    expect(done.text).toContain("exit 3");
  });

  test("a reconnecting client resumes after its Last-Event-ID; a finished job's stream sends the rest and ends", async () => {
    const resumed = await (await events(`/acme/app/runs/${run.id}/jobs/${job.id}/events?from=0`, owner, { "last-event-id": "16" })).rest();
    expect(dataOf(resumed, "log")).toEqual([{ text: "two\r\nthree\n" }]);
    expect(dataOf(resumed, "end")).toEqual([{ state: "failure" }]);
    const whole = await (await events(`/acme/app/runs/${run.id}/jobs/${job.id}/events`, owner)).rest();
    expect(
      dataOf(whole, "log")
        .map((d) => d.text)
        .join(""),
    ).toBe("one <b>bold</b>\ntwo\r\nthree\n");
    expect(whole.startsWith("retry: 2000\n\n")).toBe(true);
    // A bogus position reads from the start.
    expect(dataOf(await (await events(`/acme/app/runs/${run.id}/jobs/${job.id}/events?from=-5`, owner)).rest(), "log").length).toBeGreaterThan(0);
  });

  test("a public repository's queued job streams to anyone; the client may leave at any time", async () => {
    const s = await events(`/acme/pub/runs/${pubRun.id}/jobs/${pubRun.jobs[0].id}/events`);
    expect(s.res.status).toBe(200);
    await s.until((t) => t.includes("event: state"));
    expect(dataOf(s.text, "state")[0]).toMatchObject({ state: "queued" });
    await s.cancel();
    // The server is still answering (the stream's end freed what it held).
    expect((await get(`/acme/pub/runs/${pubRun.id}`)).status).toBe(200);
  });
});

describe("cancelling", () => {
  test("writers cancel a run from its page; readers get the API's 403; a cross-site post is refused", async () => {
    const token = (who: Person) => get("/", who).then((r) => /name="csrf" value="([^"]+)"/.exec(r.text)![1]!);
    const send = async (who: Person, origin: string, csrf: string) =>
      fetch(`${server.url}/acme/pub/runs/${pubRun.id}/cancel`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie: who.cookie, origin, "content-type": "application/x-www-form-urlencoded" },
        body: `csrf=${csrf}`,
      });
    expect((await get(`/acme/pub/runs/${pubRun.id}`, owner)).text).toContain(">Cancel run</button>");
    expect((await get(`/acme/pub/runs/${pubRun.id}`, viewer)).text).not.toContain(">Cancel run</button>");
    expect((await send(owner, "https://evil.example", await token(owner))).status).toBe(403);
    expect((await send(owner, server.url, "nope")).status).toBe(403);
    const refused = await send(viewer, server.url, await token(viewer));
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("cannot write to it");
    const r = await send(owner, server.url, await token(owner));
    expect({ status: r.status, location: r.headers.get("location") }).toEqual({ status: 303, location: `/acme/pub/runs/${pubRun.id}` });
    expect((await caller(server, owner).get(`/v1/orgs/acme/repos/pub/runs/${pubRun.id}`)).body.state).toBe("cancelled");
    const again = await send(owner, server.url, await token(owner));
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("the run already finished");
  });
});

describe("checks on commits", () => {
  test("the history shows each commit's rollup; the commit page lists each check with links, and its ETag follows the check states", async () => {
    const api = caller(server, owner);
    expect((await api.post("/v1/orgs/acme/repos", { name: "checked", public: false })).status).toBe(201);
    const sha = await commitFiles(api, "checked", { ".svc/workflows/ci.yml": WORKFLOW.replace("web]", "nowhere]") });
    const r = await until("the run", async () => (await api.get("/v1/orgs/acme/repos/checked/runs")).body.runs.find((x: any) => x.commit === sha));
    const jobId = r.jobs[0].id;
    const history = await get("/acme/checked/commits", owner);
    expect(history.text).toContain(
      `<a class="checks-state state-pending" href="/acme/checked/commit/${sha}#checks"><span aria-hidden="true">●</span> checks running</a>`,
    );
    const path = `/acme/checked/commit/${sha}`;
    const first = await get(path, owner);
    expect(first.status).toBe(200);
    expect(first.text).toContain(`<a href="/acme/checked/runs/${r.id}">build</a> <span class="muted">queued</span>`);
    expect(first.text).toContain(`<a href="/acme/checked/runs/${r.id}/jobs/${jobId}" aria-label="Log of build">log</a>`);
    const etag = first.headers.get("etag")!;
    expect((await get(path, owner, { "if-none-match": etag })).status).toBe(304);
    // The job ends (cancelled): the same commit, another page. The old tag is not a match.
    expect((await api.post(`/v1/orgs/acme/repos/checked/runs/${r.id}/cancel`)).status).toBe(202);
    const after = await get(path, owner, { "if-none-match": etag });
    expect(after.status).toBe(200);
    expect(after.text).toContain(`<a href="/acme/checked/runs/${r.id}">build</a> <span class="muted">cancelled</span>`);
    expect(after.headers.get("etag")).not.toBe(etag);
    expect((await get(path, owner, { "if-none-match": after.headers.get("etag")! })).status).toBe(304);
    expect((await get("/acme/checked/commits", owner)).text).toContain(`<span aria-hidden="true">✗</span> checks failing</a>`);
  });
});
