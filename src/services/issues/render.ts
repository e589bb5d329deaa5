// Markdown of issue bodies and comments: rendered once when written, on a worker thread (the
// `web.renderMarkdown` task, which sanitizes: scripts, event attributes and javascript: links
// never reach the markup), then `#N` (an issue or a change: numbers are shared), `org/repo#N`
// and `@handle` made links by the changes domain's reference pass (changes/refs.ts).
import { ThreadTaskError } from "../../util/thread-pool.ts";
import type { Ctx } from "../context.ts";
import { crossRefTargets } from "../changes/comments.ts";
import { collectRefs, linkRefs } from "../changes/refs.ts";
import * as store from "./store.ts";

/** Where a body is shown: its repository (relative links resolve against the default branch). */
export interface Place {
  org: { name: string };
  repo: { id: string; name: string; defaultBranch: string };
}

function escapeText(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A body as sanitized, linked markup, the people it mentions and the issue/change numbers of this repository it names. */
export async function renderMarkdown(
  ctx: Ctx,
  place: Place,
  source: string,
): Promise<{ html: string; mentions: { id: string; handle: string }[]; numbers: number[] }> {
  const repoPath = `/${encodeURIComponent(place.org.name)}/${encodeURIComponent(place.repo.name)}`;
  let html: string;
  try {
    html = await ctx.threads.run("web.renderMarkdown", { source, base: { repo: repoPath, ref: place.repo.defaultBranch, dir: "" } }, { timeLimitMs: 2_000 });
  } catch (e) {
    if (!(e instanceof ThreadTaskError)) throw e;
    return { html: `<pre>${escapeText(source)}</pre>`, mentions: [], numbers: [] };
  }
  const refs = collectRefs(html);
  const [changes, issues, people, repos] = await Promise.all([
    store.changeNumbers(ctx.db.read, place.repo.id, refs.numbers),
    store.issuesByNumbers(ctx.db.read, place.repo.id, refs.numbers),
    store.usersByHandles(ctx.db.read, refs.handles),
    crossRefTargets(ctx, place.repo.id, refs.repos),
  ]);
  const issueNumbers = new Set(issues.map((i) => i.number));
  return {
    html: linkRefs(html, { repoPath, changes, issues: issueNumbers, people: new Map(people.map((p) => [p.handle.toLowerCase(), p.handle])), repos }),
    mentions: people,
    numbers: refs.numbers,
  };
}
