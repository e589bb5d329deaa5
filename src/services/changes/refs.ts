// References in rendered comment markup (issue 28 plan §3.1): `#N` links to change N of the same
// repository, `org/repo#N` to change N of that repository (when the caller links it: a public
// repository or the same one, so a link never tells a reader a private repository exists) and
// `@handle` to that person's page, in text only (never inside a link, code span or code block). Pure over the sanitized markup the Markdown renderer produced: the post-pass
// adds `<a href="/…">` around text it recognises and changes nothing else, so what the
// sanitizer let through is all that reaches the page. The fuzz target (test/fuzz/text-targets.ts)
// checks exactly that.

import { isNamespaceName, isRepoName } from "../names.ts";

/** At most this many distinct `#N` / `@handle` / `org/repo#N` are looked up and linked per body. */
export const MAX_REFS = 50;
/** At most this many distinct repositories are looked up for `org/repo#N` per body. */
export const MAX_REF_REPOS = 10;

const TAG = /<[^>]*>/g;
/**
 * `org/repo#N` (groups 2-4; its own boundary: no name character, `.`, `@` or `/` before it) or
 * `#N` (group 6, after a character that is no word, entity or path). One pattern, so the `#N` of a
 * cross-repository reference is never also read as one of this repository's changes. Names are
 * bounded here (an org of 1-39, a repository of 1-100 characters); their finer rules are checked
 * after (isNamespaceName / isRepoName).
 */
const CHANGE_REF = /(^|[^\w&#/.@-])([A-Za-z0-9][A-Za-z0-9-]{0,38})\/([A-Za-z0-9._-]{1,100})#([1-9][0-9]{0,8})(?![\w])|(^|[^\w&#/])#([1-9][0-9]{0,8})(?![\w])/g;
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

/** The key of a repository named in `org/repo#N`: both names lower-cased (names are unique case-insensitively). */
export const repoKey = (org: string, repo: string) => `${org.toLowerCase()}/${repo.toLowerCase()}`;

/** A well-formed `org/repo` of a reference (the same rules as creating them), or null. */
function wellFormed(org: string, repo: string): boolean {
  return isNamespaceName(org) && isRepoName(repo);
}

/** References a markup's text makes to other repositories' changes: repoKey → the names as written and the change numbers. */
export type CrossRefs = Map<string, { org: string; repo: string; numbers: number[] }>;

/**
 * The `#N` numbers, `@handles` and `org/repo#N` references a markup's text mentions (each list
 * distinct, at most MAX_REFS of each, `org/repo#N` in at most MAX_REF_REPOS repositories).
 */
export function collectRefs(markup: string): { numbers: number[]; handles: string[]; repos: CrossRefs } {
  const numbers = new Set<number>();
  const handles = new Map<string, string>();
  const repos: CrossRefs = new Map();
  let cross = 0;
  for (const s of textSegments(markup)) {
    const text = markup.slice(s.start, s.end);
    for (const m of text.matchAll(CHANGE_REF)) {
      if (m[6] !== undefined) {
        if (numbers.size < MAX_REFS) numbers.add(Number(m[6]));
        continue;
      }
      const [org, repo, n] = [m[2]!, m[3]!, Number(m[4])];
      if (cross >= MAX_REFS || !wellFormed(org, repo)) continue;
      const key = repoKey(org, repo);
      let entry = repos.get(key);
      if (!entry) {
        if (repos.size >= MAX_REF_REPOS) continue;
        repos.set(key, (entry = { org, repo, numbers: [] }));
      }
      if (!entry.numbers.includes(n)) {
        entry.numbers.push(n);
        cross++;
      }
    }
    for (const m of text.matchAll(MENTION)) if (handles.size < MAX_REFS && !handles.has(m[2]!.toLowerCase())) handles.set(m[2]!.toLowerCase(), m[2]!);
  }
  return { numbers: [...numbers], handles: [...handles.values()], repos };
}

/** What the links point at: the repository's page path (`/org/repo`), the changes and people that exist. */
export interface RefTargets {
  repoPath: string;
  changes: ReadonlySet<number>;
  /** Issues that exist (numbers are shared with changes: a number is one or the other). */
  issues?: ReadonlySet<number>;
  /** lower-cased handle → the handle as stored */
  people: ReadonlyMap<string, string>;
  /**
   * Repositories `org/repo#N` may link to, by repoKey: their page path and changes that exist.
   * Only what the caller decided may be linked (public repositories and this one); the rest stay text.
   */
  repos?: ReadonlyMap<string, { repoPath: string; changes: ReadonlySet<number>; issues?: ReadonlySet<number> }>;
}

/** The page path of thread `n` (a change or an issue) under `repoPath`, or null when it is neither. */
function threadHref(repoPath: string, changes: ReadonlySet<number>, issues: ReadonlySet<number> | undefined, n: number): string | null {
  if (changes.has(n)) return `${repoPath}/changes/${n}`;
  if (issues?.has(n)) return `${repoPath}/issues/${n}`;
  return null;
}

const enc = (s: string) => encodeURIComponent(s);

/** The markup with `#N` / `org/repo#N` of linkable changes and `@handle` of existing people made links. */
export function linkRefs(markup: string, to: RefTargets): string {
  if (!to.changes.size && !to.issues?.size && !to.people.size && !to.repos?.size) return markup;
  let out = "";
  let at = 0;
  for (const s of textSegments(markup)) {
    out += markup.slice(at, s.start);
    const text = markup
      .slice(s.start, s.end)
      .replace(
        CHANGE_REF,
        (all, pre: string | undefined, org: string | undefined, repo: string | undefined, n: string | undefined, pre2: string, n2: string) => {
          if (org === undefined) {
            const href = threadHref(to.repoPath, to.changes, to.issues, Number(n2));
            return href ? `${pre2}<a href="${href}">#${n2}</a>` : all;
          }
          const target = wellFormed(org, repo!) ? to.repos?.get(repoKey(org, repo!)) : undefined;
          const href = target ? threadHref(target.repoPath, target.changes, target.issues, Number(n)) : null;
          return href ? `${pre}<a href="${href}">${org}/${repo}#${n}</a>` : all;
        },
      )
      .replace(MENTION, (all, pre: string, h: string) => {
        const handle = to.people.get(h.toLowerCase());
        return handle ? `${pre}<a href="/${enc(handle)}">@${h}</a>` : all;
      });
    out += text;
    at = s.end;
  }
  return out + markup.slice(at);
}
