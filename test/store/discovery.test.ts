// Repository search's word tiers on both databases (SQLite FTS5; PostgreSQL the generated tsvector).
import { expect, test } from "bun:test";
import { tables } from "../../src/db/tables.ts";
import { wordQuery } from "../../src/services/discovery/search.ts";
import { searchWords } from "../../src/services/discovery/store.ts";
import { describeBoth } from "../helpers/db.ts";

describeBoth("discovery store: search words", (_dialect, open) => {
  test("name words first, then description words; prefixes; visibility; paging by docid", async () => {
    const { db } = await open();
    await db.transaction(async (tx) => {
      const { orgs, repos } = tables(tx);
      await tx.insert(orgs).values({ id: "o1", name: "acme", kind: "org", createdAt: 1 });
      await tx.insert(repos).values([
        { id: "r1", orgId: "o1", name: "rocket-engine", description: "a fast widget", public: true, createdAt: 1 },
        { id: "r2", orgId: "o1", name: "widgets", description: "many parts", public: true, createdAt: 2 },
        { id: "r3", orgId: "o1", name: "secret-widget", description: null, public: false, createdAt: 3 },
        { id: "r4", orgId: "o1", name: "engine-room", description: "widget tools", public: true, createdAt: 4 },
      ]);
    });
    const scope = { orgIds: [] as string[], repoId: null };
    const match = wordQuery("widg")!;
    const byName = await searchWords(db.read, match, "name", "widg", scope, null, 10);
    // "widgets" starts with the term: tier 1 (not here); none other public has it in the name
    expect(byName.map((r) => r.name)).toEqual([]);
    const byDescription = await searchWords(db.read, match, "description", "widg", scope, null, 10);
    expect(byDescription.map((r) => r.name)).toEqual(["rocket-engine", "engine-room"]);
    const page2 = await searchWords(db.read, match, "description", "widg", scope, byDescription[0]!.docid, 10);
    expect(page2.map((r) => r.name)).toEqual(["engine-room"]);
    const member = { orgIds: ["o1"], repoId: null };
    expect((await searchWords(db.read, match, "name", "widg", member, null, 10)).map((r) => r.name)).toEqual(["secret-widget"]);
    expect((await searchWords(db.read, wordQuery("engine")!, "name", "engine", scope, null, 10)).map((r) => r.name)).toEqual(["rocket-engine"]);
  });
});
