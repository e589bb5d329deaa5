// The links between objects, scanned straight from their bytes for the reachability walks:
// a commit's tree, parents and committer time, a tree's entries as (kind, oid). Names,
// messages and identities are never decoded; full parsing lives in object.ts.
import { GitError, type Oid } from "./types.ts";

/** What a walk needs from a commit. */
export interface CommitLinks {
  tree: Oid;
  parents: Oid[];
  /** Committer time in seconds (0 when unreadable, as git's parse_commit_date). */
  time: number;
}

/** Kind of a tree entry: a subtree, a file (blob or symlink), or a gitlink (submodule commit). */
export type EntryKind = "tree" | "blob" | "gitlink";

const NL = 0x0a;
const SP = 0x20;
const decoder = new TextDecoder();

function hexAt(data: Uint8Array, at: number, length: number): string {
  return Buffer.from(data.buffer, data.byteOffset + at, length).toString("hex");
}

function startsWithAt(data: Uint8Array, at: number, text: string): boolean {
  if (at + text.length > data.length) return false;
  for (let i = 0; i < text.length; i++) if (data[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** Tree, parents and committer time of a commit; throws GitError when the header is malformed. */
export function commitLinks(data: Uint8Array): CommitLinks {
  if (!startsWithAt(data, 0, "tree ") || data[45] !== NL) throw new GitError("invalid commit: missing or bad tree line");
  const tree = decoder.decode(data.subarray(5, 45));
  const parents: Oid[] = [];
  let at = 46;
  while (startsWithAt(data, at, "parent ")) {
    if (data[at + 47] !== NL) throw new GitError("invalid commit: bad parent line");
    parents.push(decoder.decode(data.subarray(at + 7, at + 47)));
    at += 48;
  }
  let time = 0;
  while (at < data.length && data[at] !== NL) {
    const end = data.indexOf(NL, at);
    const lineEnd = end < 0 ? data.length : end;
    if (startsWithAt(data, at, "committer ")) {
      time = signatureTime(data, at, lineEnd);
      break;
    }
    at = lineEnd + 1;
  }
  return { tree, parents, time };
}

/** The timestamp of "name <email> 1700000000 +0000" between `start` and `end`. */
function signatureTime(data: Uint8Array, start: number, end: number): number {
  const gt = data.lastIndexOf(0x3e, end);
  if (gt < start) return 0;
  let at = gt + 1;
  while (at < end && data[at] === SP) at++;
  let value = 0;
  let digits = 0;
  while (at < end && data[at]! >= 0x30 && data[at]! <= 0x39) {
    value = value * 10 + (data[at]! - 0x30);
    at++;
    digits++;
  }
  return digits > 0 ? value : 0;
}

/** Call `visit` for each tree entry with its kind and oid; throws GitError on a truncated entry. */
export function forEachTreeEntry(data: Uint8Array, visit: (kind: EntryKind, oid: Oid) => void): void {
  let at = 0;
  while (at < data.length) {
    const sp = data.indexOf(SP, at);
    const nul = sp < 0 ? -1 : data.indexOf(0, sp + 1);
    if (sp <= at || nul < 0 || nul + 21 > data.length) throw new GitError("invalid tree: truncated entry");
    const modeLength = sp - at;
    let kind: EntryKind = "blob";
    if (data[at] === 0x34 || (data[at] === 0x30 && data[at + 1] === 0x34)) kind = "tree";
    else if (modeLength === 6 && startsWithAt(data, at, "160000")) kind = "gitlink";
    visit(kind, hexAt(data, nul + 1, 20));
    at = nul + 21;
  }
}
