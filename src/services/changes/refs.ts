// References in rendered comment markup (issue 28 plan §3.1): `#N` links to change N of the same
// repository and `@handle` to that person's page, in text only (never inside a link, code span
// or code block). Pure over the sanitized markup the Markdown renderer produced: the post-pass
// adds `<a href="/…">` around text it recognises and changes nothing else, so what the
// sanitizer let through is all that reaches the page. The fuzz target (test/fuzz/text-targets.ts)
// checks exactly that.

/** At most this many distinct `#N` / `@handle` are looked up and linked per body. */
export const MAX_REFS = 50;

const TAG = /<[^>]*>/g;
const CHANGE_REF = /(^|[^\w&#/])#([1-9][0-9]{0,8})(?![\w])/g;
const MENTION = /(^|[^\w.@/+-])@([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}[A-Za-z0-9])?)(?![\w-])/g;
/** Elements inside which text is left alone. */
const SKIP: ReadonlySet<string> = new Set(["a", "code", "pre"]);

/** The text segments of markup outside links and code, with their offsets. */
function textSegments(markup: string): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  let depth = 0;
  let at = 0;
  TAG.lastIndex = 0;
  for (let m = TAG.exec(markup); m; m = TAG.exec(markup)) {
    if (depth === 0 && m.index > at) out.push({ start: at, end: m.index });
    const name = /^<\/?([a-zA-Z0-9]+)/.exec(m[0])?.[1]?.toLowerCase();
    if (name && SKIP.has(name) && !m[0].endsWith("/>")) depth = Math.max(0, depth + (m[0][1] === "/" ? -1 : 1));
    at = m.index + m[0].length;
  }
  if (depth === 0 && at < markup.length) out.push({ start: at, end: markup.length });
  return out;
}

/** The `#N` numbers and `@handles` a markup's text mentions (each list distinct, at most MAX_REFS). */
export function collectRefs(markup: string): { numbers: number[]; handles: string[] } {
  const numbers = new Set<number>();
  const handles = new Map<string, string>();
  for (const s of textSegments(markup)) {
    const text = markup.slice(s.start, s.end);
    for (const m of text.matchAll(CHANGE_REF)) if (numbers.size < MAX_REFS) numbers.add(Number(m[2]));
    for (const m of text.matchAll(MENTION)) if (handles.size < MAX_REFS && !handles.has(m[2]!.toLowerCase())) handles.set(m[2]!.toLowerCase(), m[2]!);
  }
  return { numbers: [...numbers], handles: [...handles.values()] };
}

/** What the links point at: the repository's page path (`/org/repo`), the changes and people that exist. */
export interface RefTargets {
  repoPath: string;
  changes: ReadonlySet<number>;
  /** lower-cased handle → the handle as stored */
  people: ReadonlyMap<string, string>;
}

const enc = (s: string) => encodeURIComponent(s);

/** The markup with `#N` of existing changes and `@handle` of existing people made links. */
export function linkRefs(markup: string, to: RefTargets): string {
  if (!to.changes.size && !to.people.size) return markup;
  let out = "";
  let at = 0;
  for (const s of textSegments(markup)) {
    out += markup.slice(at, s.start);
    const text = markup
      .slice(s.start, s.end)
      .replace(CHANGE_REF, (all, pre: string, n: string) => (to.changes.has(Number(n)) ? `${pre}<a href="${to.repoPath}/changes/${n}">#${n}</a>` : all))
      .replace(MENTION, (all, pre: string, h: string) => {
        const handle = to.people.get(h.toLowerCase());
        return handle ? `${pre}<a href="/${enc(handle)}">@${h}</a>` : all;
      });
    out += text;
    at = s.end;
  }
  return out + markup.slice(at);
}
