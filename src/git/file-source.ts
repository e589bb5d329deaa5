// ByteSource over a local file (temp packs, tests, the fs object store).
import { open } from "node:fs/promises";
import { GitError, type ByteSource } from "./types.ts";

/** A ByteSource reading ranges of the file at `path` with positioned reads; close() releases it. */
export async function openFileSource(path: string): Promise<ByteSource & { close(): Promise<void> }> {
  const fh = await open(path, "r");
  const { size } = await fh.stat();
  return {
    size,
    async read(offset: number, length: number): Promise<Uint8Array> {
      if (offset < 0 || length < 0 || offset + length > size) {
        throw new GitError(`read of ${length} bytes at ${offset} is past the end of ${path} (${size} bytes)`);
      }
      const buf = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await fh.read(buf, done, length - done, offset + done);
        if (bytesRead === 0) throw new GitError(`unexpected end of ${path}`);
        done += bytesRead;
      }
      return buf;
    },
    close: () => fh.close(),
  };
}
