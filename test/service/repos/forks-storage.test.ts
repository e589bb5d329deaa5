// Shared packs across the grace period (in-process, the clock moved with setClock): a fork names
// its parent's pack files; the parent's GC and sweep keep the files while the fork names them; a
// fork's compaction and GC never rewrite or delete shared packs; purge of a deleted parent keeps
// what the fork names; files are deleted once no repository names them.
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq, isNull } from "drizzle-orm";
import type { User } from "../../../src/db/schema/index.ts";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Ctx } from "../../../src/services/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { compactRepo, gcRepo, GRACE_MS, sweepRepo } from "../../../src/services/git/maintenance.ts";
import { sharePacks } from "../../../src/services/git/share.ts";
import { livePacks } from "../../../src/services/git/store.ts";
import { checkRepo, findOrphans } from "../../../src/services/ops/fsck.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createCommit } from "../../../src/services/repos/commits.ts";
import { createFork, runFork } from "../../../src/services/repos/forks.ts";
import { purgeRepoStorage } from "../../../src/services/git/purge.ts";
import { createRepo, openRepo, deleteRepo, getRepo } from "../../../src/services/repos/repos.ts";
import { setClock } from "../../../src/util/clock.ts";

const { jobs } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-forks-storage-"));
let ctx: Ctx & { close(): void };
let owner: Principal;
let offset = 0;
let restore: () => void;

const session = (user: User): Principal => ({ kind: "session", user, sessionId: "test" });
const files = (repoId: string) => {
  const d = join(root, "data", "objects", "repos", repoId, "packs");
  return existsSync(d) ? readdirSync(d).sort() : [];
};
const commit = async (repo: string, i: number) =>
  createCommit(ctx, await openRepo(ctx, owner, "acme", repo), {
    message: `c${i}`,
    operations: [{ op: "put", path: `f${i}.txt`, content: `${i}\n`.repeat(50) }],
  });
/** Moves the clock past the sweep's grace period. */
const later = () => (offset += GRACE_MS + 60_000);

beforeAll(async () => {
  restore = setClock(() => Date.now() + offset);
  ctx = await openTestContext({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: "http://svc.test", SVC_LOG: "error" });
  owner = session(await createUserWithOrg(ctx, { org: "acme", email: "olga@example.com", name: "olga", password: "a long enough password", role: "owner" }));
});
beforeEach(() => ctx.facts.fresh());
afterAll(() => {
  restore();
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Runs the queued purge jobs as the worker would (each is idempotent), then marks them done. */
async function runPurges(): Promise<void> {
  const queued = await ctx.db.read
    .select()
    .from(jobs)
    .where(and(eq(jobs.kind, "repo.purge"), isNull(jobs.doneAt)));
  for (const j of queued) await purgeRepoStorage(ctx, j.payload as { repoId: string; shared?: string[] });
  await ctx.db.transaction(async (tx) => void (await tx.update(jobs).set({ doneAt: Date.now() }).where(eq(jobs.kind, "repo.purge"))));
}

/** Forks acme/<from> into acme/<to> and runs the fork job as the worker would. */
async function fork(from: string, to: string): Promise<string> {
  const body = await createFork(ctx, await openRepo(ctx, owner, "acme", from), { org: "acme", name: to });
  const parent = await getRepo(ctx, await openRepo(ctx, owner, "acme", from));
  await runFork(ctx, { forkId: body.id, parentId: parent.id });
  ctx.facts.fresh();
  expect((await getRepo(ctx, await openRepo(ctx, owner, "acme", to))).fork_state).toBe("ready");
  return body.id;
}

test("parent GC and sweep keep the files the fork names; the fork stays sound", async () => {
  await createRepo(ctx, owner, "acme", { name: "base", public: true });
  for (let i = 0; i < 4; i++) await commit("base", i);
  const base = (await getRepo(ctx, await openRepo(ctx, owner, "acme", "base"))).id;
  const before = files(base);
  expect(before.length).toBe(8);
  const forkId = await fork("base", "base-fork");
  expect(files(forkId)).toEqual([]);
  // The fork's compaction never merges the shared packs into a private copy.
  expect(await compactRepo(ctx, { repoId: forkId })).toBe(0);
  expect(files(forkId)).toEqual([]);
  // A fork with only shared packs has nothing of its own to collect.
  expect(await gcRepo(ctx, { repoId: forkId })).toMatchObject({ packsReplaced: 0 });

  expect((await gcRepo(ctx, { repoId: base })).packsReplaced).toBe(4);
  later();
  await sweepRepo(ctx, { repoId: base });
  // The parent's old rows are gone, but every file the fork names is still there.
  expect(files(base).length).toBe(10);
  expect((await checkRepo(ctx, { id: forkId, name: "acme/base-fork" })).problems).toEqual([]);
  expect((await checkRepo(ctx, { id: base, name: "acme/base" })).problems).toEqual([]);
  expect(await findOrphans(ctx)).toEqual([]);
});

test("the fork's GC repacks only its own objects; shared packs stay, and files go once nobody names them", async () => {
  const base = (await getRepo(ctx, await openRepo(ctx, owner, "acme", "base"))).id;
  const forkId = (await getRepo(ctx, await openRepo(ctx, owner, "acme", "base-fork"))).id;
  await commit("base-fork", 10);
  await commit("base-fork", 11);
  const shared = (await livePacks(ctx.db.read, forkId)).filter((p) => p.storageRepoId !== forkId);
  expect(shared.length).toBe(4);
  const gc = await gcRepo(ctx, { repoId: forkId });
  expect(gc.packsReplaced).toBe(2);
  // Two commits, their trees and blobs: only what no shared pack holds.
  expect(gc.objects).toBe(6);
  const live = await livePacks(ctx.db.read, forkId);
  expect(
    live
      .filter((p) => p.storageRepoId !== forkId)
      .map((p) => p.name)
      .sort(),
  ).toEqual(shared.map((p) => p.name).sort());
  expect(live.filter((p) => p.storageRepoId === forkId).length).toBe(1);
  expect((await checkRepo(ctx, { id: forkId, name: "acme/base-fork" })).problems).toEqual([]);
  // Again: nothing to do.
  expect((await gcRepo(ctx, { repoId: forkId })).packsReplaced).toBe(0);

  // Once the fork is deleted nobody names the parent's replaced files: the parent's sweep deletes them.
  await deleteRepo(ctx, await openRepo(ctx, owner, "acme", "base-fork"));
  await runPurges();
  expect(files(forkId)).toEqual([]);
  later();
  expect(await sweepRepo(ctx, { repoId: base })).toBe(8);
  expect(files(base).length).toBe(2);
  expect((await checkRepo(ctx, { id: base, name: "acme/base" })).problems).toEqual([]);
  expect(await findOrphans(ctx)).toEqual([]);
});

test("purging a deleted parent keeps what its fork names; the fork's sweep deletes them when it stops naming them", async () => {
  await createRepo(ctx, owner, "acme", { name: "old", public: true });
  for (let i = 0; i < 2; i++) await commit("old", i);
  const old = (await getRepo(ctx, await openRepo(ctx, owner, "acme", "old"))).id;
  const forkId = await fork("old", "old-fork");
  // Sharing is idempotent.
  expect(await ctx.db.transaction((tx) => sharePacks(tx, old, forkId))).toBe(0);
  await deleteRepo(ctx, await openRepo(ctx, owner, "acme", "old"));
  await runPurges();
  expect(files(old).length).toBe(4);
  ctx.facts.fresh();
  expect((await getRepo(ctx, await openRepo(ctx, owner, "acme", "old-fork"))).fork_parent).toBeNull();
  expect((await checkRepo(ctx, { id: forkId, name: "acme/old-fork" })).problems).toEqual([]);
  expect(await findOrphans(ctx)).toEqual([]);

  // The fork moves on and collects: its own pack plus the two shared ones; then a commit and GC
  // again replace only its own pack. The shared packs stay named, so the files stay.
  await commit("old-fork", 20);
  await commit("old-fork", 21);
  expect((await gcRepo(ctx, { repoId: forkId })).packsReplaced).toBe(2);
  later();
  await sweepRepo(ctx, { repoId: forkId });
  expect(files(old).length).toBe(4);
  expect((await checkRepo(ctx, { id: forkId, name: "acme/old-fork" })).problems).toEqual([]);
  // Deleting the fork at last: its purge job also removes the deleted parent's files, which
  // nothing names any more.
  await deleteRepo(ctx, await openRepo(ctx, owner, "acme", "old-fork"));
  await runPurges();
  expect(files(forkId)).toEqual([]);
  expect(files(old)).toEqual([]);
  expect(await findOrphans(ctx)).toEqual([]);
});
