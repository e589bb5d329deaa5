// Runner listings and waiting jobs (issue 24 items 5 and 6): a group's `runners` count includes a
// machine right after it registers into the group (the count's subquery once compared the group
// with the runner's own id); a job whose runs-on names only GitHub's hosted labels does not wait in
// silence: the run says how to run it here, until a machine with those labels exists.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Person } from "../../helpers/api.ts";
import { client, type RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, commitFiles, registerRaw, runsOf, startCiServer, until } from "./helpers.ts";

let ci: CiServer;
let server: RunningServer;
let api: Api;
let owner: Person;

beforeAll(async () => {
  ci = await startCiServer({ repos: ["app"] });
  ({ server, api, owner } = ci);
}, 60_000);
afterAll(() => ci?.[Symbol.asyncDispose]());

const countOf = async (group: string) => (await api.get("/v1/orgs/acme/runner-groups")).body.groups.find((g: any) => g.name === group)?.runners;

describe("runner groups", () => {
  test("the runners count follows registrations into the group and removals", async () => {
    expect((await api.post("/v1/orgs/acme/runner-groups", { name: "builders" })).status).toBe(201);
    expect(await countOf("builders")).toBe(0);
    const ids: string[] = [];
    for (const name of ["b1", "b2"]) ids.push((await registerRaw(server, api, name, [], "builders")).id);
    expect({ builders: await countOf("builders"), default: await countOf("default") }).toEqual({ builders: 2, default: 0 });
    expect((await api.delete(`/v1/orgs/acme/runners/${ids[0]}`)).status).toBe(204);
    expect(await countOf("builders")).toBe(1);
  });
});

describe("a workflow written for GitHub's hosted runners", () => {
  test("the queued job says how to run it here, and stops saying so once a runner with the label exists", async () => {
    const commit = await commitFiles(api, "app", {
      ".svc/workflows/gh.yml": "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n",
      ".svc/workflows/own.yml": "on: push\njobs:\n  mine:\n    runs-on: [self-hosted, gpu]\n    steps:\n      - run: echo hi\n",
    });
    const jobs = await until("both runs", async () => {
      const runs = (await runsOf(api, "app")).filter((r) => r.commit === commit);
      return runs.length === 2 ? Object.fromEntries(runs.flatMap((r) => r.jobs).map((j: any) => [j.key, j])) : null;
    });
    expect(jobs.build.state).toBe("queued");
    expect(jobs.build.waiting).toBe(
      "no runner here has the label ubuntu-latest: it is GitHub's hosted runner label, which this server does not provide. To run the job here, register an instance runner (svc runner-token --hosted, then svc runner register … --labels ubuntu-latest), or change runs-on to self-hosted (with your runners' labels)",
    );
    // A self-hosted job's labels are the org's own: nothing to say about them.
    expect(jobs.mine.waiting).toBeNull();
    const page = await (
      await fetch(`${server.url}/acme/app/runs/${(await runsOf(api, "app")).find((r) => r.workflow.endsWith("gh.yml")).id}`, {
        headers: { cookie: owner.cookie },
      })
    ).text();
    expect(page).toContain("GitHub&#39;s hosted runner label");

    const minted = await server.cli(["runner-token", "--hosted"]);
    expect(minted.code).toBe(0);
    const reg = await client(server, { token: JSON.parse(minted.stdout).token }).post("/v1/runners/register", {
      name: "gh-like",
      os: "linux",
      arch: "x64",
      labels: ["ubuntu-latest"],
    });
    expect(reg.status).toBe(201);
    const after = (await runsOf(api, "app")).flatMap((r) => r.jobs).find((j: any) => j.key === "build");
    expect(after.waiting).toBeNull();
  });
});
