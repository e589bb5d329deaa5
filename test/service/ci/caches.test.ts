// CI dependency caches on the runner API (issue 30), in-process with the service clock: the real
// context and HTTP application driven with app.handle(), jobs claimed with a raw machine (the
// agent's side is test/blackbox/ci/caches.test.ts). Scopes (own ref, then the default branch;
// never another branch's), restore-key prefixes newest first, immutable keys, the fs content
// routes (upload capped at the reserved size, Range downloads), bounds, and eviction: 7 days
// unused, stale reservations, and beyond SVC_CI_CACHE_MAX least recently used first.
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { CACHE_RESERVATION_MS, CACHE_UNUSED_MS, evictCaches } from "../../../src/services/ci/caches-evict.ts";
import { testTables } from "../../helpers/context.ts";
import { ciHarnesses } from "./harness.ts";

const V = "ab".repeat(32);
const T = 60_000;

let t = 0;
const baseHarness = ciHarnesses("caches", () => t);

async function harness(env: Record<string, string> = {}) {
  t = Date.now();
  const { ctx, raw, call, owner, push, machine } = await baseHarness(env);
  const credential = await machine("m");

  /** Pushes a one-job workflow to `branch`, claims the job; answers a client of that job's cache calls. */
  async function job(branch = "main") {
    await push(`on: push\njobs:\n  j:\n    runs-on: [self-hosted]\n    steps:\n      - run: echo ${branch}-${Math.random()}\n`, branch);
    const c = await call("POST", "/v1/runners/claim", { token: credential });
    expect(c.status).toBe(200);
    const id = c.body.job_id as string;
    const token = c.body.token as string;
    const base = `/v1/runner/jobs/${id}/caches`;
    return {
      id,
      token,
      lookup: (key: string, restore_keys: string[] = [], version = V) => call("POST", `${base}/lookup`, { token, body: { key, restore_keys, version } }),
      reserve: (key: string, size: number, version = V) => call("POST", base, { token, body: { key, version, size } }),
      put: (url: string, bytes: Uint8Array, headers: Record<string, string> = {}) => raw("PUT", url, { token, raw: bytes, headers }),
      commit: (cacheId: string) => call("POST", `${base}/${cacheId}/commit`, { token }),
      get: (url: string, headers: Record<string, string> = {}) => raw("GET", url, { token, headers }),
      /** Reserve, upload, commit: the save of one entry. */
      async save(key: string, bytes: Uint8Array, version = V) {
        const r = await this.reserve(key, bytes.byteLength, version);
        expect(r.status).toBe(201);
        expect((await this.put(r.body.upload.url, bytes)).status).toBe(204);
        expect((await this.commit(r.body.cache_id)).status).toBe(200);
        return r.body.cache_id as string;
      },
      complete: () => call("POST", `/v1/runner/jobs/${id}/complete`, { token, body: { verdict: "success" } }),
    };
  }
  /** The ids of the stored cache archives (object keys `repos/{repo}/ci-caches/{id}`), sorted. */
  async function cacheIds(): Promise<string[]> {
    const out: string[] = [];
    for await (const o of ctx.store.list("repos/")) if (o.key.includes("/ci-caches/")) out.push(o.key.split("/").pop()!);
    return out.sort();
  }
  return { ctx, call, owner, job, cacheIds };
}

const bytesOf = (s: string, n = 1) => new TextEncoder().encode(s.repeat(n));

describe("save and restore", () => {
  test(
    "a miss, a save, an exact hit with its bytes (and a Range), a restore-key hit (newest first), and the key is immutable",
    async () => {
      const h = await harness();
      const a = await h.job();
      expect((await a.lookup("npm-1")).status).toBe(204);
      const reserved = await a.reserve("npm-1", 11);
      expect(reserved.status).toBe(201);
      expect(reserved.body.upload).toEqual({
        url: `http://svc.test/v1/runner/jobs/${a.id}/caches/${reserved.body.cache_id}/content`,
        method: "PUT",
        headers: {},
      });
      // Restores see only committed entries.
      expect((await a.put(reserved.body.upload.url, bytesOf("hello world"))).status).toBe(204);
      expect((await a.lookup("npm-1")).status).toBe(204);
      expect((await a.commit(reserved.body.cache_id)).body).toEqual({ cache_id: reserved.body.cache_id, size: 11 });
      t += 1000;
      await a.save("npm-2", bytesOf("newer"));
      // The same key again in the same scope: 409, entries are immutable.
      expect((await a.reserve("npm-1", 3)).status).toBe(409);
      await a.complete();

      const b = await h.job();
      const hit = await b.lookup("npm-1", ["npm-"]);
      expect(hit.status).toBe(200);
      expect(hit.body).toMatchObject({ cache_id: reserved.body.cache_id, cache_key: "npm-1", size: 11, exact: true, scope: "refs/heads/main" });
      const got = await b.get(hit.body.download.url);
      expect({ status: got.status, text: await got.text() }).toEqual({ status: 200, text: "hello world" });
      const part = await b.get(hit.body.download.url, { range: "bytes=6-" });
      expect({ status: part.status, range: part.headers.get("content-range"), text: await part.text() }).toEqual({
        status: 206,
        range: "bytes 6-10/11",
        text: "world",
      });
      // No exact match: the restore key's newest entry, cache-hit false. Another version is another cache.
      expect((await b.lookup("npm-3", ["npm-"])).body).toMatchObject({ cache_key: "npm-2", exact: false });
      expect((await b.lookup("npm-1", ["npm-"], "cd".repeat(32))).status).toBe(204);
      // Prefixes compare characters: a key with characters outside the BMP and SQL wildcards.
      await b.save("emoji-🦀%_-1", bytesOf("crab"));
      expect((await b.lookup("x", ["emoji-🦀%_-"])).body).toMatchObject({ cache_key: "emoji-🦀%_-1", exact: false });
      expect((await b.lookup("x", ["emoji-🦀x"])).status).toBe(204);
      // Another job's token reads nothing of this one's calls; after the verdict the token is dead.
      await b.complete();
      expect((await b.lookup("npm-1")).status).toBe(401);
    },
    T,
  );

  test(
    "a branch reads its own scope, then the default branch's; never a third branch's; it writes only its own",
    async () => {
      const h = await harness();
      const main = await h.job("main");
      await main.save("deps", bytesOf("from main"));
      await main.complete();
      const third = await h.job("third");
      const thirdId = await third.save("deps-third", bytesOf("from third"));
      await third.complete();

      const feature = await h.job("feature");
      const fromMain = await feature.lookup("deps");
      expect(fromMain.body).toMatchObject({ cache_key: "deps", exact: true, scope: "refs/heads/main" });
      expect(await (await feature.get(fromMain.body.download.url)).text()).toBe("from main");
      expect((await feature.lookup("deps-third")).status).toBe(204);
      expect((await feature.lookup("x", ["deps-"])).status).toBe(204);
      // The same key saved on the branch shadows main's for the branch, and main's own entry is untouched.
      await feature.save("deps", bytesOf("from feature"));
      const own = await feature.lookup("deps");
      expect(own.body.scope).toBe("refs/heads/feature");
      expect(await (await feature.get(own.body.download.url)).text()).toBe("from feature");
      // Another branch's entry by id: not this job's to read.
      expect((await feature.get(`/v1/runner/jobs/${feature.id}/caches/${thirdId}/content`)).status).toBe(404);
      await feature.complete();
      const again = await h.job("main");
      expect(await (await again.get((await again.lookup("deps")).body.download.url)).text()).toBe("from main");
    },
    T,
  );

  test(
    "bounds: key length and commas, restore keys, version, size; an upload past its reservation; a wrong size at commit",
    async () => {
      const h = await harness({ SVC_CI_CACHE_MAX: "4k" });
      const a = await h.job();
      expect((await a.lookup("a,b")).status).toBe(400);
      expect((await a.lookup("k".repeat(513))).status).toBe(400);
      expect(
        (
          await a.lookup(
            "k",
            Array.from({ length: 11 }, (_, i) => `r${i}`),
          )
        ).status,
      ).toBe(400);
      expect((await a.lookup("k", [], "not-hex")).status).toBe(400);
      expect((await a.reserve("k", 4097)).status).toBe(413);
      const r = await a.reserve("k", 4);
      expect((await a.put(r.body.upload.url, bytesOf("12345"))).status).toBe(413);
      expect((await a.put(r.body.upload.url, bytesOf("123"))).status).toBe(400);
      expect((await a.commit(r.body.cache_id)).status).toBe(409);
      expect((await a.put(r.body.upload.url, bytesOf("1234"))).status).toBe(204);
      expect((await a.commit(r.body.cache_id)).status).toBe(200);
      // Someone else's ids and junk ids: 404.
      expect((await a.commit("zzzzzzzzzzzzzzzz")).status).toBe(404);
      expect((await a.get(`/v1/runner/jobs/${a.id}/caches/../../x/content`)).status).toBe(404);
    },
    T,
  );
});

describe("eviction, on the service clock", () => {
  test(
    "unused for 7 days: evicted (object, then row); a restore keeps an entry alive; stale reservations go after an hour",
    async () => {
      const h = await harness();
      const a = await h.job();
      const old = await a.save("old", bytesOf("o"));
      const kept = await a.save("kept", bytesOf("k"));
      const stale = await a.reserve("stale", 5);
      await a.complete();
      expect(await h.cacheIds()).toEqual([kept, old, stale.body.cache_id].filter((id) => id !== stale.body.cache_id).sort());

      t += CACHE_RESERVATION_MS + 1000;
      expect(await evictCaches(h.ctx)).toEqual({ unused: 0, stale: 1, overLimit: 0, orphans: 0 });
      const b = await h.job();
      t += CACHE_UNUSED_MS - 2 * CACHE_RESERVATION_MS;
      expect((await b.lookup("kept")).status).toBe(200);
      t += 2 * CACHE_RESERVATION_MS;
      expect(await evictCaches(h.ctx)).toEqual({ unused: 1, stale: 0, overLimit: 0, orphans: 0 });
      expect((await b.lookup("old")).status).toBe(204);
      expect(await h.cacheIds()).toEqual([kept]);
      expect((await b.lookup("kept")).body.cache_id).toBe(kept);
      expect(old).not.toBe(kept);
      expect(stale.status).toBe(201);
      // The late upload of the swept reservation is deleted when its commit comes.
      const late = await b.commit(stale.body.cache_id);
      expect(late.status).toBe(404);
    },
    T,
  );

  test(
    "beyond SVC_CI_CACHE_MAX per repository: least recently used first, until the total fits",
    async () => {
      const h = await harness({ SVC_CI_CACHE_MAX: "3k" });
      const a = await h.job();
      const kib = (c: string) => bytesOf(c, 1024);
      const ids: Record<string, string> = {};
      for (const name of ["a", "b", "c"]) {
        ids[name] = await a.save(name, kib(name));
        t += 2 * 60_000;
      }
      // Restoring `a` makes `b` the least recently used.
      expect((await a.lookup("a")).body.cache_id).toBe(ids.a);
      t += 2 * 60_000;
      ids.d = await a.save("d", kib("d"));
      expect(await evictCaches(h.ctx)).toEqual({ unused: 0, stale: 0, overLimit: 1, orphans: 0 });
      expect((await a.lookup("b")).status).toBe(204);
      for (const name of ["a", "c", "d"]) expect((await a.lookup(name)).body.cache_id).toBe(ids[name]);
      expect(await h.cacheIds()).toEqual([ids.a!, ids.c!, ids.d!].sort());
      // Idempotent: nothing more to do.
      expect(await evictCaches(h.ctx)).toEqual({ unused: 0, stale: 0, overLimit: 0, orphans: 0 });
    },
    T,
  );

  test(
    "the daily pass deletes archives no row names (once older than an hour), never a named one",
    async () => {
      const h = await harness();
      const a = await h.job();
      const kept = await a.save("kept", bytesOf("k"));
      let keptKey = "";
      for await (const o of h.ctx.store.list("repos/")) if (o.key.endsWith(`/ci-caches/${kept}`)) keptKey = o.key;
      const orphan = keptKey.replace(kept, "orphanorphanorph");
      await h.ctx.store.put(orphan, bytesOf("late upload"));
      // Young orphans stay (an upload may be landing for a reservation made meanwhile); the hourly passes do not list.
      expect(await evictCaches(h.ctx, { orphans: true })).toEqual({ unused: 0, stale: 0, overLimit: 0, orphans: 0 });
      t += 2 * CACHE_RESERVATION_MS;
      expect(await evictCaches(h.ctx)).toEqual({ unused: 0, stale: 0, overLimit: 0, orphans: 0 });
      expect(await h.cacheIds()).toEqual(["orphanorphanorph", kept].sort());
      expect(await evictCaches(h.ctx, { orphans: true })).toEqual({ unused: 0, stale: 0, overLimit: 0, orphans: 1 });
      expect(await h.cacheIds()).toEqual([kept]);
    },
    T,
  );
});

describe("a change from a fork", () => {
  test(
    "its job writes fork:{id}/{ref}, reads its own scope and the default branch's, and the target's runs never read what it wrote",
    async () => {
      const h = await harness();
      const main = await h.job("main");
      await main.save("deps", bytesOf("main's"));
      await main.complete();
      // The trigger marks a fork's change run untrusted and its jobs fetching from the fork (trigger.ts fromFork): the same here, by hand.
      const fork = await h.job("main");
      const { runs, workflowJobs } = testTables;
      const row = (await h.ctx.db.read.select().from(workflowJobs).where(eq(workflowJobs.id, fork.id)))[0]!;
      await h.ctx.db.transaction(async (tx) => {
        await tx.update(runs).set({ trusted: false }).where(eq(runs.id, row.runId));
        await tx
          .update(workflowJobs)
          .set({ spec: { ...row.spec, checkoutRepoId: "forkrepoidxxxxxx" } as never })
          .where(eq(workflowJobs.id, fork.id));
      });
      expect((await fork.lookup("deps")).body).toMatchObject({ cache_key: "deps", scope: "refs/heads/main" });
      // Its save is not a conflict with main's key: it lands in its own scope.
      await fork.save("deps", bytesOf("poison"));
      await fork.save("only-fork", bytesOf("poison"));
      expect((await fork.lookup("deps")).body.scope).toBe("fork:forkrepoidxxxxxx/refs/heads/main");
      await fork.complete();
      const after = await h.job("main");
      const hit = await after.lookup("deps");
      expect(hit.body.scope).toBe("refs/heads/main");
      expect(await (await after.get(hit.body.download.url)).text()).toBe("main's");
      expect((await after.lookup("only-fork")).status).toBe(204);
    },
    T,
  );
});
