// Every kind of file svc writes to the object store is declared in services/ops/object-kinds.ts
// (issue 24): backup copies each kind, restore accepts only declared keys, fsck tells kinds apart.
// This test keeps the declaration complete: any module that writes to the service's object store
// must be a declared writer of a kind, and each kind's key pattern matches the keys its writer makes.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { Glob } from "bun";
import { logChunkKey } from "../../../src/services/ci/job-calls.ts";
import { packKey } from "../../../src/services/git/snapshot.ts";
import { lfsObjectKey } from "../../../src/services/lfs/lfs.ts";
import { CI_LOGS, LFS_OBJECTS, OBJECT_KINDS, PACKS, kindOf, repoIdOf } from "../../../src/services/ops/object-kinds.ts";
import { newId } from "../../../src/util/ids.ts";

const ROOT = join(import.meta.dir, "../../..");
/** Modules that copy between stores (backup targets, restore): they write what the kinds name, not a kind of their own. */
const COPIERS = ["src/services/ops/backup.ts", "src/services/ops/transfer.ts"];
/** A write to an object store: `.put(`, `.putFile(` on something called store. */
const WRITE = /\b(?:store|objects)\s*\.\s*(?:put|putFile)\s*\(/;

test("every module that writes to the object store is a declared writer of a kind (or a backup copier)", () => {
  const writers = new Set(OBJECT_KINDS.flatMap((k) => k.writers));
  const found: string[] = [];
  for (const file of new Glob("src/**/*.ts").scanSync(ROOT)) {
    if (file.startsWith("src/storage/")) continue;
    if (WRITE.test(readFileSync(join(ROOT, file), "utf8"))) found.push(relative(ROOT, join(ROOT, file)));
  }
  const undeclared = found.filter((f) => !writers.has(f) && !COPIERS.includes(f));
  expect({
    undeclared,
    hint: undeclared.length ? "declare the kind of file it stores in src/services/ops/object-kinds.ts (backup, restore and fsck follow)" : "",
  }).toEqual({ undeclared: [], hint: "" });
  // And every declared writer still writes (a stale declaration hides nothing, but misleads).
  for (const w of writers) expect({ w, writes: found.includes(w) }).toEqual({ w, writes: true });
});

test("each kind's pattern matches the keys its writer makes, names the repository, and no key has two kinds", () => {
  const repo = newId();
  const keys = {
    pack: packKey(repo, "a".repeat(40), "pack"),
    idx: packKey(repo, "b".repeat(40), "idx"),
    log: logChunkKey(repo, newId(), 123_456),
    lfs: lfsObjectKey(repo, "c".repeat(64)),
  };
  expect({ pack: kindOf(keys.pack), idx: kindOf(keys.idx), log: kindOf(keys.log), lfs: kindOf(keys.lfs) }).toEqual({
    pack: PACKS,
    idx: PACKS,
    log: CI_LOGS,
    lfs: LFS_OBJECTS,
  });
  for (const k of Object.values(keys)) expect(repoIdOf(k)).toBe(repo);
  for (const k of Object.values(keys)) expect(OBJECT_KINDS.filter((kind) => kind.key.test(k))).toHaveLength(1);
  for (const kind of OBJECT_KINDS) for (const k of Object.values(keys)) if (kind.key.test(k)) expect(k.startsWith(kind.root)).toBe(true);
  expect(new Set(OBJECT_KINDS.map((k) => k.name)).size).toBe(OBJECT_KINDS.length);
});

test("keys a backup manifest could smuggle in belong to no kind", () => {
  for (const bad of [
    "repos/../packs/pack-" + "a".repeat(40) + ".pack",
    "repos/x/packs/pack-zz.pack",
    "etc/passwd",
    "repos/x/ci-logs/j/1-a",
    "repos/x/ci-logs/j/000000000001-a/b",
    "repos/x/other/file",
    "/repos/x/packs/pack-" + "a".repeat(40) + ".idx",
  ]) {
    expect({ bad, kind: kindOf(bad)?.name ?? null }).toEqual({ bad, kind: null });
  }
});

test("README's account of what a backup holds names every kind", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8").replace(/\s+/g, " ");
  for (const kind of OBJECT_KINDS) expect({ kind: kind.name, listed: readme.includes(kind.description) }).toEqual({ kind: kind.name, listed: true });
});
