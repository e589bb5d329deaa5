// Cache entries as stored files and scopes (services/ci/caches.ts): an archive's key is of the
// `ci-cache` kind (backup, restore and fsck follow it) and names its repository, keys of no entry
// belong to no kind, and a fork's or untrusted run's scope is never a ref the target reads.
import { expect, test } from "bun:test";
import { cacheObjectKey, scopeOf } from "../../../src/services/ci/caches.ts";
import { CI_CACHES, OBJECT_KINDS, kindOf, repoIdOf } from "../../../src/services/ops/object-kinds.ts";
import { newId } from "../../../src/util/ids.ts";

test("an archive's key is a ci-cache file of its repository, and of no other kind", () => {
  const repo = newId();
  const key = cacheObjectKey(repo, newId());
  expect({ kind: kindOf(key)?.name, repo: repoIdOf(key), kinds: OBJECT_KINDS.filter((k) => k.key.test(key)).length }).toEqual({
    kind: CI_CACHES.name,
    repo,
    kinds: 1,
  });
  expect(key.startsWith(CI_CACHES.root)).toBe(true);
  for (const bad of [
    `repos/${repo}/ci-caches/../x`,
    `repos/${repo}/ci-caches/ABCDEFGHIJKLMNOP`,
    `repos/${repo}/ci-caches/short`,
    `repos/${repo}/ci-caches/${newId()}/more`,
  ]) {
    expect({ bad, kind: kindOf(bad)?.name ?? null }).toEqual({ bad, kind: null });
  }
});

test("scopes: a trusted run writes its ref; a fork's or untrusted run writes fork:{id}/{ref}", () => {
  expect(scopeOf("refs/heads/main", true, null)).toBe("refs/heads/main");
  expect(scopeOf("refs/tags/v1", true, null)).toBe("refs/tags/v1");
  expect(scopeOf("refs/heads/main", false, "f1")).toBe("fork:f1/refs/heads/main");
  expect(scopeOf("refs/heads/main", true, "f1")).toBe("fork:f1/refs/heads/main");
  expect(scopeOf("refs/heads/main", false, null)).toBe("fork:untrusted/refs/heads/main");
});
