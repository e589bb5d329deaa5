// Object codec: commits, trees and tags to and from their canonical bytes.
// Text is decoded losslessly (see text.ts), so serialize(parse(bytes)) gives back the same
// bytes for every well-formed object, including non-UTF-8 names and messages.
import { bytesToHex, hashObject, hexToBytes, isOid } from "./oid.ts";
import { type FsckWarnings, fsckForIndex, type TreeFindings, type TreeLayout } from "./fsck.ts";
import type { OidSet } from "./oid-set.ts";
import { decodeText, encodeText } from "./text.ts";
import { GitError, type ObjectType, type Oid } from "./types.ts";

/** An identity line: "Name <email> 1700000000 +0100". */
export interface Signature {
  name: string;
  email: string;
  /** Seconds since the epoch. */
  timestamp: number;
  /** As written, e.g. "+0000" or "-0530". */
  timezone: string;
  /**
   * The line as written, when it is not in git's canonical form (old importers wrote odd lines;
   * the object checks accept them): name, email and time are then git's best reading of it, and
   * the commit serializes back to its own bytes.
   */
  raw?: string;
}

/** A parsed commit; extraHeaders (encoding, mergetag, gpgsig …) keep their order, continuation lines joined by "\n". */
export interface Commit {
  tree: Oid;
  parents: Oid[];
  author: Signature;
  committer: Signature;
  message: string;
  extraHeaders: [string, string][];
  /** Headers only, without the blank line that starts a message (git accepts such objects). */
  headersOnly?: true;
}

/** One tree entry; mode as written ("100644", "100755", "120000", "40000", "160000"). */
export interface TreeEntry {
  mode: string;
  name: string;
  oid: Oid;
}

/** A parsed annotated tag; tagger is null for very old tags. */
export interface Tag {
  object: Oid;
  type: ObjectType;
  tag: string;
  tagger: Signature | null;
  message: string;
  /** Headers after tagger, if any (rare). */
  extraHeaders?: [string, string][];
  /** Headers only, without the blank line that starts a message. */
  headersOnly?: true;
}

const NL = 0x0a;
const SP = 0x20;
const OBJECT_TYPES: ReadonlySet<string> = new Set<string>(["commit", "tree", "blob", "tag"]);
/** Modes svc writes and reads back the same ("040000" and "100664" only come from very old git); other modes C git only warns about are kept as pushed. */
export const TREE_MODES: ReadonlySet<string> = new Set(["100644", "100755", "120000", "40000", "160000", "040000", "100664"]);

/**
 * Parse "Name <email> timestamp tz". A line in any other shape is read as git's split_ident_line
 * reads it (name before the first "<", email up to the next ">", then a time and a zone when
 * they parse, else 0 and "+0000"), keeping the line itself in `raw`; never throws.
 */
export function parseSignature(s: string): Signature {
  const lt = s.indexOf("<");
  const gt = s.indexOf(">", lt + 1);
  if (lt >= 0 && gt >= 0) {
    const name = s.slice(0, lt).replace(/ $/, "");
    const email = s.slice(lt + 1, gt);
    const m = /^ (\d+) ([+-]\d{4})$/.exec(s.slice(gt + 1));
    if (m && !email.includes("<") && !name.includes(">") && Number.isSafeInteger(Number(m[1])) && (m[1] === "0" || m[1]![0] !== "0")) {
      return { name, email, timestamp: Number(m[1]), timezone: m[2]! };
    }
  }
  const name = (lt >= 0 ? s.slice(0, lt) : s).trim();
  const email = lt >= 0 ? s.slice(lt + 1, gt > lt ? gt : s.length) : "";
  const m = gt > lt ? /^\s*(\d+)(?:\s+([+-]\d{4}))?/.exec(s.slice(gt + 1)) : null;
  const timestamp = m && Number.isSafeInteger(Number(m[1])) ? Number(m[1]) : 0;
  return { name, email, timestamp, timezone: m?.[2] ?? "+0000", raw: s };
}

/** Format a signature the way git writes it (a non-canonical line as it was read). */
export function formatSignature(sig: Signature): string {
  return sig.raw ?? `${sig.name} <${sig.email}> ${sig.timestamp} ${sig.timezone}`;
}

/** Parse a commit object's bytes; throws GitError on malformed headers. */
export function parseCommit(data: Uint8Array): Commit {
  const { headers, message, headersOnly } = splitHeaders(data, "commit");
  let i = 0;
  const next = (key: string): string | undefined => (headers[i]?.[0] === key ? headers[i++]![1] : undefined);
  const tree = next("tree");
  if (tree === undefined || !isOid(tree)) throw new GitError("invalid commit: missing or bad tree line");
  const parents: Oid[] = [];
  for (let p = next("parent"); p !== undefined; p = next("parent")) {
    if (!isOid(p)) throw new GitError(`invalid commit: bad parent ${JSON.stringify(p)}`);
    parents.push(p);
  }
  const author = next("author");
  if (author === undefined) throw new GitError("invalid commit: missing author");
  const committer = next("committer");
  if (committer === undefined) throw new GitError("invalid commit: missing committer");
  const commit: Commit = {
    tree,
    parents,
    author: parseSignature(author),
    committer: parseSignature(committer),
    message,
    extraHeaders: headers.slice(i),
  };
  if (headersOnly) commit.headersOnly = true;
  return commit;
}

/** Serialize a commit to its canonical bytes. */
export function serializeCommit(c: Commit): Uint8Array {
  let s = `tree ${c.tree}\n`;
  for (const p of c.parents) s += `parent ${p}\n`;
  s += `author ${formatSignature(c.author)}\ncommitter ${formatSignature(c.committer)}\n`;
  for (const [k, v] of c.extraHeaders) s += formatHeader(k, v);
  return encodeText(c.headersOnly ? s : `${s}\n${c.message}`);
}

/** Parse a tag object's bytes; throws GitError on malformed headers. */
export function parseTag(data: Uint8Array): Tag {
  const { headers, message, headersOnly } = splitHeaders(data, "tag");
  const [o, t, n] = headers;
  if (o?.[0] !== "object" || !isOid(o[1])) throw new GitError("invalid tag: missing or bad object line");
  if (t?.[0] !== "type" || !OBJECT_TYPES.has(t[1])) throw new GitError("invalid tag: missing or bad type line");
  if (n?.[0] !== "tag") throw new GitError("invalid tag: missing tag line");
  let i = 3;
  let tagger: Signature | null = null;
  if (headers[i]?.[0] === "tagger") tagger = parseSignature(headers[i++]![1]);
  const tag: Tag = { object: o[1], type: t[1] as ObjectType, tag: n[1], tagger, message };
  if (i < headers.length) tag.extraHeaders = headers.slice(i);
  if (headersOnly) tag.headersOnly = true;
  return tag;
}

/** Serialize a tag to its canonical bytes. */
export function serializeTag(t: Tag): Uint8Array {
  let s = `object ${t.object}\ntype ${t.type}\ntag ${t.tag}\n`;
  if (t.tagger) s += `tagger ${formatSignature(t.tagger)}\n`;
  for (const [k, v] of t.extraHeaders ?? []) s += formatHeader(k, v);
  return encodeText(t.headersOnly ? s : `${s}\n${t.message}`);
}

/** Parse a tree object's bytes; throws GitError on a truncated or malformed entry. */
export function parseTree(data: Uint8Array): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let pos = 0;
  while (pos < data.length) {
    const sp = data.indexOf(SP, pos);
    if (sp <= pos) throw new GitError("invalid tree: malformed mode");
    const nul = data.indexOf(0, sp + 1);
    if (nul < 0 || nul + 21 > data.length) throw new GitError("invalid tree: truncated entry");
    let mode = "";
    for (let k = pos; k < sp; k++) {
      const c = data[k]!;
      if (c < 0x30 || c > 0x37) throw new GitError("invalid tree: malformed mode");
      mode += String.fromCharCode(c);
    }
    entries.push({ mode, name: decodeText(data.subarray(sp + 1, nul)), oid: bytesToHex(data, nul + 1, 20) });
    pos = nul + 21;
  }
  return entries;
}

/** Serialize tree entries, sorted git's way (a directory sorts as its name + "/"); throws on invalid entries. */
export function serializeTree(entries: TreeEntry[]): Uint8Array {
  const enc = entries.map((e) => {
    checkTreeEntry(e.mode, e.name);
    if (!isOid(e.oid)) throw new GitError(`invalid tree entry oid: ${e.oid}`);
    return { e, name: encodeText(e.name), key: treeSortKey(e.mode, encodeText(e.name)) };
  });
  enc.sort((a, b) => compareBytes(a.key, b.key));
  let size = 0;
  for (let k = 0; k < enc.length; k++) {
    if (k > 0 && compareBytes(enc[k - 1]!.name, enc[k]!.name) === 0) {
      throw new GitError(`duplicate tree entry: ${enc[k]!.e.name}`);
    }
    size += enc[k]!.e.mode.length + 1 + enc[k]!.name.length + 1 + 20;
  }
  const out = new Uint8Array(size);
  let pos = 0;
  for (const { e, name } of enc) {
    for (let k = 0; k < e.mode.length; k++) out[pos++] = e.mode.charCodeAt(k);
    out[pos++] = SP;
    out.set(name, pos);
    pos += name.length;
    out[pos++] = 0;
    out.set(hexToBytes(e.oid), pos);
    pos += 20;
  }
  return out;
}

/**
 * Throw GitError unless `data` is an object of `type` that svc accepts (fsck.ts, FSCK_RULES);
 * what it accepts with a warning goes to `warnings` when given. With `links`, every object the
 * object names (a commit's tree and parents, a tag's object, a tree's entries except gitlinks) is
 * added to it; with `found`, the blobs a tree names `.gitmodules` / `.gitattributes` are reported
 * to it (a FsckSession's), from the same pass over the tree. `layout` (the indexer's) receives
 * where a tree's entries start and may say what it copies whole from its base (fsck.ts TreeLayout).
 */
export function validateObject(type: ObjectType, data: Uint8Array, links?: OidSet, found?: TreeFindings, layout?: TreeLayout, warnings?: FsckWarnings): void {
  fsckForIndex(type, data, () => hashObject(type, data), { links: links ?? null, found: found ?? null, warnings: warnings ?? null, layout: layout ?? null });
}

/** True for tree modes that name a subtree. */
export function isTreeMode(mode: string): boolean {
  // Old trees may pad a directory's mode further ("0040000"); git reads the number.
  return mode === "40000" || mode === "040000" || (mode.length > 6 && mode.endsWith("40000") && (Number.parseInt(mode, 8) & 0o170000) === 0o040000);
}

/** Byte order git uses for tree entries. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

function treeSortKey(mode: string, name: Uint8Array): Uint8Array {
  if (!isTreeMode(mode)) return name;
  const key = new Uint8Array(name.length + 1);
  key.set(name);
  key[name.length] = 0x2f;
  return key;
}

function checkTreeEntry(mode: string, name: string): void {
  if (!TREE_MODES.has(mode)) throw new GitError(`invalid tree: bad mode ${mode}`);
  if (name === "" || name.includes("/") || name.includes("\0")) {
    throw new GitError(`invalid tree: bad entry name ${JSON.stringify(name)}`);
  }
  // Why: "." / ".." / ".git" entries let a checkout write outside the work tree or into .git.
  if (name === "." || name === ".." || name.toLowerCase() === ".git") {
    throw new GitError(`invalid tree: forbidden entry name ${JSON.stringify(name)}`);
  }
}

function formatHeader(key: string, value: string): string {
  return `${key} ${value.replaceAll("\n", "\n ")}\n`;
}

/** Split "key value\n" header lines (with " "-continuations) from the message after the blank line. */
function splitHeaders(data: Uint8Array, what: string): { headers: [string, string][]; message: string; headersOnly: boolean } {
  const headers: [string, string][] = [];
  let pos = 0;
  while (pos < data.length && data[pos] !== NL) {
    let eol = data.indexOf(NL, pos);
    if (eol < 0) throw new GitError(`invalid ${what}: unterminated header`);
    const sp = data.indexOf(SP, pos);
    if (sp < 0 || sp > eol || sp === pos) throw new GitError(`invalid ${what}: malformed header line`);
    const key = decodeText(data.subarray(pos, sp));
    let value = decodeText(data.subarray(sp + 1, eol));
    while (data[eol + 1] === SP) {
      const start = eol + 2;
      eol = data.indexOf(NL, start);
      if (eol < 0) throw new GitError(`invalid ${what}: unterminated header`);
      value += `\n${decodeText(data.subarray(start, eol))}`;
    }
    headers.push([key, value]);
    pos = eol + 1;
  }
  return { headers, message: pos < data.length ? decodeText(data.subarray(pos + 1)) : "", headersOnly: pos >= data.length };
}
