// Search ranks name matches first (DECISIONS §3 "ranked name match first", issue 24 item 5): a
// repository named `lib-<word>` or `<word>-tools` comes before one whose description alone holds
// `<word>`, whatever order they were made in; paging through the tiers loses and repeats nothing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { caller, person, type Person } from "../../helpers/api.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";

let server: RunningServer;
let ada: Person;

beforeAll(async () => {
  server = await startServer();
  ada = await person(server, "acme", "ada@example.com", "owner");
  const api = caller(server, ada);
  // Description-only matches made first: document order alone would put them first.
  for (const [name, description] of [
    ["notes", "Notes about the parser and its grammar"],
    ["docs", "parser documentation"],
    ["lib-parser", "a library"],
    ["parser-tools", null],
    ["fast-parser-kit", "speedy"],
    ["parser", "the parser itself"],
  ] as const) {
    expect((await api.post("/v1/orgs/acme/repos", { name, public: true, description: description ?? undefined })).status).toBe(201);
  }
}, 60_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

const names = async (q: string, extra = "") => {
  const r = await caller(server).get(`/v1/search/repos?q=${encodeURIComponent(q)}${extra}`);
  expect(r.status).toBe(200);
  return r.body as { hits: { name: string }[]; next_cursor: string | null };
};

test("exact name, name prefix, name words, then description-only matches", async () => {
  expect((await names("parser")).hits.map((h) => h.name)).toEqual(["parser", "parser-tools", "lib-parser", "fast-parser-kit", "notes", "docs"]);
});

test("paging one hit at a time crosses every tier in the same order", async () => {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { hits: { name: string }[]; next_cursor: string | null } = await names(
      "parser",
      `&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    seen.push(...page.hits.map((h) => h.name));
    cursor = page.next_cursor;
  } while (cursor && seen.length < 20);
  expect(seen).toEqual(["parser", "parser-tools", "lib-parser", "fast-parser-kit", "notes", "docs"]);
});
