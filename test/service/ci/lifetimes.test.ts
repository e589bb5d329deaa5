// CI clocks with the service clock instead of waiting (SPEC §3.1, §3.2, §4.1; issue 13): the
// heartbeat timeout (2 minutes), timeout-minutes, the registration token's hour, the online
// window, the queued job's day; and many machines claiming at once. In-process: the real
// context and HTTP application driven with app.handle(), the trigger jobs drained by hand.
import { describe, expect, test } from "bun:test";
import { sweepCi } from "../../../src/services/ci/sweeper.ts";
import { ciHarnesses } from "./harness.ts";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const T = 60_000;

let t = 0;
const baseHarness = ciHarnesses("clock", () => t);

async function harness() {
  t = Date.now();
  const { ctx, call, owner, drain, push, machine } = await baseHarness();
  const claim = (credential: string) => call("POST", "/v1/runners/claim", { token: credential });
  async function run(commit: string) {
    const runs = (await owner("GET", "/v1/orgs/acme/repos/app/runs")).body.runs;
    return runs.find((r: any) => r.commit === commit);
  }
  return { ctx, call, owner, drain, push, machine, claim, run };
}

const simple = (extra = "") => `on: push\njobs:\n  j:\n    runs-on: [self-hosted]\n${extra}    steps:\n      - run: echo\n`;

describe("heartbeat timeout: two minutes", () => {
  test(
    "a silent job fails at 2 min + 1 s (not at 2 min − 1 s); heartbeats keep it alive; its token dies",
    async () => {
      const h = await harness();
      const m = await h.machine("m");
      const sha = await h.push(simple());
      const t0 = t;
      const c = await h.claim(m);
      expect(c.status).toBe(200);
      const beat = () => h.call("POST", `/v1/runner/jobs/${c.body.job_id}/heartbeat`, { token: c.body.token });

      t = t0 + 2 * MINUTE - SECOND;
      await sweepCi(h.ctx);
      expect((await h.run(sha)).jobs[0].state).toBe("running");
      expect((await beat()).body).toEqual({ cancel: false });

      t = t0 + 4 * MINUTE - 2 * SECOND;
      await sweepCi(h.ctx);
      expect((await h.run(sha)).jobs[0].state).toBe("running");

      t = t0 + 4 * MINUTE;
      await sweepCi(h.ctx);
      const run = await h.run(sha);
      expect(run.state).toBe("failure");
      expect(run.jobs[0]).toMatchObject({ state: "failure", error: "the runner stopped responding: no heartbeat for 121 seconds" });
      expect((await beat()).status).toBe(401);
      // The machine is free again.
      expect((await h.claim(m)).status).toBe(204);
    },
    T,
  );
});

describe("timeout-minutes", () => {
  test(
    "past its timeout the heartbeat answers cancel; the runner's cancelled verdict records the timeout",
    async () => {
      const h = await harness();
      const m = await h.machine("m");
      const sha = await h.push(simple("    timeout-minutes: 1\n"));
      const t0 = t;
      const c = await h.claim(m);
      const job = `/v1/runner/jobs/${c.body.job_id}`;
      t = t0 + MINUTE - SECOND;
      await sweepCi(h.ctx);
      expect((await h.call("POST", `${job}/heartbeat`, { token: c.body.token })).body).toEqual({ cancel: false });
      t = t0 + MINUTE + SECOND;
      await sweepCi(h.ctx);
      expect((await h.call("POST", `${job}/heartbeat`, { token: c.body.token })).body).toEqual({ cancel: true });
      expect((await h.call("POST", `${job}/complete`, { token: c.body.token, body: { verdict: "cancelled" } })).status).toBe(204);
      expect((await h.run(sha)).jobs[0]).toMatchObject({ state: "cancelled", verdict: "cancelled", error: "the job exceeded its timeout of 1 minutes" });
    },
    T,
  );

  test(
    "a runner that does not answer the timeout is cancelled by the server a heartbeat timeout later",
    async () => {
      const h = await harness();
      const m = await h.machine("m");
      const sha = await h.push(simple("    timeout-minutes: 1\n"));
      const t0 = t;
      const c = await h.claim(m);
      t = t0 + MINUTE + SECOND;
      await sweepCi(h.ctx);
      t = t0 + 2 * MINUTE;
      await h.call("POST", `/v1/runner/jobs/${c.body.job_id}/heartbeat`, { token: c.body.token });
      t = t0 + 3 * MINUTE + SECOND;
      await sweepCi(h.ctx);
      expect((await h.run(sha)).jobs[0]).toMatchObject({ state: "cancelled", verdict: null, error: "the job exceeded its timeout of 1 minutes" });
    },
    T,
  );
});

describe("registration token: one hour; online window: 60 s; queue: one day", () => {
  test(
    "a token works at 1 h − 1 s and is the same 401 as an unknown token at 1 h + 1 s",
    async () => {
      const h = await harness();
      const t0 = t;
      const a = (await h.owner("POST", "/v1/orgs/acme/runners/registration-token", {})).body.token;
      const b = (await h.owner("POST", "/v1/orgs/acme/runners/registration-token", {})).body.token;
      const body = { name: "m", os: "linux", arch: "x64" };
      t = t0 + HOUR - SECOND;
      expect((await h.call("POST", "/v1/runners/register", { token: a, body })).status).toBe(201);
      t = t0 + HOUR + SECOND;
      const late = await h.call("POST", "/v1/runners/register", { token: b, body: { ...body, name: "n" } });
      const unknown = await h.call("POST", "/v1/runners/register", { token: `svcg_${"a".repeat(16)}_${"b".repeat(32)}`, body });
      expect({ status: late.status, text: late.text }).toEqual({ status: 401, text: unknown.text });
    },
    T,
  );

  test(
    "a machine is online for 60 s after its last call, then offline; busy while a job runs",
    async () => {
      const h = await harness();
      const m = await h.machine("m");
      const t0 = t;
      const state = async () => (await h.owner("GET", "/v1/orgs/acme/runners")).body.runners[0].state;
      expect(await state()).toBe("online");
      t = t0 + 60 * SECOND;
      expect(await state()).toBe("online");
      t = t0 + 61 * SECOND;
      expect(await state()).toBe("offline");
      expect((await h.claim(m)).status).toBe(204);
      expect(await state()).toBe("online");
      await h.push(simple());
      expect((await h.claim(m)).status).toBe(200);
      t += 10 * MINUTE;
      expect(await state()).toBe("busy");
    },
    T,
  );

  test(
    "a job no machine takes within a day fails",
    async () => {
      const h = await harness();
      const sha = await h.push(simple());
      t += 24 * HOUR - SECOND;
      await sweepCi(h.ctx);
      expect((await h.run(sha)).jobs[0].state).toBe("queued");
      t += 2 * SECOND;
      await sweepCi(h.ctx);
      expect((await h.run(sha)).jobs[0]).toMatchObject({ state: "failure", error: "no runner took the job within 24 hours" });
    },
    T,
  );
});

describe("concurrent claims", () => {
  test(
    "40 machines draining 200 jobs: every job claimed exactly once; a machine never holds two",
    async () => {
      const h = await harness();
      const machines = await Promise.all(Array.from({ length: 40 }, (_, i) => h.machine(`m${i}`)));
      const cells = Array.from({ length: 200 }, (_, i) => i).join(", ");
      const sha = await h.push(
        `on: push\njobs:\n  j:\n    runs-on: [self-hosted]\n    strategy:\n      matrix:\n        n: [${cells}]\n    steps:\n      - run: echo\n`,
      );
      const claimed: string[] = [];
      let busy = 0;
      await Promise.all(
        machines.map(async (m) => {
          for (;;) {
            // Two claims at once by one machine: at most one job.
            const [a, b] = await Promise.all([h.claim(m), h.claim(m)]);
            const got = [a, b].filter((x) => x.status === 200);
            busy += [a, b].filter((x) => x.status === 409).length;
            expect(got.length).toBeLessThanOrEqual(1);
            if (!got.length) return;
            const c = got[0]!;
            claimed.push(c.body.job_id);
            expect((await h.call("POST", `/v1/runner/jobs/${c.body.job_id}/complete`, { token: c.body.token, body: { verdict: "success" } })).status).toBe(204);
          }
        }),
      );
      expect(claimed.length).toBe(200);
      expect(new Set(claimed).size).toBe(200);
      expect(busy).toBeGreaterThan(0);
      const run = await h.run(sha);
      expect(run.state).toBe("success");
    },
    T,
  );
});
