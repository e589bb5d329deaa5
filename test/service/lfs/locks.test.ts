// LFS locks in-process (issue 31), on SQLite or PostgreSQL (SVC_TEST_DATABASE): the services and
// their store (one lock per path even when two requests race for it, paging, the owner's view)
// and the push check's tree walk over an in-memory repository, counting what it reads: a push
// rewriting 100,000 paths reads a few trees per locked directory, not the push.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Repo, User } from "../../../src/db/schema/index.ts";
import { serializeCommit, serializeTree, type TreeEntry } from "../../../src/git/object.ts";
import { hashObject } from "../../../src/git/oid.ts";
import { ZERO_OID, type ObjectReader, type ObjectType, type Oid, type RawObject } from "../../../src/git/types.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import type { Ctx } from "../../../src/services/context.ts";
import { lockRefusals } from "../../../src/services/git/lfs-locks.ts";
import { createLock, listLocks, openLockRepo, unlockLock, verifyLocks } from "../../../src/services/lfs/locks.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo } from "../../../src/services/repos/repos.ts";
import { openTestContext } from "../../helpers/context.ts";

const root = mkdtempSync(join(tmpdir(), "svc-lfs-locks-"));
let ctx: Ctx & { close(): void };
let olga: User, mel: User;
let repo: Repo;

const session = (user: User): Principal => ({ kind: "session", user, sessionId: "test" });
const target = (user: User) => openLockRepo(ctx, { kind: "principal", principal: session(user) }, "studio", "game.git", "upload");

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: "http://svc.test", SVC_LOG: "error" });
  const password = "a long enough password";
  olga = await createUserWithOrg(ctx, { org: "studio", email: "olga@example.com", name: "Olga", password, role: "owner" });
  mel = await createUserWithOrg(ctx, { org: "studio", email: "mel@example.com", name: "Mel", password, role: "member" });
  await createRepo(ctx, session(olga), "studio", { name: "game" });
  repo = (await target(olga)).repo;
});

beforeEach(() => ctx.facts.fresh());

afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("the services", () => {
  test("two requests racing for one path: one lock, the other answered with it", async () => {
    const [a, b] = await Promise.all([createLock(ctx, await target(olga), { path: "race.bin" }), createLock(ctx, await target(mel), { path: "race.bin" })]);
    const kinds = [a.kind, b.kind].sort();
    expect(kinds).toEqual(["created", "exists"]);
    expect(a.lock).toEqual(b.lock);
    const listed = await listLocks(ctx, await target(mel), { path: "race.bin" });
    expect(listed).toEqual({ locks: [a.lock] });
    const owner = a.lock.owner.name === olga.handle ? olga : mel;
    expect(await unlockLock(ctx, await target(owner), a.lock.id, {})).toEqual({ lock: a.lock });
  });

  test("pages in order with cursors; verify splits by owner", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const made = await createLock(ctx, await target(i % 3 ? mel : olga), { path: `p/${i}.bin` });
      if (made.kind !== "created") throw new Error("not created");
      ids.push(made.lock.id);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listLocks(ctx, await target(mel), { limit: "3", ...(cursor ? { cursor } : {}) });
      seen.push(...page.locks.map((l) => l.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    const v = await verifyLocks(ctx, await target(olga), {});
    expect({ ours: v.ours.map((l) => l.path), theirs: v.theirs.length }).toEqual({ ours: ["p/0.bin", "p/3.bin", "p/6.bin"], theirs: 4 });
    for (const [i, id] of ids.entries()) await unlockLock(ctx, await target(i % 3 ? mel : olga), id, {});
  });
});

/** An in-memory object store that counts reads. */
class Objects implements ObjectReader {
  readonly map = new Map<Oid, RawObject>();
  reads = 0;
  put(type: ObjectType, data: Uint8Array): Oid {
    const oid = hashObject(type, data);
    this.map.set(oid, { type, data });
    return oid;
  }
  async has(oid: Oid) {
    return this.map.has(oid);
  }
  async read(oid: Oid) {
    this.reads++;
    return this.map.get(oid) ?? null;
  }
  async readHeader(oid: Oid) {
    const o = this.map.get(oid);
    return o ? { type: o.type, size: o.data.length } : null;
  }
}

const sig = { name: "A", email: "a@example.com", timestamp: 1_700_000_000, timezone: "+0000" };

/** A commit of `dirs` directories of `files` blobs; `version` changes every blob but the last of each directory. */
function commitOf(objects: Objects, dirs: number, files: number, version: number, extra: (d: number, entries: TreeEntry[]) => void = () => {}): Oid {
  const top: TreeEntry[] = [];
  for (let d = 0; d < dirs; d++) {
    const entries: TreeEntry[] = [];
    for (let f = 0; f < files; f++) {
      const body = f === files - 1 ? `kept ${d}\n` : `v${version} ${d}/${f}\n`;
      entries.push({ mode: "100644", name: `f${String(f).padStart(5, "0")}.bin`, oid: objects.put("blob", new TextEncoder().encode(body)) });
    }
    extra(d, entries);
    entries.sort((x, y) => (x.name < y.name ? -1 : 1));
    top.push({ mode: "40000", name: `d${String(d).padStart(4, "0")}`, oid: objects.put("tree", serializeTree(entries)) });
  }
  const tree = objects.put("tree", serializeTree(top));
  return objects.put("commit", serializeCommit({ tree, parents: [], author: sig, committer: sig, message: `v${version}\n`, extraHeaders: [] }));
}

describe("the push check", () => {
  test("a push rewriting 100,000 paths reads only the locked directories' trees; the locks it touches refuse it", async () => {
    const DIRS = 100;
    const FILES = 1000;
    const objects = new Objects();
    const old = commitOf(objects, DIRS, FILES, 1);
    const next = commitOf(objects, DIRS, FILES, 2);
    const last = `f${String(FILES - 1).padStart(5, "0")}.bin`;
    // Olga locks the kept file of 10 directories (untouched by the push) and one rewritten file.
    const kept = Array.from({ length: 10 }, (_, i) => `d${String(i * 7).padStart(4, "0")}/${last}`);
    for (const path of [...kept, "d0050/f00003.bin"]) await createLock(ctx, await target(olga), { path });

    const refs = [{ name: "refs/heads/main", oid: old }];
    const push = [{ ref: "refs/heads/main", oldOid: old, newOid: next }];
    // Her own push passes without reading a tree: she holds every lock.
    expect(await lockRefusals(ctx, repo, refs, objects, push, olga.id)).toEqual(new Map());
    expect(objects.reads).toBe(0);

    const refused = await lockRefusals(ctx, repo, refs, objects, push, mel.id);
    expect([...refused.keys()]).toEqual(["refs/heads/main"]);
    expect(refused.get("refs/heads/main")).toStartWith(`d0050/f00003.bin is locked by ${olga.handle} (LFS lock `);
    // Two commits, two root trees, and the old and new tree of the 11 locked directories.
    expect(objects.reads).toBe(2 + 2 + 2 * 11);

    // A new branch is compared with the default branch's tip: the same answer.
    objects.reads = 0;
    const branch = await lockRefusals(ctx, repo, refs, objects, [{ ref: "refs/heads/topic", oldOid: ZERO_OID, newOid: next }], mel.id);
    expect([...branch.keys()]).toEqual(["refs/heads/topic"]);
    // Deleting a branch and moving a tag are not checked (and read nothing).
    objects.reads = 0;
    const unchecked = [
      { ref: "refs/heads/old", oldOid: old, newOid: ZERO_OID },
      { ref: "refs/tags/v2", oldOid: ZERO_OID, newOid: next },
    ];
    expect(await lockRefusals(ctx, repo, refs, objects, unchecked, mel.id)).toEqual(new Map());
    expect(objects.reads).toBe(0);

    // With the rewritten file unlocked, the push passes.
    const all = await listLocks(ctx, await target(olga), {});
    for (const l of all.locks) if (l.path === "d0050/f00003.bin") await unlockLock(ctx, await target(olga), l.id, {});
    expect(await lockRefusals(ctx, repo, refs, objects, push, mel.id)).toEqual(new Map());
    for (const l of (await listLocks(ctx, await target(olga), {})).locks) await unlockLock(ctx, await target(olga), l.id, {});
  });

  test("a lock on a directory's path refuses any change below it, while a lock on a path below a new file (which no tree can hold) is not touched", async () => {
    const objects = new Objects();
    const old = commitOf(objects, 3, 4, 1);
    const next = commitOf(objects, 3, 4, 1, (d, entries) => {
      if (d === 1) entries.push({ mode: "100644", name: "added.bin", oid: objects.put("blob", new TextEncoder().encode("new\n")) });
    });
    const dirLock = await createLock(ctx, await target(olga), { path: "d0001" });
    const refs = [{ name: "refs/heads/main", oid: old }];
    const push = [{ ref: "refs/heads/main", oldOid: old, newOid: next }];
    expect((await lockRefusals(ctx, repo, refs, objects, push, mel.id)).get("refs/heads/main")).toStartWith(`d0001 is locked by ${olga.handle}`);
    await unlockLock(ctx, await target(olga), dirLock.lock.id, {});
    const deep = await createLock(ctx, await target(olga), { path: "d0001/added.bin/inner" });
    expect(await lockRefusals(ctx, repo, refs, objects, push, mel.id)).toEqual(new Map());
    await unlockLock(ctx, await target(olga), deep.lock.id, {});
  });
});
