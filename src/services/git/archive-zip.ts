// The zip half of repository archives (DECISIONS §5 "GET …/archive/{ref}"), written by yazl:
// entries in tree order, each read only when the output reaches it (yazl pumps one entry at a
// time and its output stream applies backpressure), so memory holds the entry list and one file.
// Unix modes ride in the external attributes (made by "unix"): files 0644 or 0755, directories
// 0755, symlinks stored as symlinks (S_IFLNK, the target as the data), which unzip restores.
import { Readable } from "node:stream";
import { ZipFile } from "yazl";

/** One zip entry; `read` gives a file's bytes or a symlink's target when yazl reaches it. */
export interface ZipItem {
  /** Path inside the archive (directories end with `/`). */
  path: string;
  kind: "file" | "dir" | "symlink";
  executable?: boolean;
  size: number;
}

/** A file's bytes handed to yazl in slices: its CRC and deflate then work a slice at a time. */
function* slices(data: Uint8Array, size = 1024 * 1024): Generator<Buffer> {
  for (let at = 0; at < data.length; at += size) yield Buffer.from(data.buffer, data.byteOffset + at, Math.min(size, data.length - at));
}

/**
 * A zip of `items` as a byte stream. `read(i)` is called once per file or symlink, in order, as
 * the consumer drains the output; an error from it (or yazl) destroys the stream with that error.
 */
export function zipStream(items: readonly ZipItem[], mtime: Date, read: (index: number) => Promise<Uint8Array>): Readable {
  const zip = new ZipFile();
  const out = zip.outputStream as unknown as Readable;
  zip.on("error", (e: Error) => out.destroy(e));
  items.forEach((item, i) => {
    if (item.kind === "dir") {
      zip.addEmptyDirectory(item.path, { mtime, mode: 0o40755 });
      return;
    }
    const mode = item.kind === "symlink" ? 0o120777 : item.executable ? 0o100755 : 0o100644;
    zip.addReadStreamLazy(item.path, { mtime, mode, size: item.size, compress: item.kind === "file" && item.size > 0 }, (cb) => {
      read(i).then(
        (data) => cb(null, Readable.from(slices(data))),
        (e: Error) => cb(e, undefined as unknown as Readable),
      );
    });
  });
  zip.end();
  return out;
}
