// The tasks the thread pool runs (src/util/thread-pool.ts), by name. Each is a pure function of
// its input (plus what the thread builds for itself); add a task here and it runs on every thread.
import { uploadPackTask } from "./services/git/upload-thread.ts";
import { indexPackTask } from "./git/pack-index-task.ts";
import type { IndexTaskInput } from "./git/pack-indexer.ts";
import type { TaskIo } from "./util/thread-pool.ts";
import { parseWorkflowTask } from "./services/ci/workflow.ts";
import { planJobAtTask } from "./services/ci/plan-task.ts";
import { resolveStoredChain, type StoredChain } from "./git/object-chain.ts";
import { markdownToHtml, type LinkBase } from "./http/web/kit/markdown.ts";
import { hunkLines, mapRanges, type LineRange } from "./services/changes/anchors.ts";
import { diffTexts } from "./git/line-diff.ts";
import { blameTask } from "./services/git/blame-thread.ts";

/** Every task a thread can run. */
export const TASKS = {
  /** Echoes its input (the pool's own tests and the startup check). */
  "pool.echo": (input: unknown) => input,
  /** Emits `count` numbers then returns them summed (the pool's tests of streaming and backpressure). */
  "pool.count": async (input: { count: number }, io: TaskIo) => {
    let sum = 0;
    for (let i = 0; i < input.count; i++) {
      await io.emit(i);
      sum += i;
    }
    return sum;
  },
  /** Spins for `ms` of CPU (the pool's tests of time limits and of the event loop staying free). */
  "pool.spin": (input: { ms: number }) => {
    const end = performance.now() + input.ms;
    let n = 0;
    while (performance.now() < end) n++;
    return n;
  },
  /** Lists and writes the pack of a large fetch, emitting the response bytes (services/git/upload-thread.ts). */
  "git.uploadPack": uploadPackTask,
  /** Indexes a pushed or fetched pack from the temp file the caller writes (git/pack-index-task.ts). */
  "git.indexPack": (input: IndexTaskInput) => indexPackTask(input),
  /** Throws an error carrying a `code` (the pool's tests of error passing). */
  "pool.fail": (input: { message: string; code?: string }) => {
    throw Object.assign(new Error(input.message), { code: input.code });
  },
  /** Parses one workflow file and matches its `on` against the trigger (services/ci/workflow.ts). */
  "ci.parseWorkflow": parseWorkflowTask,
  /** Plans a released placeholder's jobs: its workflow file parsed again with the needs (services/ci/plan-task.ts). */
  "ci.planJobAt": planJobAtTask,
  /** Renders a big Markdown source to sanitized markup (http/web/kit/markdown.ts). */
  "web.renderMarkdown": async (input: { source: string; base: LinkBase; plain?: boolean }) =>
    markdownToHtml(input.source, input.base, { fence: input.plain ? null : (await import("./http/web/repos/markdown-fence.ts")).FENCE_HIGHLIGHTER }),
  /** Resolves an object from its stored pieces (git/object-chain.ts); emits its bytes once, transferred, and returns their length. */
  "git.resolveChain": async (input: { chain: StoredChain; maxSize: number }, io: TaskIo) => {
    const data = resolveStoredChain(input.chain, input.maxSize);
    const own = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : data.slice();
    await io.emit(own, [own.buffer as ArrayBuffer]);
    return own.byteLength;
  },
  /** Maps comment ranges from one version of a file to the next (services/changes/anchors.ts). */
  "changes.mapRanges": (input: { old: string; new: string; ranges: LineRange[] }) => mapRanges(input.old, input.new, input.ranges),
  /** The lines of one side of a file's diff that may take comments (services/changes/anchors.ts). */
  "changes.hunkLines": (input: { old: string; new: string; side: "old" | "new" }) => hunkLines(input.old, input.new, input.side),
  /** The line diff of one big file's two sides: counts and, when asked, the unified hunks (git/line-diff.ts). */
  "git.lineDiff": (input: { a: string; b: string; wantPatch: boolean }) => diffTexts(input.a, input.b, input.wantPatch),
  /** The blame of one file at one commit, through the thread's own store (services/git/blame-thread.ts). */
  "git.blame": blameTask,
} as const;

export type Tasks = typeof TASKS;
