// ObjectStore over a local folder. Writes go to a temp file next to the target, are fsynced,
// then renamed into place, so a reader sees either no object or the whole object.

import { randomUUID } from "node:crypto";
import { constants, type Dirent } from "node:fs";
import { copyFile, mkdir, open, readdir, readFile, rename, rm, stat, unlink } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { FileHandlePool } from "./file-handles.ts";
import { assertValidKey, assertValidPrefix } from "./keys.ts";
import { StorageError, type ObjectInfo, type ObjectStore } from "./object-store.ts";
import { assertRange } from "./range.ts";
import { newStorageStats } from "./stats.ts";

// "~" cannot occur in a key (see keys.ts), so a name containing it is always a temp file.
const TEMP_MARK = "~";

// One pool for the whole process, keyed by absolute path. Why not one per store: Bun treats a
// FileHandle that is garbage-collected while open as an error, and a store (with its pool)
// can become unreachable while its handles are open; a module-level pool never does.
const handles = new FileHandlePool();

/** An ObjectStore keeping each object as the file `<root>/<key>`. */
export function createFsStore(root: string): ObjectStore {
  const base = resolve(root);
  // The same counters as the S3 backend (one "request" per call), so the two can be compared.
  const stats = newStorageStats();
  const pathOf = (key: string): string => {
    assertValidKey(key);
    return join(base, key);
  };

  async function writeAtomically(key: string, fill: (tempPath: string) => Promise<void>): Promise<void> {
    const target = pathOf(key);
    const dir = dirname(target);
    await mkdir(dir, { recursive: true });
    const temp = join(dir, `${basename(target)}${TEMP_MARK}${randomUUID()}`);
    try {
      await fill(temp);
      await syncPath(temp, "r+");
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    handles.invalidate(target);
    await syncPath(dir, "r");
  }

  return {
    kind: "fs",
    stats,

    localPath: pathOf,

    async putFile(key, path) {
      stats.requests.PUT++;
      await writeAtomically(key, (temp) => copyFile(path, temp, constants.COPYFILE_EXCL));
      stats.bytesWritten += (await stat(pathOf(key))).size;
    },

    put: (key, data) =>
      writeAtomically(key, async (temp) => {
        stats.requests.PUT++;
        stats.bytesWritten += data.byteLength;
        const handle = await open(temp, "wx");
        try {
          await handle.writeFile(data);
        } finally {
          await handle.close();
        }
      }),

    async get(key) {
      try {
        stats.requests.GET++;
        const buf = await readFile(pathOf(key));
        stats.bytesRead += buf.byteLength;
        return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },

    async getRange(key, offset, length) {
      const path = pathOf(key);
      assertRange(key, offset, length);
      if (length === 0) return new Uint8Array(0);
      stats.requests.GET++;
      stats.bytesRead += length;
      try {
        return await handles.use(path, async (handle) => {
          const out = new Uint8Array(length);
          let done = 0;
          while (done < length) {
            const { bytesRead } = await handle.read(out, done, length - done, offset + done);
            if (bytesRead === 0) {
              throw new StorageError(`range ${offset}+${length} past the end of ${key}`, "out_of_range");
            }
            done += bytesRead;
          }
          return out;
        });
      } catch (err) {
        if (isMissing(err)) throw new StorageError(`no such object: ${key}`, "not_found");
        throw err;
      }
    },

    async stat(key) {
      stats.requests.HEAD++;
      try {
        const info = await stat(pathOf(key));
        return info.isFile() ? { size: info.size } : null;
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },

    async delete(key) {
      const path = pathOf(key);
      stats.requests.DELETE++;
      handles.invalidate(path);
      try {
        await unlink(path);
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
    },

    list(prefix) {
      assertValidPrefix(prefix);
      stats.requests.LIST++;
      return walk(base, prefix.slice(0, prefix.lastIndexOf("/") + 1), prefix);
    },
  };
}

// Depth-first walk that yields keys in ascending order: siblings are sorted with a "/"
// appended to directory names, which is exactly where their keys sort among the files.
async function* walk(base: string, dirKey: string, prefix: string): AsyncGenerator<ObjectInfo> {
  let entries: Dirent[];
  try {
    entries = await readdir(join(base, dirKey), { withFileTypes: true });
  } catch (err) {
    if (isMissing(err) || (err as NodeJS.ErrnoException).code === "ENOTDIR") return;
    throw err;
  }
  const children = entries
    .filter((entry) => !entry.name.includes(TEMP_MARK) && (entry.isDirectory() || entry.isFile()))
    .map((entry) => ({ key: dirKey + entry.name + (entry.isDirectory() ? "/" : ""), isDir: entry.isDirectory() }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const child of children) {
    if (child.isDir) {
      if (child.key.startsWith(prefix) || prefix.startsWith(child.key)) yield* walk(base, child.key, prefix);
    } else if (child.key.startsWith(prefix)) {
      try {
        const info = await stat(join(base, child.key));
        yield { key: child.key, size: info.size, modifiedAt: Math.floor(info.mtimeMs) };
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
    }
  }
}

async function syncPath(path: string, flags: "r" | "r+"): Promise<void> {
  const handle = await open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | null)?.code === "ENOENT";
}
