// The contribution graph over real HTTP with real git pushes and the commit API (SPEC §2.9, §4.2
// rule, §8): who is credited, what a reader learns about private work, ranges and bad dates.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { ContributionGraph } from "../../../src/services/discovery/schemas.ts";
import { caller, expectError, person, type Person } from "../../helpers/api.ts";
import { gitSandbox, initRepo, repoUrl, type GitSandbox } from "../../helpers/git.ts";
import { mintToken, startServer, type RunningServer } from "../../helpers/server.ts";

const T = 60_000;
let server: RunningServer;
let g: GitSandbox;
let ada: Person;
let bob: Person;
let bobToken: string;
let adaToken: string;
let serviceToken: string;

beforeAll(async () => {
  server = await startServer();
  g = gitSandbox();
  ada = await person(server, "acme", "ada@example.com", "owner", { name: "Ada", handle: "ada" });
  bob = await person(server, "acme", "bob@example.com", "member", { name: "Bob", handle: "bob" });
  adaToken = await mintToken(server, ada.cookie, "acme", { scopes: ["repo:write"], label: "ada" });
  bobToken = await mintToken(server, bob.cookie, "acme", { scopes: ["repo:write"], label: "bob" });
  serviceToken = await mintToken(server, ada.cookie, "acme", { scopes: ["repo:write"], label: "svc", kind: "service" });
  const a = caller(server, ada);
  expect((await a.post("/v1/orgs/acme/repos", { name: "app", public: true })).status).toBe(201);
  expect((await a.post("/v1/orgs/acme/repos", { name: "vault", public: false })).status).toBe(201);
  expect((await a.post("/v1/orgs/acme/repos", { name: "api", public: true })).status).toBe(201);
}, T);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
});

const anon = () => caller(server);
/** A graph as an anonymous reader gets it; every answer matches the documented schema (the route writes its JSON itself). */
async function graph(handle: string, range = "?from=2025-03-01&to=2025-03-31") {
  const r = await anon().get(`/v1/users/${handle}/contributions${range}`);
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toStartWith("application/json");
  expect(Value.Check(ContributionGraph, r.body)).toBe(true);
  return r.body;
}

/** Polls `read` until `done` holds (the recorder is a background job), at most 20 s. */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > deadline) return v;
    await Bun.sleep(50);
  }
}

/** Commits in `dir` as `author` at `date` (UTC ISO), with `message`. */
async function commitAs(dir: string, author: string, date: string, message: string, file: string): Promise<void> {
  await Bun.write(`${dir}/${file}`, `${message}\n`);
  await g.ok(["add", "-A"], { cwd: dir });
  const env = { GIT_AUTHOR_NAME: author.split("@")[0]!, GIT_AUTHOR_EMAIL: author, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date };
  await g.ok(["commit", "-q", "-m", message], { cwd: dir, env });
}

describe("recording", () => {
  test("a git push credits the proved author, else the pusher; a Co-Authored-By trailer counts for nobody", async () => {
    const dir = await initRepo(g, "app");
    await commitAs(dir, "ada@example.com", "2025-03-05T10:00:00Z", "ada's work", "a.txt");
    await commitAs(dir, "stranger@example.com", "2025-03-05T11:00:00Z", "unknown author", "b.txt");
    await commitAs(dir, "ADA@example.com", "2025-03-06T10:00:00Z", "pairing\n\nCo-Authored-By: Bob <bob@example.com>", "c.txt");
    await commitAs(dir, "bob@example.com", "2025-03-06T11:00:00Z", "bob's work", "d.txt");
    await g.ok(["push", "-q", repoUrl(server, "acme", "app", bobToken), "main"], { cwd: dir });
    const bobGraph = await until(
      () => graph("bob"),
      (v) => v.total === 2,
    );
    expect(bobGraph).toEqual({
      from: "2025-03-01",
      to: "2025-03-31",
      total: 2,
      private_included: false,
      days: [
        { day: 3, date: "2025-03-05", count: 1, repos: [{ org: "acme", name: "app", count: 1 }] },
        { day: 4, date: "2025-03-06", count: 1, repos: [{ org: "acme", name: "app", count: 1 }] },
      ],
    });
    expect(await graph("ada")).toEqual({
      from: "2025-03-01",
      to: "2025-03-31",
      total: 1,
      private_included: false,
      days: [{ day: 3, date: "2025-03-05", count: 1, repos: [{ org: "acme", name: "app", count: 1 }] }],
    });

    // A new branch carrying commits already on main credits only what is new.
    await g.ok(["checkout", "-q", "-b", "topic"], { cwd: dir });
    await commitAs(dir, "ada@example.com", "2025-03-07T10:00:00Z", "topic work", "e.txt");
    await g.ok(["push", "-q", repoUrl(server, "acme", "app", bobToken), "topic"], { cwd: dir });
    const adaGraph = await until(
      () => graph("ada"),
      (v) => v.total === 2,
    );
    expect(adaGraph.days.map((d: any) => [d.date, d.count])).toEqual([
      ["2025-03-05", 1],
      ["2025-03-07", 1],
    ]);
    expect((await graph("bob")).total).toBe(2);
  });

  test("the commit API credits the proved author address; a service token credits nobody else; the answer is the same for every reader", async () => {
    const body = (author: string, path: string) => ({
      branch: "main",
      message: "via api",
      author: { name: "x", email: author },
      operations: [{ op: "put", path, content: "x" }],
    });
    expect((await caller(server, serviceToken).post("/v1/orgs/acme/repos/api/commits", body("nobody@example.com", "n.txt"))).status).toBe(201);
    expect((await caller(server, serviceToken).post("/v1/orgs/acme/repos/api/commits", body("bob@example.com", "b.txt"))).status).toBe(201);
    const today = await until(
      () => graph("bob", ""),
      (v) => v.days.some((d: any) => d.repos.some((r: any) => r.name === "api")),
    );
    const apiCount = today.days
      .flatMap((d: any) => d.repos)
      .filter((r: any) => r.name === "api")
      .reduce((n: number, r: any) => n + r.count, 0);
    expect(apiCount).toBe(1);
    for (const who of [ada, bob, adaToken]) expect((await caller(server, who).get("/v1/users/bob/contributions")).body).toEqual(today);
  });

  test("private work is counted only when opted in, never named; private_included says whether it was", async () => {
    const dir = await initRepo(g, "vault");
    await commitAs(dir, "ada@example.com", "2025-03-10T10:00:00Z", "secret one", "s1.txt");
    await commitAs(dir, "ada@example.com", "2025-03-10T11:00:00Z", "secret two", "s2.txt");
    await g.ok(["push", "-q", repoUrl(server, "acme", "vault", adaToken), "main"], { cwd: dir });
    const a = caller(server, ada);
    expect((await a.patch("/v1/users/ada", { contrib_private_optin: true })).status).toBe(200);
    const optedIn = await until(
      () => graph("ada"),
      (v) => v.total === 4,
    );
    expect(optedIn.private_included).toBe(true);
    expect(optedIn.days.find((d: any) => d.date === "2025-03-10")).toEqual({ day: 1, date: "2025-03-10", count: 2, repos: [] });
    expect(JSON.stringify(optedIn)).not.toContain("vault");
    expect((await caller(server, bob).get("/v1/users/ada/contributions?from=2025-03-01&to=2025-03-31")).body).toEqual(optedIn);
    // Opted in with nothing private in the range.
    expect((await graph("ada", "?from=2025-03-01&to=2025-03-08")).private_included).toBe(false);
    expect((await a.patch("/v1/users/ada", { contrib_private_optin: false })).status).toBe(200);
    const optedOut = await graph("ada");
    expect(optedOut).toMatchObject({ total: 2, private_included: false });
    expect(optedOut.days.map((d: any) => d.date)).toEqual(["2025-03-05", "2025-03-07"]);
  });

  test("visibility is read at answer time: a repository made public is named, made private again is only counted, deleted leaves the graph", async () => {
    const a = caller(server, ada);
    expect((await a.patch("/v1/users/ada", { contrib_private_optin: true })).status).toBe(200);
    expect(await graph("ada")).toMatchObject({ total: 4, private_included: true });
    expect((await a.patch("/v1/orgs/acme/repos/vault", { public: true })).status).toBe(200);
    const open = await graph("ada");
    expect(open).toMatchObject({ total: 4, private_included: false });
    expect(open.days.find((d: any) => d.date === "2025-03-10")).toEqual({
      day: 1,
      date: "2025-03-10",
      count: 2,
      repos: [{ org: "acme", name: "vault", count: 2 }],
    });
    expect((await a.patch("/v1/orgs/acme/repos/vault", { public: false })).status).toBe(200);
    const closed = await graph("ada");
    expect(closed).toMatchObject({ total: 4, private_included: true });
    expect(closed.days.find((d: any) => d.date === "2025-03-10").repos).toEqual([]);
    // The per-day totals follow the delete in its transaction: nothing of vault is left, counted or named.
    expect((await a.delete("/v1/orgs/acme/repos/vault")).status).toBe(204);
    const after = await graph("ada");
    expect(after).toMatchObject({ total: 2, private_included: false });
    expect(after.days.map((d: any) => d.date)).toEqual(["2025-03-05", "2025-03-07"]);
    expect((await a.patch("/v1/users/ada", { contrib_private_optin: false })).status).toBe(200);
    expect(await graph("ada")).toEqual(after);
  });
});

describe("ranges", () => {
  test("default is the year ending today; at most 3653 days", async () => {
    const r = await anon().get("/v1/users/ada/contributions");
    expect(r.status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(r.body.to).toBe(today);
    expect((Date.parse(r.body.to) - Date.parse(r.body.from)) / 86_400_000).toBe(364);
    // 3653 days counting both ends.
    expect((await anon().get("/v1/users/ada/contributions?from=2015-01-02&to=2025-01-01")).status).toBe(200);
    expect((await anon().get("/v1/users/ada/contributions?to=2025-03-31")).body.from).toBe("2024-04-01");
  });

  test("bad dates and ranges are 400; an unknown person is 404", async () => {
    for (const q of [
      "from=2025-13-01",
      "to=2025-02-30",
      "from=2025-3-1",
      "from=yesterday",
      "to=2025-03-01T00:00",
      "from=2025-03-02&to=2025-03-01",
      "from=2015-01-01&to=2025-01-01",
    ]) {
      expectError(await anon().get(`/v1/users/ada/contributions?${q}`), 400);
    }
    expectError(await anon().get("/v1/users/nobody-here/contributions"), 404);
  });
});
