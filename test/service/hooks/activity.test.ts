// The activity feed's store on both databases (SVC_TEST_DATABASE=pg for PostgreSQL): a push's
// summary is added to its stored event without touching what the webhooks were sent, and the
// prepared feed query reads it back, newest first, one repository or all.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { recentActivity } from "../../../src/services/hooks/activity.ts";
import { recentOrgEvents, setEventRefs } from "../../../src/services/hooks/store-activity.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo } from "../../../src/services/repos/repos.ts";

const { users, events } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-activity-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("a summary lands in the stored event; the feed reads it (all repositories, or one)", async () => {
  const ctx = await openTestContext({ SVC_DATA_DIR: root, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" });
  try {
    const user = await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "Owner", password: "a long enough password", role: "owner" });
    const actor: Principal = { kind: "session", user: (await ctx.db.read.select().from(users).where(eq(users.id, user.id)))[0]!, sessionId: "test" };
    const a = await createRepo(ctx, actor, "acme", { name: "a" });
    const b = await createRepo(ctx, actor, "acme", { name: "b" });
    const record = (repo: typeof a, payload: Record<string, unknown>) =>
      ctx.db.transaction((tx) => ctx.events.record(tx, { repoId: repo.id, orgId: repo.org_id, kind: "push", payload, actorUserId: user.id }));
    const first = await record(a, { via: "git" });
    await record(b, { via: "ssh" });
    // Newest first: the first event a second older (two records in one millisecond would tie).
    await ctx.db.transaction((tx) =>
      tx
        .update(events)
        .set({ createdAt: sql`${events.createdAt} - 1000` })
        .where(eq(events.id, first)),
    );
    const summary = {
      refs: [{ ref: "refs/heads/main", action: "updated", sha: "f".repeat(40), commits: 2, more: false, head: [{ sha: "f".repeat(40), subject: "Fix it" }] }],
      refs_total: 1,
    };
    await ctx.db.transaction((tx) => setEventRefs(tx, first, summary));
    const all = await recentOrgEvents(ctx.db.read, a.org_id, null, 10);
    expect(all.map((r) => [r.repo, r.payload])).toEqual([
      ["b", { via: "ssh" }],
      ["a", { via: "git", ...summary }],
    ]);
    expect((await recentOrgEvents(ctx.db.read, a.org_id, a.id, 10)).map((r) => r.repo)).toEqual(["a"]);
    const feed = await recentActivity(ctx, actor, [a.org_id]);
    expect(feed.map((e) => [e.repo, e.via, e.refs?.[0]?.head[0]?.subject ?? null])).toEqual([
      ["b", "ssh", null],
      ["a", "git", "Fix it"],
    ]);
  } finally {
    ctx.close();
  }
});
