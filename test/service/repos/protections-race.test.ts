// Branch protections are read inside the publish transaction (issue 10): a protection committed
// while a write is being prepared (after its pre-transaction reads, before its refs move) still
// applies to it. In-process: the real context (SQLite, fs object store) and real services; the
// race is made deterministic by holding the one write lock while the protection is added.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { User } from "../../../src/db/schema/index.ts";
import { ZERO_OID, type Oid } from "../../../src/git/types.ts";
import { openTestContext } from "../../helpers/context.ts";
import type { Ctx } from "../../../src/services/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { findOrg, findRepo } from "../../../src/services/access/lookup.ts";
import { publish } from "../../../src/services/git/publish.ts";
import { readRef } from "../../../src/services/git/store.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createCommit } from "../../../src/services/repos/commits.ts";
import { deleteProtection, putProtection } from "../../../src/services/repos/protections.ts";
import { refPolicy } from "../../../src/services/git/policy.ts";
import { deleteRef, putRef } from "../../../src/services/repos/refs.ts";
import { createRepo, openRepo } from "../../../src/services/repos/repos.ts";
import * as store from "../../../src/services/repos/store.ts";

const root = mkdtempSync(join(tmpdir(), "svc-protections-race-"));
let ctx: Ctx & { close(): void };
let owner: Principal;
let counter = 0;

const session = (user: User): Principal => ({ kind: "session", user, sessionId: "test" });

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: "http://svc.test", SVC_LOG: "error" });
  owner = session(await createUserWithOrg(ctx, { org: "acme", email: "olga@example.com", name: "Olga", password: "a long enough password", role: "owner" }));
});

beforeEach(() => ctx.facts.fresh());

afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

/** A new repository with two commits on main: c1, then c2 (the tip). */
async function repoWithHistory() {
  const name = `r${++counter}`;
  await createRepo(ctx, owner, "acme", { name });
  const c1 = (await createCommit(ctx, await openRepo(ctx, owner, "acme", name), { message: "one", operations: [{ op: "put", path: "a.txt", content: "1\n" }] }))
    .commit;
  const c2 = (await createCommit(ctx, await openRepo(ctx, owner, "acme", name), { message: "two", operations: [{ op: "put", path: "a.txt", content: "2\n" }] }))
    .commit;
  const org = (await findOrg(ctx, "acme"))!;
  const repo = (await findRepo(ctx, org.id, name))!;
  return { name, org, repo, c1, c2 };
}

/** A protection row for `pattern` with everything forbidden unless `allow` says otherwise. */
function rule(repoId: string, pattern: string, allow: Partial<Pick<store.Protection, "allowForcePush" | "allowDeletion">> = {}): store.Protection {
  return {
    repoId,
    pattern,
    allowForcePush: false,
    allowDeletion: false,
    requireChange: false,
    requiredChecks: [],
    requiredApprovals: 0,
    dismissStaleApprovals: true,
    createdAt: 0,
    ...allow,
  };
}

/**
 * Runs `write` while another transaction holds the write lock, and commits `during` in that
 * transaction once `write` has done its reads and queued its own transaction: the protection
 * lands between the write's preparation and its commit.
 */
async function raceWith<T>(during: Parameters<Ctx["db"]["transaction"]>[0], write: () => Promise<T>): Promise<T> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const holding = new Promise<void>((r) => (entered = r));
  const held = ctx.db.transaction(async (tx) => {
    entered();
    await gate;
    return during(tx);
  });
  await holding;
  // Observe the moment the write asks for its transaction (it then waits for the held lock).
  const db = ctx.db;
  const original = db.transaction.bind(db);
  let queued!: () => void;
  const asked = new Promise<void>((r) => (queued = r));
  db.transaction = ((fn) => {
    queued();
    // PostgreSQL has no process-wide lock to queue behind (transactions run side by side, and one
    // that commits first is serialized first): the write's transaction begins once the held one
    // has committed, which is where SQLite's lock puts it.
    return db.dialect === "pg" ? held.then(() => original(fn)) : original(fn);
  }) as typeof db.transaction;
  try {
    const result = write().then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    await asked;
    release();
    await held;
    const out = await result;
    if (!out.ok) throw out.error;
    return out.value;
  } finally {
    db.transaction = original;
  }
}

describe("protections are read inside the publish transaction", () => {
  test("a policy made before a protection existed still applies it", async () => {
    const { org, repo, c2 } = await repoWithHistory();
    const policy = refPolicy(repo, "ref-api");
    await putProtection(ctx, await openRepo(ctx, owner, "acme", repo.name), "main", {});
    const results = await publish(ctx, org, repo, [{ ref: "refs/heads/main", oldOid: c2, newOid: ZERO_OID }], null, {
      atomic: true,
      event: null,
      actorUserId: null,
      policy,
    });
    expect(results.get("refs/heads/main")).toEqual({ kind: "policy", message: "protected branch main: deletion is not allowed" });
    expect(await readRef(ctx.db.read, repo.id, "refs/heads/main")).toBe(c2);
  });

  test("a protection lifted before the write commits no longer refuses it", async () => {
    const { org, repo, c2 } = await repoWithHistory();
    await putProtection(ctx, await openRepo(ctx, owner, "acme", repo.name), "main", {});
    const policy = refPolicy(repo, "ref-api");
    await deleteProtection(ctx, await openRepo(ctx, owner, "acme", repo.name), "main");
    const results = await publish(ctx, org, repo, [{ ref: "refs/heads/main", oldOid: c2, newOid: ZERO_OID }], null, {
      atomic: true,
      event: null,
      actorUserId: null,
      policy,
    });
    expect(results.get("refs/heads/main")).toEqual({ kind: "applied" });
    expect(await readRef(ctx.db.read, repo.id, "refs/heads/main")).toBeNull();
  });

  test("ref API delete: a protection committed while the delete waits for the lock refuses it (403)", async () => {
    const { repo, c2 } = await repoWithHistory();
    const err = await raceWith(
      (tx) => store.upsertProtection(tx, rule(repo.id, "main")),
      async () => deleteRef(ctx, await openRepo(ctx, owner, "acme", repo.name), "refs/heads/main", c2),
    ).catch((e) => e);
    expect({ status: err.status, message: err.message }).toEqual({ status: 403, message: "protected branch main: deletion is not allowed" });
    expect(await readRef(ctx.db.read, repo.id, "refs/heads/main")).toBe(c2);
  });

  test("ref API force move: a rule forbidding force pushes that appeared meanwhile refuses it (ancestry unknown)", async () => {
    const { repo, c1, c2 } = await repoWithHistory();
    const err = await raceWith(
      (tx) => store.upsertProtection(tx, rule(repo.id, "main", { allowDeletion: true })),
      async () => putRef(ctx, await openRepo(ctx, owner, "acme", repo.name), "refs/heads/main", { target: c1, expected: c2 }),
    ).catch((e) => e);
    expect({ status: err.status, message: err.message }).toEqual({
      status: 403,
      message: "protected branch main: force push is not allowed (the protection changed during this update; retry)",
    });
    expect(await readRef(ctx.db.read, repo.id, "refs/heads/main")).toBe(c2);
    // Retried with the rule in place, ancestry is computed and the answer is the usual refusal.
    const again = await putRef(ctx, await openRepo(ctx, owner, "acme", repo.name), "refs/heads/main", { target: c1, expected: c2 }).catch((e) => e);
    expect({ status: again.status, message: again.message }).toEqual({ status: 403, message: "protected branch main: force push is not allowed" });
  });

  test("a fast-forward still lands when such a rule appears meanwhile on another branch", async () => {
    const { repo, c1, c2 } = await repoWithHistory();
    await putRef(ctx, await openRepo(ctx, owner, "acme", repo.name), "refs/heads/topic", { target: c1, expected: null });
    const out = await raceWith(
      (tx) => store.upsertProtection(tx, rule(repo.id, "release/*")),
      async () => putRef(ctx, await openRepo(ctx, owner, "acme", repo.name), "refs/heads/topic", { target: c2, expected: c1 }),
    );
    expect(out).toEqual({ name: "refs/heads/topic", target: c2 as Oid });
  });
});
