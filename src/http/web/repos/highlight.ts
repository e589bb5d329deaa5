// Syntax highlighting of the file view: the language picked by file name (highlight-engine.ts:
// @speed-highlight/core, highlight.js for the languages it lacks), one fragment per line (so every
// line keeps its #L anchor), computed on a worker thread and cached by blob id and language.
// Why a thread: the grammars are regular expressions run over pushed content, and a hostile file
// can make them backtrack for seconds or minutes; on the thread that stalls no other request, and
// past HIGHLIGHT_TIME_LIMIT_MS the thread is terminated and the blob is shown plain from then on.
// Why a cache: a blob's bytes never change; every view after the first is a lookup.
// The thread, its queue and the cache are the context's (`ctx.highlighter`, a HighlightThread
// made in src/runtime.ts and closed with the context), not this module's.
import type { Highlighter, Logger } from "../../../services/context.ts";
import { ByteLru } from "../../../storage/lru.ts";
import { LANGUAGES, languageOf, PARTS } from "./highlight-engine.ts";
import { escapeHtml, trusted, type Html } from "../kit/html.ts";

/** Files larger than this are shown as plain (escaped) text (speed-highlight: ~0.3 ms of CPU per KB). */
export const HIGHLIGHT_LIMIT = 512 * 1024;
/** The same bound for the languages highlight.js draws (~1.3 ms of CPU per KB, 4× slower). */
export const HIGHLIGHT_LIMIT_HLJS = 96 * 1024;
/** A line longer than this (minified code) makes the whole file plain: colour does not help read it. */
export const HIGHLIGHT_LINE_LIMIT = 4000;
/** A file still being highlighted after this long is abandoned (its thread terminated) and shown plain from then on. */
export const HIGHLIGHT_TIME_LIMIT_MS = 5000;
/** A page waits this long for its file's highlighting, then shows it plain (the work goes on and fills the cache). */
export const HIGHLIGHT_WAIT_MS = 2000;
/** Files waiting for the thread beyond this many are shown plain at once (not remembered). */
const QUEUE_LIMIT = 16;
/** Highlighted output kept across requests (UTF-16 bytes of the markup). */
const CACHE_BYTES = 48 * 1024 * 1024;

/** A blob's lines as markup, or PLAIN: remembered as not highlightable (too slow, or refused). */
const PLAIN = null;

/** One file as the page shows it. */
export interface Highlighted {
  /** One fragment per line: highlighted, or escaped text. */
  lines: Html[];
  /** The language's display name, or null when shown plain. */
  language: string | null;
  /** False when shown plain only for now (the thread was busy): the page must not be cached as final. */
  settled: boolean;
}

/** Knobs for tests (the defaults are the constants above) and where to report abandoned work. */
export interface HighlightOptions {
  timeLimitMs?: number;
  waitMs?: number;
  log?: Logger;
}

interface Job {
  id: number;
  code: string;
  language: string;
  timeLimitMs: number;
  /** Called once: the markup, or null with why (a thread error's message, or "time limit"). */
  done: (markup: string | null, problem?: string) => void;
}

/**
 * The thread's module: beside this file when run from source; in the compiled binary (where
 * scripts/build.ts adds it as an entry point) at its path under src/, from the binary's root.
 */
const WORKER_URL = import.meta.url.includes("/$bunfs/")
  ? new URL("./http/web/repos/highlight-worker.ts", import.meta.url).href
  : new URL("./highlight-worker.ts", import.meta.url).href;

/** Why a job ended when its context closed (not logged, not remembered). */
const CLOSED = "closed";

/** One context's highlighting thread (started on first use; it does not keep the process alive), its queue and its cache. */
export class HighlightThread implements Highlighter {
  private worker: Worker | null = null;
  private running: { job: Job; timer: ReturnType<typeof setTimeout> } | null = null;
  private readonly queue: Job[] = [];
  private readonly inFlight = new Map<string, Promise<string[] | typeof PLAIN>>();
  private nextId = 1;
  private closed = false;
  private readonly cache = new ByteLru<string, string[] | typeof PLAIN>(CACHE_BYTES, (lines) => 64 + (lines ?? []).reduce((n, l) => n + 2 * l.length + 16, 0));
  /** Values derived from the cache's markup (diffs' parsed lines), by key: a quarter of the cache's budget. */
  private readonly derived = new ByteLru<string, { value: unknown; bytes: number }>(CACHE_BYTES / 4, (d) => d.bytes);

  recall(key: string): unknown {
    return this.derived.get(key)?.value;
  }

  remember(key: string, value: unknown, bytes: number): void {
    this.derived.set(key, { value, bytes: 64 + bytes });
  }

  /** The highlighting thread, started on first use. */
  private thread(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(WORKER_URL);
    (w as unknown as { unref(): void }).unref();
    w.onmessage = (event: MessageEvent<{ id: number; markup: string | null }>) => {
      if (this.worker !== w || this.running?.job.id !== event.data.id) return;
      this.finish(event.data.markup);
    };
    w.onerror = (event) => {
      event.preventDefault();
      if (this.worker !== w) return;
      this.stop();
      this.finish(null, `thread failed: ${event.message}`);
    };
    this.worker = w;
    return w;
  }

  /** Starts the highlighting thread ahead of the first file view (its modules load in ~50 ms of CPU). */
  warm(): void {
    if (!this.closed) this.thread();
  }

  /** Terminates the thread (a new one starts with the next job). */
  private stop(): void {
    this.worker?.terminate();
    this.worker = null;
  }

  /** Ends the running job with `markup` and starts the next. */
  private finish(markup: string | null, problem?: string): void {
    const r = this.running;
    if (!r) return;
    clearTimeout(r.timer);
    this.running = null;
    r.job.done(markup, problem);
    this.pump();
  }

  /** Sends the next queued job to the thread, with its time limit. */
  private pump(): void {
    if (this.running || this.closed) return;
    const job = this.queue.shift();
    if (!job) return;
    const w = this.thread();
    const timer = setTimeout(() => {
      this.stop();
      this.finish(null, "time limit");
    }, job.timeLimitMs);
    this.running = { job, timer };
    w.postMessage({ id: job.id, code: job.code, language: job.language });
  }

  cached(key: string): string[] | typeof PLAIN | undefined {
    return this.cache.get(key);
  }

  highlight(key: string, code: string, language: string, o: { timeLimitMs?: number; log?: Logger }): Promise<string[] | typeof PLAIN> | undefined {
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    if (this.closed || this.queue.length >= QUEUE_LIMIT) return undefined;
    const timeLimitMs = o.timeLimitMs ?? HIGHLIGHT_TIME_LIMIT_MS;
    const started = performance.now();
    const result = new Promise<string[] | typeof PLAIN>((resolve) => {
      this.queue.push({
        id: this.nextId++,
        code,
        language,
        timeLimitMs,
        done: (markup, problem) => {
          const lines = markup === null ? PLAIN : markup.split("\n");
          this.inFlight.delete(key);
          // A job ended by close() is not remembered: a later context highlights it afresh.
          if (problem !== CLOSED) this.cache.set(key, lines);
          if (problem && problem !== CLOSED)
            o.log?.warn("highlighting abandoned, shown plain", {
              key,
              language,
              bytes: code.length,
              problem,
              limit_ms: timeLimitMs,
              ms: Math.round(performance.now() - started),
            });
          resolve(lines);
        },
      });
    });
    this.inFlight.set(key, result);
    this.pump();
    return result;
  }

  /** Terminates the thread; the running and queued files are answered plain (a page waiting on one shows it plain). */
  close(): void {
    this.closed = true;
    this.stop();
    const r = this.running;
    this.running = null;
    if (r) {
      clearTimeout(r.timer);
      r.job.done(null, CLOSED);
    }
    for (const job of this.queue.splice(0)) job.done(null, CLOSED);
  }
}

/** `lines` as escaped text (the plain view). */
function plain(lines: string[], settled: boolean): Highlighted {
  return { lines: lines.map((l) => trusted(escapeHtml(l))), language: null, settled };
}

/**
 * One file's lines as markup: highlighted when its language is known and it is within the
 * bounds, else escaped text; with the language's name.
 */
export async function highlightLines(highlighter: Highlighter, oid: string, path: string, lines: string[], o: HighlightOptions = {}): Promise<Highlighted> {
  const language = languageOf(path);
  const lang = language ? LANGUAGES[language] : null;
  const size = lines.reduce((n, l) => n + l.length + 1, 0);
  const limit = lang?.engine === "hljs" ? HIGHLIGHT_LIMIT_HLJS : HIGHLIGHT_LIMIT;
  if (!language || !lang || size > limit || lines.some((l) => l.length > HIGHLIGHT_LINE_LIMIT)) return plain(lines, true);
  const key = `${oid}:${language}`;
  let marked = highlighter.cached(key);
  if (marked === undefined) {
    const work = highlighter.highlight(key, lines.join("\n"), language, o);
    if (!work) return plain(lines, false);
    const waited = Promise.withResolvers<undefined>();
    const timer = setTimeout(() => waited.resolve(undefined), o.waitMs ?? HIGHLIGHT_WAIT_MS);
    marked = await Promise.race([work, waited.promise]);
    clearTimeout(timer);
    if (marked === undefined) return plain(lines, false);
  }
  // A fragment count that differs from the line count would shift every anchor: show plain.
  if (marked === PLAIN || marked.length !== lines.length) return plain(lines, true);
  // Why trusted: see markupLines in highlight-engine.ts (escaped text, spans from a whitelist).
  return { lines: marked.map(trusted), language: lang.name, settled: true };
}

/**
 * Several texts highlighted in one job of the highlighting thread (a diff's hunk sides: each
 * tokenized alone, so a hunk never inherits a comment or string left open in the one before),
 * remembered by the content's hash like a file. Each part's lines, or null (plain); null for all
 * when the thread is busy, too slow (past `waitMs` the page goes plain and the work fills the
 * cache) or refused.
 */
export async function highlightParts(
  highlighter: Highlighter,
  parts: { code: string; language: string }[],
  o: HighlightOptions = {},
): Promise<(string[] | null)[] | null> {
  if (!parts.length) return [];
  const json = JSON.stringify(parts);
  const key = `parts:${Bun.hash(json).toString(36)}:${json.length}`;
  let marked = highlighter.cached(key);
  if (marked === undefined) {
    const work = highlighter.highlight(key, json, PARTS, o);
    if (!work) return null;
    const waited = Promise.withResolvers<undefined>();
    const timer = setTimeout(() => waited.resolve(undefined), o.waitMs ?? HIGHLIGHT_WAIT_MS);
    marked = await Promise.race([work, waited.promise]);
    clearTimeout(timer);
    if (marked === undefined) return null;
  }
  if (marked === PLAIN || marked.length !== 1) return null;
  const out = JSON.parse(marked[0]!) as unknown;
  return Array.isArray(out) && out.length === parts.length ? (out as (string[] | null)[]) : null;
}
