// The org page's people (issue 33) on both databases (SVC_TEST_DATABASE=pg for PostgreSQL): exactly
// what the members API answers the viewer — the org's own people see them, a visitor nothing —
// and the members list's prepared query pages by handle.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { listMembers } from "../../../src/services/orgs/orgs.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { orgMembersView } from "../../../src/services/web/people.ts";

const { users } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-web-people-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("members see the org's people a page at a time; a visitor and an outsider see none", async () => {
  const ctx = await openTestContext({ SVC_DATA_DIR: root, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error" });
  try {
    const actorOf = async (id: string): Promise<Principal> => ({
      kind: "session",
      user: (await ctx.db.read.select().from(users).where(eq(users.id, id)))[0]!,
      sessionId: "test",
    });
    const owner = await createUserWithOrg(ctx, {
      org: "acme",
      email: "zed@acme.test",
      name: "Zed",
      handle: "zed",
      password: "a long enough password",
      role: "owner",
    });
    for (const h of ["amy", "bob", "cat"])
      await createUserWithOrg(ctx, {
        org: "acme",
        email: `${h}@acme.test`,
        name: h.toUpperCase(),
        handle: h,
        password: "a long enough password",
        role: "member",
      });
    const outsider = await createUserWithOrg(ctx, {
      org: "other",
      email: "out@other.test",
      name: "Out",
      handle: "out",
      password: "a long enough password",
      role: "owner",
    });
    const me = await actorOf(owner.id);
    expect(await orgMembersView(ctx, me, "acme")).toEqual({
      members: [
        { handle: "amy", name: "AMY", role: "member" },
        { handle: "bob", name: "BOB", role: "member" },
        { handle: "cat", name: "CAT", role: "member" },
        { handle: "zed", name: "Zed", role: "owner" },
      ],
      more: false,
    });
    const page1 = await listMembers(ctx, me, "acme", { limit: 2 });
    const page2 = await listMembers(ctx, me, "acme", { limit: 2, cursor: page1.next_cursor! });
    expect([...page1.members, ...page2.members].map((m) => m.handle)).toEqual(["amy", "bob", "cat", "zed"]);
    expect(await orgMembersView(ctx, { kind: "anonymous" }, "acme")).toBeNull();
    expect(await orgMembersView(ctx, await actorOf(outsider.id), "acme")).toBeNull();
  } finally {
    ctx.close();
  }
});
