// Applying suggestions against a concurrent push (issue 28): the commit is published with the
// head it was built on as expected parent, so a push that lands between the apply's reads and its
// publish answers 409 with the branch's new tip, and nothing of the apply is written (no commit on
// the branch, the comment not marked). In-process: the real context and services; the race is made
// deterministic by committing the other push when the apply asks for its publish transaction.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppError } from "../../../src/errors.ts";
import type { User } from "../../../src/db/schema/index.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { createChange } from "../../../src/services/changes/changes.ts";
import { changeByNumber } from "../../../src/services/changes/store.ts";
import { postComment } from "../../../src/services/changes/comments.ts";
import { applySuggestions } from "../../../src/services/changes/suggestions.ts";
import { commentsOfChange } from "../../../src/services/changes/store-suggestions.ts";
import type { Ctx } from "../../../src/services/context.ts";
import { readRef } from "../../../src/services/git/store.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createCommit } from "../../../src/services/repos/commits.ts";
import { createRepo, openRepo } from "../../../src/services/repos/repos.ts";
import { openTestContext } from "../../helpers/context.ts";

const root = mkdtempSync(join(tmpdir(), "svc-suggestions-race-"));
let ctx: Ctx & { close(): void };
let owner: Principal;

const session = (user: User): Principal => ({ kind: "session", user, sessionId: "test" });

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: "http://svc.test", SVC_LOG: "error" });
  owner = session(await createUserWithOrg(ctx, { org: "acme", email: "olga@example.com", name: "Olga", password: "a long enough password", role: "owner" }));
});

afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

test("a push between the apply's reads and its publish: 409 with the new tip, nothing of the apply written", async () => {
  await createRepo(ctx, owner, "acme", { name: "app" });
  const t = () => (ctx.facts.fresh(), openRepo(ctx, owner, "acme", "app"));
  await createCommit(ctx, await t(), { message: "base", operations: [{ op: "put", path: "base.txt", content: "base\n" }] });
  await createCommit(ctx, await t(), { branch: "feature", message: "feature", operations: [{ op: "put", path: "a.txt", content: "one\ntwo\n" }] });
  const change = await createChange(ctx, await t(), { title: "a change", branch: "feature" });
  const comment = await postComment(ctx, await t(), change.number, { body: "```suggestion\nTWO\n```", path: "a.txt", line: 2, side: "new" });
  expect(comment.suggestion).toMatchObject({ applicable: true });

  // When the apply asks for its publish transaction, another writer's commit lands on the branch first.
  const db = ctx.db;
  const original = db.transaction.bind(db);
  let racer: string | null = null;
  db.transaction = (async (fn: Parameters<typeof original>[0]) => {
    db.transaction = original;
    racer = (await createCommit(ctx, await t(), { branch: "feature", message: "racer", operations: [{ op: "put", path: "b.txt", content: "b\n" }] })).commit;
    return original(fn);
  }) as typeof db.transaction;
  let error: unknown = null;
  try {
    await applySuggestions(ctx, await t(), change.number, { comment_ids: [comment.id] });
  } catch (e) {
    error = e;
  } finally {
    db.transaction = original;
  }
  expect(racer).not.toBeNull();
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).status).toBe(409);
  expect((error as AppError).extra).toEqual({ current: racer });
  const { repo } = await t();
  expect(await readRef(ctx.db.read, repo.id, "refs/heads/feature")).toBe(racer!);
  const changeRow = (await changeByNumber(ctx.db.read, repo.id, change.number))!;
  const marks = async () => (await commentsOfChange(ctx.db.read, changeRow.id, [comment.id])).map((r) => [r.appliedCommit, r.resolved]);
  expect(await marks()).toEqual([[null, false]]);

  // On the new tip the same suggestion applies (its lines did not change).
  const applied = await applySuggestions(ctx, await t(), change.number, { comment_ids: [comment.id] });
  expect(await readRef(ctx.db.read, repo.id, "refs/heads/feature")).toBe(applied.commit);
  expect(await marks()).toEqual([[applied.commit, true]]);
});
