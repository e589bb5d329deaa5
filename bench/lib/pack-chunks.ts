// A pack file streamed in 64 KiB chunks, as the indexer receives a push (bench tools only).
import { closeSync, openSync, readSync } from "node:fs";

/** The bytes of `path` in 64 KiB chunks (a fresh buffer each: the indexer may keep them). */
export function* packChunks(path: string): Generator<Uint8Array> {
  const fd = openSync(path, "r");
  try {
    for (;;) {
      const buf = new Uint8Array(65536);
      const n = readSync(fd, buf);
      if (n <= 0) break;
      yield n === buf.length ? buf : buf.subarray(0, n);
    }
  } finally {
    closeSync(fd);
  }
}
