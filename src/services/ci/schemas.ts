// Request and response shapes of the CI domain (SPEC §2.5–§2.7, §4.1; DECISIONS §3 runner per-job
// calls, runs and jobs). Enumerated values arrive as plain strings and are checked by the
// services, so a value outside an enumeration is the 422 SPEC asks for, not a schema 400.
import { Type, type Static } from "@sinclair/typebox";
import { NextCursor, NullableString } from "../schemas.ts";

const Millis = (description = "epoch milliseconds") => Type.Integer({ description });

export const RunnerPolicy = Type.Object(
  {
    hosted: Type.String({ description: "`allowed` or `disabled`" }),
    self_hosted: Type.String({ description: "`all`, `selected` or `disabled`" }),
    self_hosted_repos: Type.Array(Type.String(), { description: "repository names, sorted; consulted only when self_hosted is `selected`" }),
  },
  { examples: [{ hosted: "allowed", self_hosted: "selected", self_hosted_repos: ["api", "web"] }] },
);
export type RunnerPolicy = Static<typeof RunnerPolicy>;

export const RunnerPolicyPatch = Type.Object({
  hosted: Type.Optional(Type.String({ examples: ["disabled"] })),
  self_hosted: Type.Optional(Type.String({ examples: ["selected"] })),
  self_hosted_repos: Type.Optional(Type.Array(Type.String(), { description: "replaced wholesale; [] clears", examples: [["api"]] })),
});
export type RunnerPolicyPatch = Static<typeof RunnerPolicyPatch>;

export const RunnerGroup = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    repo_access: Type.String({ description: "`all` or `selected`" }),
    allow_public: Type.Boolean(),
    is_default: Type.Boolean(),
    repos: Type.Array(Type.String(), { description: "repository names, sorted; empty when repo_access is `all`" }),
    runners: Type.Integer({ description: "live machines in the group" }),
    created_at: Millis(),
    updated_at: Millis(),
  },
  {
    examples: [
      {
        id: "k3x9m2p7q4r8s6t1",
        name: "gpu",
        repo_access: "selected",
        allow_public: false,
        is_default: false,
        repos: ["trainer"],
        runners: 2,
        created_at: 1795248971422,
        updated_at: 1795248971422,
      },
    ],
  },
);
export type RunnerGroup = Static<typeof RunnerGroup>;

export const RunnerGroupList = Type.Object({ groups: Type.Array(RunnerGroup) }, { examples: [{ groups: RunnerGroup.examples }] });

export const RunnerGroupCreate = Type.Object({
  name: Type.String({ description: "1-64 characters: letters, digits, space, dot, dash, underscore; unique per org (case-folded)", examples: ["gpu"] }),
  repo_access: Type.Optional(Type.String({ description: "`all` (default) or `selected`" })),
  allow_public: Type.Optional(Type.Boolean({ description: "default false" })),
  repos: Type.Optional(Type.Array(Type.String(), { description: "repository names (used when repo_access is `selected`)" })),
});
export type RunnerGroupCreate = Static<typeof RunnerGroupCreate>;

export const RunnerGroupPatch = Type.Partial(RunnerGroupCreate);
export type RunnerGroupPatch = Static<typeof RunnerGroupPatch>;

export const RunnerJobRef = Type.Object({
  run_id: Type.String(),
  job_id: Type.String(),
  key: Type.String({ description: "the cell's human name" }),
  repo: Type.String({ description: "repository name" }),
});

export const Runner = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    labels: Type.Array(Type.String()),
    os: Type.String(),
    arch: Type.String(),
    version: Type.String(),
    ephemeral: Type.Boolean(),
    group: Type.Object({ id: Type.String(), name: Type.String() }),
    state: Type.String({ description: "`online`, `busy` or `offline` (derived)" }),
    last_seen_at: Millis(),
    created_at: Millis(),
    job: Type.Union([RunnerJobRef, Type.Null()]),
  },
  {
    examples: [
      {
        id: "m2p7q4r8s6t1k3x9",
        name: "build-01",
        labels: ["self-hosted", "linux", "x64", "gpu"],
        os: "linux",
        arch: "x64",
        version: "0.1.0",
        ephemeral: false,
        group: { id: "k3x9m2p7q4r8s6t1", name: "default" },
        state: "busy",
        last_seen_at: 1795248971422,
        created_at: 1795248000000,
        job: { run_id: "r4r8s6t1k3x9m2p7", job_id: "j6t1k3x9m2p7q4r8", key: "test (node=20)", repo: "api" },
      },
    ],
  },
);
export type Runner = Static<typeof Runner>;

export const RunnerList = Type.Object({ runners: Type.Array(Runner) }, { examples: [{ runners: Runner.examples }] });

export const RegistrationTokenCreate = Type.Object({
  group: Type.Optional(Type.String({ description: "group name; default `default`", examples: ["default"] })),
});
export type RegistrationTokenCreate = Static<typeof RegistrationTokenCreate>;

export const RegistrationToken = Type.Object(
  {
    token: Type.String({ description: "`svcg_…`, shown once, valid one hour, for one machine" }),
    expires_at: Millis(),
    group: NullableString({ description: "group name (null for an instance token)" }),
    command: Type.String({ description: "the full runner registration command line" }),
  },
  {
    examples: [
      {
        token: "svcg_k3x9m2p7q4r8s6t1_abcdefghijklmnopqrstuvwxyz234567",
        expires_at: 1795252571422,
        group: "default",
        command: "svc runner register --url https://git.example.com --token svcg_k3x9m2p7q4r8s6t1_abcdefghijklmnopqrstuvwxyz234567",
      },
    ],
  },
);
export type RegistrationToken = Static<typeof RegistrationToken>;

export const RunnerRegister = Type.Object({
  name: Type.Optional(Type.Unknown({ description: "required: letters, digits, dot, dash, underscore; at most 64", examples: ["build-01"] })),
  os: Type.Optional(Type.Unknown({ description: "required: linux, macos or windows" })),
  arch: Type.Optional(Type.Unknown({ description: "required: x64 or arm64" })),
  labels: Type.Optional(Type.Unknown({ description: "custom labels only (same characters as names; at most 32)" })),
  version: Type.Optional(Type.Unknown({ description: "agent version, at most 64 characters" })),
  ephemeral: Type.Optional(Type.Unknown({ description: "boolean, default false" })),
});
export type RunnerRegister = Static<typeof RunnerRegister>;

export const RunnerRegistered = Type.Object(
  {
    runner_id: Type.String(),
    credential: Type.String({ description: "`svcr_…`, shown once" }),
    org: NullableString({ description: "null for an instance (hosted) runner" }),
    group: NullableString({ description: "group name; null for an instance runner" }),
    labels: Type.Array(Type.String()),
  },
  {
    examples: [
      {
        runner_id: "m2p7q4r8s6t1k3x9",
        credential: "svcr_m2p7q4r8s6t1k3x9_abcdefghijklmnopqrstuvwxyz234567",
        org: "acme",
        group: "default",
        labels: ["self-hosted", "linux", "x64", "gpu"],
      },
    ],
  },
);
export type RunnerRegistered = Static<typeof RunnerRegistered>;

export const Claim = Type.Object(
  {
    job_id: Type.String(),
    token: Type.String({ description: "per-job `svc_…` token with repo:read on the job's repository, revoked at the verdict" }),
    runner_url: Type.String({ description: "the base address the machine reached" }),
  },
  { examples: [{ job_id: "j6t1k3x9m2p7q4r8", token: "svc_t1k3x9m2p7q4r8s6_abcdefghijklmnopqrstuvwxyz234567", runner_url: "https://git.example.com" }] },
);
export type Claim = Static<typeof Claim>;

export const JobStep = Type.Object({
  name: Type.String(),
  run: Type.String(),
  env: Type.Record(Type.String(), Type.String()),
  // Format 2 (issue 29): templates the runner evaluates per step; absent in format 1.
  id: Type.Optional(NullableString()),
  if: Type.Optional(NullableString({ description: "the step's condition (format 2)" })),
  shell: Type.Optional(NullableString()),
  working_directory: Type.Optional(NullableString()),
  continue_on_error: Type.Optional(Type.Union([Type.Boolean(), Type.String()])),
  timeout_s: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  uses: Type.Optional(
    NullableString({
      description: "an action reference (`./path`, `org/repo[/path]@ref` on this server, or a built-in such as `actions/checkout@v4`): the runner runs it",
    }),
  ),
  with: Type.Optional(Type.Record(Type.String(), Type.String())),
});

export const JobDescription = Type.Object(
  {
    job_id: Type.String(),
    run_id: Type.String(),
    key: Type.String(),
    repo: Type.String({ description: "org/name" }),
    clone_url: Type.String({ description: "clone with the job token (Basic or Bearer); for a change from a fork, the fork" }),
    commit: Type.String(),
    ref: Type.String(),
    runs_on: Type.Array(Type.String()),
    env: Type.Record(Type.String(), Type.String()),
    steps: Type.Array(JobStep),
    timeout_s: Type.Integer(),
    heartbeat_s: Type.Integer({ description: "how often the runner should call heartbeat" }),
    // Issue 29 (plan-29 §2.3), additive.
    format: Type.Optional(Type.Integer({ description: "1: env and steps are expanded; 2: they are templates over `contexts`" })),
    attempt: Type.Optional(Type.Integer()),
    workflow: Type.Optional(Type.String()),
    event: Type.Optional(Type.String()),
    actor: Type.Optional(Type.Union([Type.Object({ id: Type.String(), handle: Type.String() }), Type.Null()])),
    contexts: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          "github, needs, inputs, vars, matrix, strategy, job (format 2); github as GitHub names it, with head_ref, base_ref and event.pull_request for a change run (docs/api.md)",
      }),
    ),
    secrets: Type.Optional(Type.Record(Type.String(), Type.String(), { description: "the secrets the job references; none for a run from a fork" })),
    mask: Type.Optional(Type.Array(Type.String())),
    defaults: Type.Optional(Type.Object({ shell: NullableString(), working_directory: NullableString() })),
    outputs: Type.Optional(Type.Record(Type.String(), Type.String(), { description: "job outputs: templates over steps, evaluated at the job's end" })),
    continue_on_error: Type.Optional(Type.Union([Type.Boolean(), Type.String()])),
  },
  {
    examples: [
      {
        job_id: "j6t1k3x9m2p7q4r8",
        run_id: "r4r8s6t1k3x9m2p7",
        key: "test (node=20)",
        repo: "acme/api",
        clone_url: "https://git.example.com/acme/api.git",
        commit: "9fceb02d0ae598e95dc970b74767f19372d61af8",
        ref: "refs/heads/main",
        runs_on: ["self-hosted", "linux"],
        env: { CI: "true" },
        steps: [{ name: "test", run: "make test", env: {} }],
        timeout_s: 3600,
        heartbeat_s: 5,
      },
    ],
  },
);
export type JobDescription = Static<typeof JobDescription>;

export const LogAppend = Type.Object({
  offset: Type.Integer({ minimum: 0, description: "byte offset (UTF-8) of `text` in the job's log" }),
  text: Type.String({ description: "at most 1 MiB of UTF-8" }),
});
export type LogAppend = Static<typeof LogAppend>;

export const LogAck = Type.Object(
  { offset: Type.Integer({ description: "the log's size after the append: the next offset to send" }) },
  { examples: [{ offset: 2048 }] },
);

export const StepUpdate = Type.Object({
  state: Type.String({ description: "`running`, `success`, `failure`, `skipped` or `cancelled`" }),
  exit_code: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
});
export type StepUpdate = Static<typeof StepUpdate>;

export const HeartbeatAnswer = Type.Object({ cancel: Type.Boolean() }, { examples: [{ cancel: false }] });

export const JobComplete = Type.Object({
  verdict: Type.String({ description: "`success`, `failure` or `cancelled`" }),
  outputs: Type.Optional(Type.Record(Type.String(), Type.String(), { description: "the job's outputs (at most 50, 1 MiB in all)" })),
});
export type JobComplete = Static<typeof JobComplete>;

export const RunJob = Type.Object({
  id: Type.String(),
  key: Type.String(),
  name: Type.String({ description: "the workflow's job id (`build`), shared by a matrix job's cells: what `needs` names" }),
  attempt: Type.Integer({ description: "the attempt of the run this job belongs to" }),
  needs: Type.Array(Type.String(), { description: "workflow job ids this job waits for" }),
  condition: NullableString({ description: "the job's `if` as written; null without one" }),
  runs_on: Type.Array(Type.String()),
  state: Type.String({
    description:
      "`pending` (waits for its needs), `queued`, `running`, `success`, `failure`, `cancelled` or `skipped` (its `if` was false or a need did not succeed)",
  }),
  skip_reason: NullableString({ description: "why a skipped job was skipped (`needs build failed`, `if: … was false`)" }),
  reused_from: NullableString({ description: "a failed-only re-run: the id of the earlier attempt's job whose success this row stands for (not run again)" }),
  verdict: NullableString(),
  error: NullableString(),
  waiting: NullableString({
    description:
      "why a pending or queued job is not running, when the server can tell (`waiting for build, test`; runs-on names GitHub's hosted runner labels no runner here has, with how to run it here); null otherwise",
  }),
  runner: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }), Type.Null()]),
  started_at: Type.Union([Type.Integer(), Type.Null()]),
  finished_at: Type.Union([Type.Integer(), Type.Null()]),
  steps: Type.Array(Type.Object({ name: Type.String(), state: Type.String(), exit_code: Type.Union([Type.Integer(), Type.Null()]) })),
});

export const Run = Type.Object(
  {
    id: Type.String(),
    repo: Type.String(),
    workflow: Type.String({ description: "path of the workflow file" }),
    commit: Type.String(),
    ref: Type.String(),
    event: Type.String(),
    state: Type.String({ description: "`queued`, `running`, `success`, `failure` or `cancelled` (of the attempt shown)" }),
    error: NullableString({ description: "why the run failed before any job ran (malformed workflow: file:line:column: problem)" }),
    actor: Type.Union([Type.Object({ id: Type.String(), handle: Type.String() }), Type.Null()], {
      description: "who pushed or dispatched; null for schedules and mirrors",
    }),
    inputs: Type.Union([Type.Record(Type.String(), Type.Union([Type.String(), Type.Boolean(), Type.Number()])), Type.Null()], {
      description: "a workflow_dispatch run's inputs, validated and typed (booleans as booleans); null for other events",
    }),
    concurrency_group: NullableString({ description: "the workflow's evaluated `concurrency.group`, or null" }),
    waiting: NullableString({ description: "why the whole run waits (`waiting for run … in concurrency group …`), or null" }),
    trusted: Type.Boolean({ description: "false for a change from a fork: its jobs get no secrets and their token reads only the fork" }),
    created_at: Millis(),
    finished_at: Type.Union([Type.Integer(), Type.Null()]),
    attempt: Type.Integer({ description: "the attempt shown (the latest unless `?attempt=N` asked for another); a re-run adds one" }),
    attempts: Type.Array(
      Type.Object({ attempt: Type.Integer(), state: Type.String(), created_at: Millis(), finished_at: Type.Union([Type.Integer(), Type.Null()]) }),
      { description: "every attempt of the run, oldest first" },
    ),
    jobs: Type.Array(RunJob, { description: "the jobs of the attempt shown" }),
  },
  {
    examples: [
      {
        id: "r4r8s6t1k3x9m2p7",
        repo: "api",
        workflow: ".svc/workflows/ci.yml",
        commit: "9fceb02d0ae598e95dc970b74767f19372d61af8",
        ref: "refs/heads/main",
        event: "push",
        state: "success",
        error: null,
        actor: { id: "u3k9x2m7p4q8r6s1", handle: "ada" },
        inputs: null,
        concurrency_group: null,
        waiting: null,
        trusted: true,
        created_at: 1795248971422,
        finished_at: 1795249031422,
        attempt: 1,
        attempts: [{ attempt: 1, state: "success", created_at: 1795248971422, finished_at: 1795249031422 }],
        jobs: [
          {
            id: "j6t1k3x9m2p7q4r8",
            key: "test",
            name: "test",
            attempt: 1,
            needs: [],
            condition: null,
            runs_on: ["self-hosted"],
            state: "success",
            skip_reason: null,
            reused_from: null,
            verdict: "success",
            error: null,
            waiting: null,
            runner: { id: "m2p7q4r8s6t1k3x9", name: "build-01" },
            started_at: 1795248972000,
            finished_at: 1795249031000,
            steps: [{ name: "test", state: "success", exit_code: 0 }],
          },
        ],
      },
    ],
  },
);
export type Run = Static<typeof Run>;

export const RunList = Type.Object({ runs: Type.Array(Run), next_cursor: NextCursor }, { examples: [{ runs: Run.examples, next_cursor: null }] });

// ---- Checks of a commit (issue 28) ----------------------------------------------------------------

/** One check result of a commit: a CI job's state under its key. */
export const Check = Type.Object(
  {
    key: Type.String({ description: "the check's name (the workflow job's key)" }),
    state: Type.String({ description: "queued, running, success, failure, cancelled, skipped (a skipped check passes)" }),
    run_id: Type.String(),
    job_id: Type.String(),
  },
  { examples: [{ key: "test", state: "success", run_id: "r3k9x2m7p4q8s6t1", job_id: "j7p4q8s6t1r3k9x2" }] },
);
export type Check = Static<typeof Check>;

export const CheckList = Type.Object(
  { checks: Type.Array(Check, { description: "by key" }) },
  { examples: [{ checks: [{ key: "test", state: "success", run_id: "r3k9x2m7p4q8s6t1", job_id: "j7p4q8s6t1r3k9x2" }] }] },
);
export type CheckList = Static<typeof CheckList>;

// ---- secrets and variables (issue 29, plan-29 §2.1) ----

/**
 * PUT body of a secret or variable. Why Unknown and checked by the service: a schema refusal's
 * message quotes the offending value (http/errors.ts validationMessage), and this value may be a
 * secret; the service's 422s are fixed text.
 */
export const CiValuePut = Type.Unknown({
  description:
    "`{ value, repos? }`: value a non-empty string of at most 48 KiB; repos (organization level only) a list of repository names the value reaches, or null/absent for every repository",
  examples: [{ value: "s3cr3t", repos: ["api"] }],
});

const ReposReached = Type.Union([Type.Array(Type.String()), Type.Null()], {
  description: "organization level only: the repositories reached, sorted; null = every repository of the organization",
});

export const CiSecret = Type.Object(
  { name: Type.String(), repos: Type.Optional(ReposReached), updated_at: Millis() },
  { description: "a secret's name and reach, never its value", examples: [{ name: "DEPLOY_TOKEN", repos: null, updated_at: 1767225600000 }] },
);
export type CiSecret = Static<typeof CiSecret>;

export const CiSecretList = Type.Object(
  { secrets: Type.Array(CiSecret, { description: "by name" }) },
  { examples: [{ secrets: [{ name: "DEPLOY_TOKEN", repos: ["api"], updated_at: 1767225600000 }] }] },
);

export const CiVariable = Type.Object(
  { name: Type.String(), value: Type.String(), repos: Type.Optional(ReposReached), updated_at: Millis() },
  { examples: [{ name: "REGION", value: "eu-west-1", repos: ["api", "web"], updated_at: 1767225600000 }] },
);
export type CiVariable = Static<typeof CiVariable>;

export const CiVariableList = Type.Object(
  { variables: Type.Array(CiVariable, { description: "by name" }) },
  { examples: [{ variables: [{ name: "REGION", value: "eu-west-1", repos: null, updated_at: 1767225600000 }] }] },
);

// ---- Dispatch (issue 29, part C) ------------------------------------------------------------------

export const RunDispatch = Type.Unknown({
  description:
    '`{ workflow, ref?, inputs? }`: workflow a file name (`ci.yml`) or path (`.svc/workflows/ci.yml`); ref a branch, tag or full ref (default: the default branch); inputs the workflow_dispatch inputs by name (booleans as true/false or "true"/"false", numbers as numbers or their text, the rest strings)',
  examples: [{ workflow: "deploy.yml", ref: "main", inputs: { environment: "staging", dry_run: true } }],
});
