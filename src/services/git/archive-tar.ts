// The tar half of repository archives (DECISIONS §5 "GET …/archive/{ref}"): POSIX ustar headers
// with pax extended headers where ustar cannot say it, laid out as `git archive --format=tar`
// lays them out (archive-tar.c), so the same tree gives the same bytes:
//
//   - each entry is a 512-byte header, then its data padded to 512 bytes; the archive ends with
//     at least two zero blocks and is padded to a multiple of 10,240 bytes (20 blocks);
//   - header: name[100] mode[8] uid[8] gid[8] size[12] mtime[12] chksum[8] typeflag[1]
//     linkname[100] magic "ustar\0" version "00" uname[32] gname[32] devmajor[8] devminor[8]
//     prefix[155]; numbers in octal, NUL-terminated; uid/gid 0, uname/gname "root";
//   - modes after git's tar.umask (002): directories 0775, executables 0775, files 0664,
//     symlinks 0777; mtime is the commit's committer time;
//   - a first `pax_global_header` (typeflag g) records the commit id as `comment=`;
//   - a path longer than 100 bytes is split at a `/` into prefix and name when it fits, else it
//     goes into a pax `path=` record (typeflag x, before the entry); so do symlink targets longer
//     than 100 bytes (`linkpath=`) and sizes beyond 11 octal digits (`size=`).
// Pure encoding: no I/O. The archive service (services/repos/archive.ts) streams the pieces.

/** Bytes of one tar block. */
export const TAR_BLOCK = 512;
/** Tar output is padded to a multiple of this (20 blocks, as git and GNU tar write). */
export const TAR_RECORD = TAR_BLOCK * 20;
/** The largest size or mtime 11 octal digits hold. */
const USTAR_MAX = 0o77777777777;
/** git's default tar.umask. */
const UMASK = 0o002;

/** What one tar entry is. */
export interface TarEntry {
  /** Path inside the archive (directories end with `/`). */
  path: string;
  kind: "file" | "dir" | "symlink";
  /** Files: whether git records it executable (100755). */
  executable?: boolean;
  /** Data bytes that follow the header (files; 0 otherwise). */
  size: number;
  /** Symlinks: the target, as git stores it (bytes). */
  linkname?: Uint8Array;
  /** The object id git names pax headers after. */
  oid: string;
}

const encoder = new TextEncoder();

function put(block: Uint8Array, offset: number, length: number, value: Uint8Array | string): void {
  const bytes = typeof value === "string" ? encoder.encode(value) : value;
  block.set(bytes.subarray(0, length), offset);
}

function octal(value: number, digits: number): string {
  return value.toString(8).padStart(digits, "0");
}

/** One ustar header block, checksum filled in. */
function header(name: Uint8Array, prefix: Uint8Array | null, mode: number, size: number, mtime: number, type: string, linkname: Uint8Array | null): Uint8Array {
  const h = new Uint8Array(TAR_BLOCK);
  put(h, 0, 100, name);
  put(h, 100, 8, octal(mode & 0o7777, 7));
  put(h, 108, 8, octal(0, 7));
  put(h, 116, 8, octal(0, 7));
  put(h, 124, 12, octal(size, 11));
  put(h, 136, 12, octal(mtime, 11));
  put(h, 156, 1, type);
  if (linkname) put(h, 157, 100, linkname);
  put(h, 257, 6, "ustar\0");
  put(h, 263, 2, "00");
  put(h, 265, 32, "root");
  put(h, 297, 32, "root");
  put(h, 329, 8, octal(0, 7));
  put(h, 337, 8, octal(0, 7));
  if (prefix) put(h, 345, 155, prefix);
  // The checksum is summed with its own field as eight spaces.
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  put(h, 148, 8, octal(sum, 7));
  h[155] = 0;
  return h;
}

/** One pax record, `"%d %s=%s\n"` where the length counts itself. */
function paxRecord(key: string, value: Uint8Array): Uint8Array {
  const rest = encoder.encode(` ${key}=`).length + value.length + 1;
  let len = rest + String(rest).length;
  if (String(len).length !== String(rest).length) len = rest + String(len).length;
  const out = new Uint8Array(len);
  const head = encoder.encode(`${len} ${key}=`);
  out.set(head, 0);
  out.set(value, head.length);
  out[len - 1] = 0x0a;
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Zero bytes that pad `size` data bytes to a whole block. */
export function tarPadding(size: number): Uint8Array {
  return new Uint8Array((TAR_BLOCK - (size % TAR_BLOCK)) % TAR_BLOCK);
}

/** A pax extended header entry (typeflag `x` or `g`) with `records` as its data, padded. */
function paxEntry(name: string, type: "x" | "g", records: Uint8Array[], mtime: number): Uint8Array {
  const data = concat(records);
  return concat([header(encoder.encode(name), null, 0o100666, data.length, mtime, type, null), data, tarPadding(data.length)]);
}

/** The archive's first entry: a global pax header naming the commit (git's `comment=`). */
export function tarGlobalHeader(commit: string, mtime: number): Uint8Array {
  const records = [paxRecord("comment", encoder.encode(commit))];
  if (mtime > USTAR_MAX) records.push(paxRecord("mtime", encoder.encode(String(mtime))));
  return paxEntry("pax_global_header", "g", records, Math.min(mtime, USTAR_MAX));
}

/** Where git splits a long path into prefix and name: the last `/` within the prefix's length (get_path_prefix). */
function pathPrefixLength(path: Uint8Array, maxlen: number): number {
  let i = path.length;
  if (i > 1 && path[i - 1] === 0x2f) i--;
  if (i > maxlen) i = maxlen;
  do i--;
  while (i > 0 && path[i] !== 0x2f);
  return i;
}

/**
 * The header bytes of `entry` (a pax extended header first when ustar cannot hold its path, link
 * target or size); its data and tarPadding(size) follow.
 */
export function tarEntryHeader(entry: TarEntry, mtime: number): Uint8Array {
  const path = encoder.encode(entry.path);
  const records: Uint8Array[] = [];
  let name = path;
  let prefix: Uint8Array | null = null;
  if (path.length > 100) {
    const plen = pathPrefixLength(path, 155);
    const rest = path.length - plen - 1;
    if (plen > 0 && rest <= 100) {
      prefix = path.subarray(0, plen);
      name = path.subarray(plen + 1);
    } else {
      name = encoder.encode(`${entry.oid}.data`);
      records.push(paxRecord("path", path));
    }
  }
  let linkname: Uint8Array | null = null;
  if (entry.kind === "symlink") {
    const target = entry.linkname ?? new Uint8Array(0);
    if (target.length > 100) {
      linkname = encoder.encode(`see ${entry.oid}.paxheader`);
      records.push(paxRecord("linkpath", target));
    } else linkname = target;
  }
  let size = entry.kind === "file" ? entry.size : 0;
  if (size > USTAR_MAX) {
    records.push(paxRecord("size", encoder.encode(String(size))));
    size = 0;
  }
  const mode = entry.kind === "dir" ? 0o777 & ~UMASK : entry.kind === "symlink" ? 0o777 : (entry.executable ? 0o777 : 0o666) & ~UMASK;
  const type = entry.kind === "dir" ? "5" : entry.kind === "symlink" ? "2" : "0";
  const time = Math.min(mtime, USTAR_MAX);
  const main = header(name, prefix, mode, size, time, type, linkname);
  return records.length ? concat([paxEntry(`${entry.oid}.paxheader`, "x", records, time), main]) : main;
}

/** The end of an archive of `written` bytes so far: two zero blocks at least, then zeros to a whole record. */
export function tarTrailer(written: number): Uint8Array {
  let tail = TAR_RECORD - (written % TAR_RECORD);
  if (tail < 2 * TAR_BLOCK) tail += TAR_RECORD;
  return new Uint8Array(tail);
}
