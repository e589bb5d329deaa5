// A repository made of 30 packs from overlapping pushes (thin packs with appended bases, a
// branch deleted and pushed again, a rewind and a re-push), cloned by the real git client: the
// clone is the exact object set, fsck is clean, and every way of listing agrees with git.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listObjects, SEND } from "../../../src/git/object-list.ts";
import { Pack } from "../../../src/git/pack-reader.ts";
import { PackSet } from "../../../src/git/pack-set.ts";
import { writePack } from "../../../src/git/pack-writer.ts";
import type { ByteSource } from "../../../src/git/types.ts";
import { MemoryRepo, serveHttp } from "./harness.ts";
import { git, gitLines, makeFixtureRepo, removeDir, runGit } from "./repo-fixture.ts";

let fixture: string;
let work: string;
let repo: MemoryRepo;
let server: { url: string; stop(): void };

beforeAll(async () => {
  fixture = await makeFixtureRepo(1200, 5);
  work = await mkdtemp(join(tmpdir(), "svc-many-packs-"));
  repo = await MemoryRepo.create();
  server = serveHttp(repo, work);
  const firstParent = gitLines(fixture, ["rev-list", "--first-parent", "--reverse", "main"]);
  const step = (k: number, of: number) => firstParent[Math.ceil((k * firstParent.length) / of) - 1]!;
  const push = async (...refspecs: string[]) => {
    const r = await runGit(fixture, ["push", "--quiet", server.url, ...refspecs]);
    if (r.exitCode !== 0) throw new Error(`push ${refspecs.join(" ")}: ${r.stderr}`);
  };
  // 24 fast-forward steps of main (thin packs: their deltas' bases are appended, duplicating
  // stored objects), with a side branch along the way.
  for (let k = 1; k <= 24; k++) {
    await push(`${step(k, 24)}:refs/heads/main`);
    if (k === 6) await push("side:refs/heads/side");
  }
  // A branch deleted and pushed again: every one of its objects is stored twice.
  await push(":refs/heads/side");
  await push("side:refs/heads/side");
  // A rewind, then main again: the objects between are sent a second time.
  await push(`+${step(12, 24)}:refs/heads/main`);
  await push("+main:refs/heads/main");
  // The rest of the refs, in three pushes.
  await push("old:refs/heads/old", "orphan:refs/heads/orphan");
  await push("refs/tags/*:refs/tags/*");
  await push(`${step(3, 24)}:refs/heads/early`);
}, 120_000);

afterAll(async () => {
  server?.stop();
  await repo?.close();
  await Promise.all([fixture, work].filter(Boolean).map(removeDir));
});

test("30 packs of overlapping pushes: a clone is exact and fsck-clean", async () => {
  const set = repo.snapshot().objects;
  expect(set.packs.length).toBeGreaterThanOrEqual(30);
  const midx = set.multiPackIndex();
  const stored = set.packs.reduce((n, p) => n + p.idx.count, 0);
  expect(stored).toBeGreaterThan(midx.count);

  const dst = join(work, "clone.git");
  const r = await runGit(work, ["clone", "--bare", "--quiet", server.url, dst]);
  expect(r.exitCode).toBe(0);
  const fsck = await runGit(dst, ["fsck", "--full", "--strict", "--no-dangling"]);
  expect(fsck.exitCode).toBe(0);
  expect(fsck.stderr.trim()).toBe("");
  const refs = (dir: string) => gitLines(dir, ["for-each-ref", "--format=%(objectname) %(refname)"]).sort();
  expect(refs(dst)).toEqual(
    repo
      .snapshot()
      .refs.map((x) => `${x.oid} ${x.name}`)
      .sort(),
  );
  // Exactly the objects the refs reach: nothing duplicated, nothing unreachable.
  const expected = new Set(gitLines(dst, ["rev-list", "--objects", "--all"]).map((l) => l.slice(0, 40)));
  const inPack = git(dst, ["count-objects", "-v"]).match(/in-pack: (\d+)/)![1];
  expect(Number(inPack)).toBe(expected.size);
});

test("listObjects over the 30 packs is git rev-list --objects --all", async () => {
  const snapshot = repo.snapshot();
  const list = await listObjects(snapshot.objects, { wants: [...new Set(snapshot.refs.map((r) => r.oid))], haves: [], shallow: [] });
  const got: string[] = [];
  for (let p = 0; p < list.midx.count; p++) if (list.flags[p]! & SEND) got.push(list.midx.oidAt(p));
  const expected = gitLines(fixture, ["rev-list", "--objects", ...snapshot.refs.map((r) => r.oid)]).map((l) => l.slice(0, 40));
  expect(got.sort()).toEqual([...new Set(expected)].sort());
  expect(list.count).toBe(got.length);
});

test("an incremental fetch from the 30 packs applies cleanly", async () => {
  const dst = join(work, "fetcher.git");
  git(work, ["init", "--quiet", "--bare", dst]);
  const old = gitLines(fixture, ["rev-list", "--first-parent", "main"])[200]!;
  git(dst, ["fetch", "--quiet", fixture, `${old}:refs/heads/main`]);
  const r = await runGit(dst, ["fetch", "--quiet", server.url, "+refs/heads/*:refs/heads/*"]);
  expect(r.exitCode).toBe(0);
  expect(git(dst, ["rev-parse", "refs/heads/main"])).toBe(repo.refs.get("refs/heads/main")!);
  expect((await runGit(dst, ["fsck", "--connectivity-only", "--no-dangling"])).exitCode).toBe(0);
});

test("packs whose sources take hints (object storage) list the same objects and write the same pack bytes", async () => {
  const snapshot = repo.snapshot();
  const wants = [...new Set(snapshot.refs.map((r) => r.oid))];
  // Reads are delayed a little and out of order (as a bucket answers), hints are counted.
  let hints = 0;
  const hinted = (source: ByteSource): ByteSource => ({
    size: source.size,
    read: async (offset, length) => {
      await new Promise((resolve) => setTimeout(resolve, offset % 2));
      return source.read(offset, length);
    },
    prefetch: () => {
      hints++;
      return true;
    },
  });
  const slow = new PackSet(snapshot.objects.packs.map((p) => new Pack(`${p.name}-hinted`, p.idx, hinted(p.source))));
  const plain = await listObjects(snapshot.objects, { wants, haves: [], shallow: [] });
  const viaHints = await listObjects(slow, { wants, haves: [], shallow: [] });
  expect(viaHints.count).toBe(plain.count);
  expect(Buffer.from(viaHints.flags).equals(Buffer.from(plain.flags))).toBe(true);
  expect(hints).toBeGreaterThan(0);

  const bytes = async (list: typeof plain) => {
    const parts: Uint8Array[] = [];
    for await (const chunk of writePack(list.midx, list.flags, list.count, { ofsDelta: true, thin: false })) parts.push(chunk);
    return Buffer.concat(parts);
  };
  const a = await bytes(plain);
  const b = await bytes(viaHints);
  expect(b.length).toBe(a.length);
  expect(b.equals(a)).toBe(true);
});
