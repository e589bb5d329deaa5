// The thread side of indexPack with `run` (pack-indexer.ts "On a worker thread"): both passes of
// the indexer on a worker, reading the temp file the caller's thread writes. Why: inflating,
// hashing, checking and resolving a pack is CPU that grows with the input (a 337-byte delta
// bomb, a 50,000-deep chain); on the event loop it stalls every request, here only this thread.
//
// Over the task's port the caller says how far the file goes ("data", "end") and answers thin
// base requests ("base"); this side says when the trailing checksum arrived ("complete"), asks
// for bases ("base?") and hints the ones it will need ("prefetch").
import { closeSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { FsckError, FsckSession } from "./fsck.ts";
import { type CoreSource, type FromIndexer, type IndexTaskInput, type IndexTaskResult, indexPackCore, type ToIndexer } from "./pack-indexer.ts";
import { GitError, type Oid, type RawObject } from "./types.ts";

/** Bytes read from the temp file at a time. */
const READ_CHUNK = 1 << 20;

/** Runs on a worker thread (src/thread-tasks.ts "git.indexPack"). */
export async function indexPackTask(input: IndexTaskInput): Promise<IndexTaskResult> {
  const port = input.port;
  let total = 0;
  let ended = false;
  let wake: (() => void) | null = null;
  const waiting = new Map<Oid, ((o: RawObject | null) => void)[]>();
  port.onmessage = (event: MessageEvent<ToIndexer>) => {
    const m = event.data;
    if (m.t === "data") total = m.total;
    else if (m.t === "end") ended = true;
    else if (m.t === "base") {
      const list = waiting.get(m.oid) ?? [];
      waiting.delete(m.oid);
      for (const resolve of list) resolve(m.object);
      return;
    }
    const w = wake;
    wake = null;
    w?.();
  };
  const send = (m: FromIndexer) => port.postMessage(m);
  const path = join(input.tmpDir, `tmp-pack-${input.unique}.pack`);

  async function* chunks(): AsyncGenerator<Uint8Array> {
    const fd = openSync(path, "r");
    try {
      const buf = new Uint8Array(READ_CHUNK);
      let at = 0;
      for (;;) {
        while (at >= total && !ended) await new Promise<void>((resolve) => (wake = resolve));
        if (at >= total) return;
        const n = readSync(fd, buf, 0, Math.min(buf.length, total - at), at);
        if (n <= 0) throw new GitError("unexpected end of the temporary pack file");
        at += n;
        yield buf.subarray(0, n);
      }
    } finally {
      closeSync(fd);
    }
  }

  const source: CoreSource = {
    chunks: chunks(),
    spooled: true,
    // Told as soon as the checksum checked out (before resolution), so the caller stops reading.
    complete: (end) => send({ t: "complete", end }),
    bases: input.thin
      ? {
          read: (oid) =>
            new Promise<RawObject | null>((resolve) => {
              const list = waiting.get(oid);
              if (list) list.push(resolve);
              else {
                waiting.set(oid, [resolve]);
                send({ t: "base?", oid });
              }
            }),
          prefetch: (oids) => send({ t: "prefetch", oids: [...oids] }),
        }
      : undefined,
  };
  const fsck = input.fsck ? new FsckSession() : null;
  try {
    const out = await indexPackCore({ tmpDir: input.tmpDir, unique: input.unique, limits: input.limits }, source, fsck);
    return { ok: out, fsck: fsck?.state() ?? null };
  } catch (e) {
    if (e instanceof FsckError) return { error: { message: e.message, code: e.code, problem: e.problem } };
    if (e instanceof GitError) return { error: { message: e.message, code: e.code } };
    throw e;
  } finally {
    port.close();
  }
}
