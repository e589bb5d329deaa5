// The reachability index as the server keeps it (GitStore.reachIndex): asked only for reads by id
// (never by ref name), built once for concurrent requests, reused for the same tips, extended by a
// walk of the new commits after a push, walked anew when a branch's deletion voids what it knew.
// In-process: the real context and services.
import { afterAll, beforeAll, expect, spyOn, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { User } from "../../../src/db/schema/index.ts";
import { ReachIndex } from "../../../src/git/reachability.ts";
import { openTestContext } from "../../helpers/context.ts";
import type { Ctx } from "../../../src/services/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createCommit } from "../../../src/services/repos/commits.ts";
import { getBlob, getCommit, getTree } from "../../../src/services/repos/content.ts";
import { deleteRef } from "../../../src/services/repos/refs.ts";
import { createRepo, openRepo } from "../../../src/services/repos/repos.ts";

const root = mkdtempSync(join(tmpdir(), "svc-reach-cache-"));
let ctx: Ctx & { close(): void };
let owner: Principal;
const commits: string[] = [];
const builds: ReachIndex[] = [];

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: root, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" });
  const user: User = await createUserWithOrg(ctx, { org: "acme", email: "o@example.com", name: "o", password: "a long enough password", role: "owner" });
  owner = { kind: "session", user, sessionId: "test" };
  await createRepo(ctx, owner, "acme", { name: "r" });
  for (let i = 0; i < 12; i++)
    commits.push(
      (
        await createCommit(ctx, await openRepo(ctx, owner, "acme", "r"), {
          message: `c${i}`,
          operations: [{ op: "put", path: `f${i}.txt`, content: `${i}\n` }],
        })
      ).commit,
    );
  const side = await createCommit(ctx, await openRepo(ctx, owner, "acme", "r"), {
    branch: "side",
    expected_parent: null,
    message: "side",
    operations: [{ op: "put", path: "side.txt", content: "side\n" }],
  });
  commits.push(side.commit);
  const build = ReachIndex.build.bind(ReachIndex);
  spyOn(ReachIndex, "build").mockImplementation(async (...args) => {
    const index = await build(...args);
    builds.push(index);
    return index;
  });
});
afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

test("reads by ref name never build an index; reads by id build one, once, for concurrent requests", async () => {
  await getTree(ctx, await openRepo(ctx, owner, "acme", "r"), "main", undefined);
  await getBlob(ctx, await openRepo(ctx, owner, "acme", "r"), "main", "f3.txt");
  await getCommit(ctx, await openRepo(ctx, owner, "acme", "r"), commits[11]!); // main's tip: no question either
  expect(builds.length).toBe(0);
  await Promise.all([commits[2], commits[5], commits[7]].map(async (c) => getCommit(ctx, await openRepo(ctx, owner, "acme", "r"), c!)));
  expect(builds.length).toBe(1);
  expect(builds[0]!.stats).toMatchObject({ walked: 13, incremental: false });
  await getTree(ctx, await openRepo(ctx, owner, "acme", "r"), commits[3]!, undefined);
  expect(builds.length).toBe(1);
});

test("after a push only the new commit is walked; after deleting an unmerged branch everything is", async () => {
  commits.push(
    (await createCommit(ctx, await openRepo(ctx, owner, "acme", "r"), { message: "more", operations: [{ op: "put", path: "more.txt", content: "more\n" }] }))
      .commit,
  );
  await getCommit(ctx, await openRepo(ctx, owner, "acme", "r"), commits[1]!);
  expect(builds.length).toBe(2);
  expect(builds[1]!.stats).toMatchObject({ walked: 1, incremental: true });
  await deleteRef(ctx, await openRepo(ctx, owner, "acme", "r"), "refs/heads/side", undefined);
  await expect(getCommit(ctx, await openRepo(ctx, owner, "acme", "r"), commits[12]!)).rejects.toThrow("commit not found");
  expect(builds.length).toBe(3);
  expect(builds[2]!.stats).toMatchObject({ walked: 13, incremental: false });
  expect(ctx.git.cacheBytes().reach_indexes).toBeGreaterThan(0);
});
