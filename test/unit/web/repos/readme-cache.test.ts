// The tree page's README cache (issue 33 perf, bench §53): a README with fenced code renders on a
// worker thread; a full rendering is remembered by blob id and link base, a stand-in never is.
import { describe, expect, test } from "bun:test";
import { readmeMarkup } from "../../../../src/http/web/repos/tree-page.ts";
import type { RepoFrame } from "../../../../src/services/web/views.ts";
import type { Ctx } from "../../../../src/services/context.ts";
import type { Threads } from "../../../../src/threads.ts";
import { ByteLru } from "../../../../src/storage/lru.ts";
import { ThreadTaskError } from "../../../../src/util/thread-pool.ts";

const SOURCE = "# Title\n\n```ts\nconst x = 1;\n```\n";

function frameOf(ref: string): RepoFrame {
  return {
    repo: { org: "acme", name: "app" } as RepoFrame["repo"],
    choices: [{ kind: "branch", name: ref }],
    ref: { short: ref, full: `refs/heads/${ref}` },
    path: "",
  };
}

/** A context whose thread renders `<p>rendered N</p>` (or fails with `fail`), counting its calls. */
function fakeCtx(fail?: ThreadTaskError["kind"]) {
  const calls: { source: string; base: unknown; plain?: boolean }[] = [];
  const threads = {
    run: async (_task: string, input: { source: string; base: unknown; plain?: boolean }) => {
      calls.push(input);
      if (fail) throw new ThreadTaskError(fail, fail);
      return `<p>rendered ${calls.length}</p>`;
    },
  } as unknown as Threads;
  const ctx = { threads, caches: { readmes: new ByteLru<string, string>(1024 * 1024, (v) => v.length) } } as unknown as Pick<Ctx, "threads" | "caches">;
  return { ctx, calls };
}

describe("readmeMarkup", () => {
  test("a README with a fence goes to the thread once; the next view of the same blob and base is a lookup", async () => {
    const { ctx, calls } = fakeCtx();
    const first = await readmeMarkup(ctx, frameOf("main"), { path: "README.md", text: SOURCE, oid: "a".repeat(40) });
    const again = await readmeMarkup(ctx, frameOf("main"), { path: "README.md", text: SOURCE, oid: "a".repeat(40) });
    expect(String(first)).toBe("<p>rendered 1</p>");
    expect(String(again)).toBe("<p>rendered 1</p>");
    expect(calls.length).toBe(1);
  });

  test("another blob, or the same blob under another ref (its links differ), renders again", async () => {
    const { ctx, calls } = fakeCtx();
    await readmeMarkup(ctx, frameOf("main"), { path: "README.md", text: SOURCE, oid: "a".repeat(40) });
    await readmeMarkup(ctx, frameOf("main"), { path: "README.md", text: SOURCE, oid: "b".repeat(40) });
    const other = await readmeMarkup(ctx, frameOf("dev"), { path: "README.md", text: SOURCE, oid: "a".repeat(40) });
    expect(calls.length).toBe(3);
    expect(String(other)).toBe("<p>rendered 3</p>");
    expect((calls[2]!.base as { ref: string }).ref).toBe("dev");
  });

  test("a stand-in (the thread busy) is shown but not remembered", async () => {
    const { ctx, calls } = fakeCtx("busy");
    const shown = await readmeMarkup(ctx, frameOf("main"), { path: "README.md", text: SOURCE, oid: "c".repeat(40) });
    expect(String(shown)).toContain("<pre>");
    expect(ctx.caches.readmes.size).toBe(0);
    await readmeMarkup(ctx, frameOf("main"), { path: "README.md", text: SOURCE, oid: "c".repeat(40) });
    expect(calls.length).toBe(2);
  });

  test("a README that is not Markdown is its text, escaped, and never cached", async () => {
    const { ctx, calls } = fakeCtx();
    const shown = await readmeMarkup(ctx, frameOf("main"), { path: "README.txt", text: "<b>x</b>", oid: "d".repeat(40) });
    expect(String(shown)).toBe("<pre>&lt;b&gt;x&lt;/b&gt;</pre>");
    expect(calls.length).toBe(0);
    expect(ctx.caches.readmes.size).toBe(0);
  });
});
