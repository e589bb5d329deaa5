// The contribution graph's read path in-process (services/discovery/contributions.ts, graph.ts):
// a repeated read is served from the written-answer cache, and every change the answer depends on
// shows in the next read with nothing invalidated by hand: a new credit, a repository made private
// or public, renamed or deleted, opting out of or into private work. Every answer is checked
// against the ContributionGraph schema.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { openTestContext } from "../../helpers/context.ts";
import type { Ctx } from "../../../src/services/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { contributionGraphJson, parseDay } from "../../../src/services/discovery/contributions.ts";
import { patchUserProfile } from "../../../src/services/discovery/profiles.ts";
import { ContributionGraph } from "../../../src/services/discovery/schemas.ts";
import { creditCommits } from "../../../src/services/discovery/store.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo, openRepo, deleteRepo, patchRepo } from "../../../src/services/repos/repos.ts";

const root = mkdtempSync(join(tmpdir(), "svc-graph-"));
let ctx: Ctx & { close(): void };
let ada: Principal;
const ids: Record<string, string> = {};
const D = parseDay("2025-03-05")!;
const RANGE = { from: "2025-03-01", to: "2025-03-31" };
let shas = 0;

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: "http://svc.test", SVC_LOG: "error" });
  const user = await createUserWithOrg(ctx, {
    org: "acme",
    email: "ada@example.com",
    name: "Ada",
    password: "a long enough password",
    role: "owner",
    handle: "ada",
  });
  ada = { kind: "session", user, sessionId: "test" };
  for (const [name, isPublic] of [
    ["app", true],
    ["lib", true],
    ["vault", false],
  ] as const) {
    ids[name] = (await createRepo(ctx, ada, "acme", { name, public: isPublic })).id;
  }
  await credit("app", D, 2);
  await credit("lib", D, 1);
  await credit("vault", D, 3);
  await credit("app", D + 1, 1);
}, 30_000);
afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Credits `n` new commits of `repo` on `day` to ada, as the recorder's transaction does. */
async function credit(repo: string, day: number, n: number): Promise<void> {
  const userId = (ada as { user: { id: string } }).user.id;
  await ctx.db.transaction((tx) =>
    creditCommits(
      tx,
      ids[repo]!,
      Array.from({ length: n }, () => ({ userId, sha: `sha-${shas++}`, day })),
    ),
  );
}

/** The answer's bytes and its parsed form (checked against the schema). */
async function read(): Promise<{ bytes: Uint8Array; g: ContributionGraph }> {
  const bytes = await contributionGraphJson(ctx, "ada", RANGE);
  const g = JSON.parse(new TextDecoder().decode(bytes));
  expect(Value.Check(ContributionGraph, g)).toBe(true);
  return { bytes, g };
}
const optIn = (on: boolean) => patchUserProfile(ctx, ada, "ada", { contrib_private_optin: on });
const day5 = (g: ContributionGraph) => g.days.find((d) => d.date === "2025-03-05");

describe("contribution graph reads", () => {
  test("a repeated read is the cached answer; a new credit shows at once", async () => {
    const first = await read();
    expect(first.g).toEqual({
      from: "2025-03-01",
      to: "2025-03-31",
      total: 4,
      private_included: false,
      days: [
        {
          day: 3,
          date: "2025-03-05",
          count: 3,
          repos: [
            { org: "acme", name: "app", count: 2 },
            { org: "acme", name: "lib", count: 1 },
          ],
        },
        { day: 4, date: "2025-03-06", count: 1, repos: [{ org: "acme", name: "app", count: 1 }] },
      ],
    });
    expect((await read()).bytes).toBe(first.bytes);
    await credit("lib", D, 2);
    const after = await read();
    expect(after.bytes).not.toBe(first.bytes);
    expect(day5(after.g)).toEqual({
      day: 3,
      date: "2025-03-05",
      count: 5,
      repos: [
        { org: "acme", name: "lib", count: 3 },
        { org: "acme", name: "app", count: 2 },
      ],
    });
  });

  test("opting in counts private work at once, unnamed; opting out removes it at once", async () => {
    const before = await read();
    await optIn(true);
    const opted = await read();
    expect(opted.g).toMatchObject({ total: 9, private_included: true });
    expect(day5(opted.g)!.count).toBe(8);
    expect(new TextDecoder().decode(opted.bytes)).not.toContain("vault");
    expect((await read()).bytes).toBe(opted.bytes);
    await optIn(false);
    const out = await read();
    expect(out.g).toEqual(before.g);
    expect(out.g.private_included).toBe(false);
  });

  test("a repository made private leaves repos at once; public again, it is named again; a rename shows at once", async () => {
    await optIn(true);
    const open = await read();
    expect(day5(open.g)!.repos.map((r) => r.name)).toEqual(["lib", "app"]);
    await patchRepo(ctx, await openRepo(ctx, ada, "acme", "lib"), { public: false });
    const closed = await read();
    expect(day5(closed.g)).toEqual({ day: 3, date: "2025-03-05", count: 8, repos: [{ org: "acme", name: "app", count: 2 }] });
    expect(new TextDecoder().decode(closed.bytes)).not.toContain("lib");
    await optIn(false);
    expect(day5((await read()).g)).toEqual({ day: 3, date: "2025-03-05", count: 2, repos: [{ org: "acme", name: "app", count: 2 }] });
    await patchRepo(ctx, await openRepo(ctx, ada, "acme", "lib"), { public: true });
    expect(day5((await read()).g)!.repos).toEqual([
      { org: "acme", name: "lib", count: 3 },
      { org: "acme", name: "app", count: 2 },
    ]);
    await patchRepo(ctx, await openRepo(ctx, ada, "acme", "lib"), { name: "core" });
    const renamed = await read();
    expect(day5(renamed.g)!.repos).toEqual([
      { org: "acme", name: "core", count: 3 },
      { org: "acme", name: "app", count: 2 },
    ]);
    ids.core = ids.lib!;
  });

  test("a deleted repository's commits leave counts and names at once; a new repository never takes its slot", async () => {
    await optIn(true);
    const before = await read();
    expect(day5(before.g)!.count).toBe(8);
    await deleteRepo(ctx, await openRepo(ctx, ada, "acme", "core"));
    const gone = await read();
    expect(day5(gone.g)).toEqual({ day: 3, date: "2025-03-05", count: 5, repos: [{ org: "acme", name: "app", count: 2 }] });
    expect(gone.g.total).toBe(6);
    // The new repository's first credit lands on a day whose blob still holds core's entry.
    ids.fresh = (await createRepo(ctx, ada, "acme", { name: "fresh", public: true })).id;
    await credit("fresh", D, 1);
    expect(day5((await read()).g)).toEqual({
      day: 3,
      date: "2025-03-05",
      count: 6,
      repos: [
        { org: "acme", name: "app", count: 2 },
        { org: "acme", name: "fresh", count: 1 },
      ],
    });
    await optIn(false);
  });
});
