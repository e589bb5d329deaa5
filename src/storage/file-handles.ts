// A bounded pool of open read-only file handles, so ranged reads of hot pack files skip the
// open/close per call. Safe because stored files are immutable; a replaced or deleted file is
// invalidated explicitly, and a handle is closed only once no read is using it.

import { open, type FileHandle } from "node:fs/promises";
import { ByteLru } from "./lru.ts";

interface Slot {
  handle: Promise<FileHandle>;
  users: number;
  retired: boolean;
}

/** Keeps up to `maxOpen` read-only handles open, least recently used closed first. */
export class FileHandlePool {
  private readonly slots: ByteLru<string, Slot>;

  constructor(maxOpen = 64) {
    this.slots = new ByteLru<string, Slot>(
      maxOpen,
      () => 1,
      (_path, slot) => this.retire(slot),
    );
  }

  /** Run `fn` with an open handle for `path`; the handle stays open for later calls. */
  async use<T>(path: string, fn: (handle: FileHandle) => Promise<T>): Promise<T> {
    let slot = this.slots.get(path);
    if (!slot) {
      const created: Slot = { handle: open(path, "r"), users: 0, retired: false };
      created.handle.catch(() => {
        if (this.slots.has(path) && this.slots.get(path) === created) this.slots.delete(path);
      });
      slot = created;
      slot.users++;
      this.slots.set(path, slot);
    } else {
      slot.users++;
    }
    try {
      return await fn(await slot.handle);
    } finally {
      slot.users--;
      if (slot.retired && slot.users === 0) closeSlot(slot);
    }
  }

  /** Forget the handle for `path` (after the file was replaced or deleted). */
  invalidate(path: string): void {
    this.slots.delete(path);
  }

  private retire(slot: Slot): void {
    slot.retired = true;
    if (slot.users === 0) closeSlot(slot);
  }
}

function closeSlot(slot: Slot): void {
  slot.handle.then((handle) => handle.close()).catch(() => {});
}
