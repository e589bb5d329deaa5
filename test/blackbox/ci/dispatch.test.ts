// Running a workflow by hand (issue 29; POST /v1/orgs/{org}/repos/{repo}/runs): the file read at
// the ref, inputs checked against its workflow_dispatch inputs (typed, defaults filled), a run
// with event workflow_dispatch that a real agent runs; 422 per-input problems, 404 for unknown
// refs and files, access through repo:write with readers of other orgs masked as 404.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, person, type Person } from "../../helpers/api.ts";
import type { RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, commitFiles, finishedRun, logOf, startCiServer, waitForRunById } from "./helpers.ts";

let ci: CiServer;
let server: RunningServer;
let owner: Person;
let api: Api;
let sha = "";

const DEPLOY = [
  "name: Deploy",
  "on:",
  "  workflow_dispatch:",
  "    inputs:",
  "      target: { type: choice, options: [staging, prod], required: true }",
  "      dry: { type: boolean, default: false }",
  '      note: { type: string, default: "none" }',
  "      extra: { type: string }",
  "jobs:",
  "  deploy:",
  "    name: deploy to ${{ inputs.target }}",
  "    runs-on: [self-hosted, disp]",
  "    steps:",
  '      - run: echo "event=${{ github.event_name }} ref=${{ github.ref }}"',
  "",
].join("\n");

beforeAll(async () => {
  ci = await startCiServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" }, repos: ["app"] });
  ({ server, owner, api } = ci);
  sha = await commitFiles(api, "app", {
    ".svc/workflows/deploy.yml": DEPLOY,
    ".svc/workflows/ci.yml": "on: change\njobs:\n  t:\n    runs-on: [self-hosted, nobody-has-this]\n    steps: [ { run: 'true' } ]\n",
    ".svc/workflows/echo.yml":
      'on:\n  workflow_dispatch:\n    inputs:\n      target: { type: string, required: true }\n      dry: { type: boolean, default: true }\njobs:\n  e:\n    runs-on: [self-hosted, disp]\n    steps:\n      - run: echo "target=${{ inputs.target }} dry=${{ inputs.dry }} event=${{ github.event_name }}"\n',
    ".svc/workflows/broken.yml": "on: workflow_dispatch\njobs:\n  t:\n    runs-on: [self-hosted, disp]\n    steps: [ { run: '${{ nope( }}' } ]\n",
  });
  await ci.machine({ name: "disp", labels: ["disp"] });
});

afterAll(() => ci?.[Symbol.asyncDispose]());

const dispatch = (body: unknown, who = api) => who.post("/v1/orgs/acme/repos/app/runs", body);

describe("workflow_dispatch", () => {
  test("201: a run with the typed inputs (defaults filled) and the caller as actor, run by the agent", async () => {
    const r = await dispatch({ workflow: "deploy.yml", ref: "main", inputs: { target: "staging", dry: "true" } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      workflow: ".svc/workflows/deploy.yml",
      commit: sha,
      ref: "refs/heads/main",
      event: "workflow_dispatch",
      inputs: { target: "staging", dry: true, note: "none", extra: "" },
      actor: { id: owner.id, handle: owner.handle },
    });
    // Plan-time values read the inputs: the job's name.
    expect(r.body.jobs.map((j: any) => j.key)).toEqual(["deploy to staging"]);
    const done = await finishedRun(api, "app", sha);
    expect(done.id).toBe(r.body.id);
    expect(done.state).toBe("success");
    expect(await logOf(server, owner, "app", done.id, done.jobs[0].id)).toContain("event=workflow_dispatch ref=refs/heads/main");
    // The path form and the default ref work; the same commit dispatched again is a new run.
    const again = await dispatch({ workflow: ".svc/workflows/deploy.yml", inputs: { target: "prod" } });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(r.body.id);
    expect(again.body.inputs).toEqual({ target: "prod", dry: false, note: "none", extra: "" });
  });

  test("steps read the inputs through the runner (inputs.*)", async () => {
    const r = await dispatch({ workflow: "echo.yml", inputs: { target: "blue" } });
    expect(r.status).toBe(201);
    const done = await waitForRunById(api, "app", r.body.id, "the echo run to finish");
    expect(done.state).toBe("success");
    expect(await logOf(server, owner, "app", done.id, done.jobs[0].id)).toContain("target=blue dry=true event=workflow_dispatch");
  });

  test("422: every input problem by name; no workflow_dispatch; a malformed file", async () => {
    const r = await dispatch({ workflow: "deploy.yml", inputs: { target: "qa", dry: "maybe", note: 3, who: "x" } });
    expect(r.status).toBe(422);
    expect(r.body.inputs).toEqual({
      who: "unknown input: the workflow does not declare it",
      target: 'must be one of "staging", "prod"',
      dry: "must be a boolean (true or false)",
      note: "must be a string",
    });
    expect((await dispatch({ workflow: "deploy.yml", inputs: {} })).body.inputs).toEqual({ target: "required: the workflow declares no default" });
    const push = await dispatch({ workflow: "ci.yml" });
    expect(push.status).toBe(422);
    expect(push.body.error).toBe(".svc/workflows/ci.yml has no workflow_dispatch trigger");
    const broken = await dispatch({ workflow: "broken.yml" });
    expect(broken.status).toBe(422);
    expect(broken.body.error).toStartWith(".svc/workflows/broken.yml:5:");
    expect((await dispatch({ inputs: {} })).status).toBe(422);
  });

  test("404 for an unknown ref or file; writers only, other orgs' people see 404", async () => {
    expect((await dispatch({ workflow: "deploy.yml", ref: "nope", inputs: { target: "prod" } })).status).toBe(404);
    expect((await dispatch({ workflow: "gone.yml" })).status).toBe(404);
    expect((await dispatch({ workflow: "../../README.md" })).status).toBe(404);
    const viewer = await person(server, "acme", "viewer@acme.example", "viewer");
    expect((await dispatch({ workflow: "deploy.yml", inputs: { target: "prod" } }, caller(server, viewer))).status).toBe(403);
    const stranger = await person(server, "other", "owner@other.example", "owner");
    expect((await dispatch({ workflow: "deploy.yml", inputs: { target: "prod" } }, caller(server, stranger))).status).toBe(404);
  });
});
