// Object checks of C git's fsck as `receive.fsckObjects` applies them (index-pack --strict):
// every problem git reports as an error, or as a warning that strict mode makes an error, refuses
// the object with git's message id (Documentation/fsck-msgids.adoc), e.g.
//
//   object 1f0e…: gitmodulesName: disallowed submodule name: ../../modules/evil
//
// Checked per object (fsckObject, called by validateObject for every commit, tree and tag a
// write brings in):
//   commits and tags: nulInHeader, unterminatedHeader, missingTree, badTreeSha1, badParentSha1,
//     missingAuthor, multipleAuthors, missingCommitter, nulInCommit; missingObject,
//     badObjectSha1, missingTypeEntry, missingType, badType, missingTagEntry, missingTag,
//     badGpgsig, badHeaderContinuation; and in every identity line missingNameBeforeEmail,
//     missingEmail, badName, missingSpaceBeforeEmail, badEmail, missingSpaceBeforeDate, badDate,
//     zeroPaddedDate, badDateOverflow, badTimezone.
//   trees: badTree (unparsable), nullSha1, fullPathname, emptyName, hasDot, hasDotdot,
//     hasDotgit (".git" in any case, its HFS+ spellings with ignorable code points, its NTFS
//     spellings "git~1", ".git.", ".git::$INDEX_ALLOCATION", and after a backslash),
//     zeroPaddedFilemode, badFilemode, duplicateEntries, treeNotSorted, largePathname,
//     gitmodulesSymlink.
// Checked across objects (FsckSession): the blob a tree names `.gitmodules` (gitmodulesName,
//   gitmodulesUrl, gitmodulesPath, gitmodulesUpdate, gitmodulesLarge, gitmodulesBlob,
//   gitmodulesMissing) and `.gitattributes` (gitattributesLarge, gitattributesLineLength,
//   gitattributesBlob, gitattributesMissing).
//
// Where svc differs from git: a mode git only warns about (badFilemode is "info" in git) is
// refused, except git's historical 100664; svc's object parsers refuse a few identity lines git
// tolerates (extra spaces before the date), as before this module.
//
// Entry points for write paths (docs/architecture.md "Object checks"):
// - a received pack: `const fsck = new FsckSession()`, pass `onObject: fsck.inspect` to
//   indexPack, then `await fsck.finish(reader)` with a reader that sees the new pack and the
//   repository (receive-pack does this; mirror sync must do the same);
// - objects the server builds (commit API, lander): `await fsckObjects(objects, reader)`.
import { bytesToHex, hashObject } from "./oid.ts";
import { GitError, type ObjectReader, type ObjectType, type Oid, type RawObject } from "./types.ts";

/** git's message ids for the problems svc refuses. */
export type FsckMsgId =
  | "nulInHeader"
  | "unterminatedHeader"
  | "badHeaderContinuation"
  | "badDate"
  | "badDateOverflow"
  | "badEmail"
  | "badGpgsig"
  | "badName"
  | "badObjectSha1"
  | "badParentSha1"
  | "badTimezone"
  | "badTree"
  | "badTreeSha1"
  | "badType"
  | "duplicateEntries"
  | "gitattributesBlob"
  | "gitattributesLarge"
  | "gitattributesLineLength"
  | "gitattributesMissing"
  | "gitmodulesBlob"
  | "gitmodulesLarge"
  | "gitmodulesMissing"
  | "gitmodulesName"
  | "gitmodulesPath"
  | "gitmodulesSymlink"
  | "gitmodulesUpdate"
  | "gitmodulesUrl"
  | "missingAuthor"
  | "missingCommitter"
  | "missingEmail"
  | "missingNameBeforeEmail"
  | "missingObject"
  | "missingSpaceBeforeDate"
  | "missingSpaceBeforeEmail"
  | "missingTag"
  | "missingTagEntry"
  | "missingTree"
  | "missingType"
  | "missingTypeEntry"
  | "multipleAuthors"
  | "treeNotSorted"
  | "unknownType"
  | "zeroPaddedDate"
  | "emptyName"
  | "fullPathname"
  | "hasDot"
  | "hasDotdot"
  | "hasDotgit"
  | "largePathname"
  | "nullSha1"
  | "nulInCommit"
  | "zeroPaddedFilemode"
  | "badFilemode";

/** One refused object: git's message id, the object and git's wording. */
export interface FsckProblem {
  id: FsckMsgId;
  type: ObjectType;
  /** The object's id, when known (always for session checks). */
  oid: Oid | null;
  detail: string;
}

/** A write refused by the object checks; the message reads like git's `object <oid>: <id>: <detail>`. */
export class FsckError extends GitError {
  constructor(readonly problem: FsckProblem) {
    super(`${problem.oid ? `object ${problem.oid}: ` : ""}${problem.id}: ${problem.detail}`, "invalid");
    this.name = "FsckError";
  }
}

const NL = 0x0a;
const SP = 0x20;
const TAB = 0x09;
const LT = 0x3c;
const GT = 0x3e;
const DOT = 0x2e;
const SLASH = 0x2f;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
/** Longest tree entry name git accepts without largePathname. */
const MAX_TREE_ENTRY_LEN = 4096;
/** Largest .gitattributes git parses (ATTR_MAX_FILE_SIZE) and its longest line (ATTR_MAX_LINE_LENGTH). */
const ATTR_MAX_FILE_SIZE = 100 * 1024 * 1024;
const ATTR_MAX_LINE_LENGTH = 2048;
/** Largest .gitmodules svc reads to check (git gives up past its big-file threshold). */
const GITMODULES_MAX_SIZE = 64 * 1024 * 1024;
const INT64_MAX = (1n << 63n) - 1n;
const latin1 = new TextDecoder("latin1");
const utf8 = new TextDecoder("utf-8");

type Report = (id: FsckMsgId, detail: string) => never;

function reporter(type: ObjectType, oid: Oid | null, data: Uint8Array): Report {
  return (id, detail) => {
    throw new FsckError({ id, type, oid: oid ?? hashObject(type, data), detail });
  };
}

/**
 * Checks one object as git's fsck does in strict mode; throws FsckError naming git's message id.
 * `oid` is only for the message (computed from the data when omitted and something is wrong).
 */
export function fsckObject(type: ObjectType, data: Uint8Array, oid: Oid | null = null): void {
  const report = reporter(type, oid, data);
  switch (type) {
    case "commit":
      return fsckCommit(data, report);
    case "tag":
      return fsckTag(data, report);
    case "tree":
      return fsckTree(data, report, null);
    case "blob":
      return;
    default:
      report("unknownType", `unknown type '${type as string}'`);
  }
}

// ---------------------------------------------------------------------------------------------
// Commits and tags

/** Headers end with "\n\n", or at least the last header line ends with "\n"; no NUL before. */
function verifyHeaders(d: Uint8Array, report: Report): void {
  for (let i = 0; i < d.length; i++) {
    if (d[i] === 0) report("nulInHeader", `unterminated header: NUL at offset ${i}`);
    if (d[i] === NL && i + 1 < d.length && d[i + 1] === NL) return;
  }
  if (d.length > 0 && d[d.length - 1] === NL) return;
  report("unterminatedHeader", "unterminated header");
}

function startsWith(d: Uint8Array, at: number, prefix: string): boolean {
  if (at + prefix.length > d.length) return false;
  for (let k = 0; k < prefix.length; k++) if (d[at + k] !== prefix.charCodeAt(k)) return false;
  return true;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** Whether 40 hex digits followed by "\n" start at `at` (git's parse_oid_hex and the newline). */
function oidLine(d: Uint8Array, at: number): boolean {
  if (at + 41 > d.length) return false;
  for (let k = 0; k < 40; k++) if (!isHex(d[at + k]!)) return false;
  return d[at + 40] === NL;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** Checks one identity ("Name <email> 1700000000 +0100") from `p`; returns the position after its line. */
function fsckIdent(d: Uint8Array, p: number, report: Report): number {
  const nl = d.indexOf(NL, p);
  // verifyHeaders guarantees a newline ends every header line.
  const end = nl < 0 ? d.length : nl;
  const next = end + 1;
  if (d[p] === LT) report("missingNameBeforeEmail", "invalid author/committer line - missing space before email");
  for (;;) {
    if (p >= end) report("missingEmail", "invalid author/committer line - missing email");
    if (d[p] === GT) report("badName", "invalid author/committer line - bad name");
    if (d[p] === LT) break;
    p++;
  }
  if (d[p - 1] !== SP) report("missingSpaceBeforeEmail", "invalid author/committer line - missing space before email");
  p++;
  for (;;) {
    if (p >= end || d[p] === LT) report("badEmail", "invalid author/committer line - bad email");
    if (d[p] === GT) break;
    p++;
  }
  p++;
  if (d[p] !== SP) report("missingSpaceBeforeDate", "invalid author/committer line - missing space before date");
  p++;
  while (d[p] === SP || d[p] === TAB) p++;
  if (!isDigit(d[p])) report("badDate", "invalid author/committer line - bad date");
  if (d[p] === 0x30 && d[p + 1] !== SP) report("zeroPaddedDate", "invalid author/committer line - zero-padded date");
  const start = p;
  while (p < end && isDigit(d[p])) p++;
  // git parses at most 23 digits and refuses what does not fit a signed 64-bit time.
  if (p - start > 23 || BigInt(latin1.decode(d.subarray(start, p))) > INT64_MAX) {
    report("badDateOverflow", "invalid author/committer line - date causes integer overflow");
  }
  if (d[p] !== SP) report("badDate", "invalid author/committer line - bad date");
  p++;
  if ((d[p] !== 0x2b && d[p] !== 0x2d) || !isDigit(d[p + 1]) || !isDigit(d[p + 2]) || !isDigit(d[p + 3]) || !isDigit(d[p + 4]) || d[p + 5] !== NL) {
    report("badTimezone", "invalid author/committer line - bad time zone");
  }
  return next;
}

function fsckCommit(d: Uint8Array, report: Report): void {
  verifyHeaders(d, report);
  let p = 0;
  if (!startsWith(d, p, "tree ")) report("missingTree", "invalid format - expected 'tree' line");
  p += 5;
  if (!oidLine(d, p)) report("badTreeSha1", "invalid 'tree' line format - bad sha1");
  p += 41;
  while (startsWith(d, p, "parent ")) {
    p += 7;
    if (!oidLine(d, p)) report("badParentSha1", "invalid 'parent' line format - bad sha1");
    p += 41;
  }
  let authors = 0;
  while (startsWith(d, p, "author ")) {
    authors++;
    p = fsckIdent(d, p + 7, report);
  }
  if (authors < 1) report("missingAuthor", "invalid format - expected 'author' line");
  if (authors > 1) report("multipleAuthors", "invalid format - multiple 'author' lines");
  if (!startsWith(d, p, "committer ")) report("missingCommitter", "invalid format - expected 'committer' line");
  fsckIdent(d, p + 10, report);
  if (d.includes(0)) report("nulInCommit", "NUL byte in the commit object body");
}

const TYPES = new Set(["commit", "tree", "blob", "tag"]);

function fsckTag(d: Uint8Array, report: Report): void {
  verifyHeaders(d, report);
  let p = 0;
  if (!startsWith(d, p, "object ")) report("missingObject", "invalid format - expected 'object' line");
  p += 7;
  if (!oidLine(d, p)) report("badObjectSha1", "invalid 'object' line format - bad sha1");
  p += 41;
  if (!startsWith(d, p, "type ")) report("missingTypeEntry", "invalid format - expected 'type' line");
  p += 5;
  let eol = d.indexOf(NL, p);
  if (eol < 0) report("missingType", "invalid format - unexpected end after 'type' line");
  if (!TYPES.has(latin1.decode(d.subarray(p, eol)))) report("badType", "invalid 'type' value");
  p = eol + 1;
  if (!startsWith(d, p, "tag ")) report("missingTagEntry", "invalid format - expected 'tag' line");
  p += 4;
  eol = d.indexOf(NL, p);
  if (eol < 0) report("missingTag", "invalid format - unexpected end after 'type' line");
  // badTagName is "info" in git: a tag name that is no ref name is accepted.
  p = eol + 1;
  // A tag without a tagger (very old git) is "info" in git too: accepted.
  if (startsWith(d, p, "tagger ")) p = fsckIdent(d, p + 7, report);
  if (startsWith(d, p, "gpgsig ") || startsWith(d, p, "gpgsig-sha256 ")) {
    eol = d.indexOf(NL, p);
    if (eol < 0) report("badGpgsig", "invalid format - unexpected end after 'gpgsig' or 'gpgsig-sha256' line");
    p = eol + 1;
    while (p < d.length && d[p] === SP) {
      eol = d.indexOf(NL, p);
      if (eol < 0) report("badHeaderContinuation", "invalid format - unexpected end in 'gpgsig' or 'gpgsig-sha256' continuation line");
      p = eol + 1;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Trees

/** What a tree check found that other objects must answer for (FsckSession). */
interface TreeFindings {
  gitmodules: Oid[];
  gitattributes: Oid[];
}

/** Mode constants as git compares them (S_IFMT bits and permissions). */
const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const S_IFGITLINK = 0o160000;

function fsckTree(d: Uint8Array, report: Report, found: TreeFindings | null): void {
  let pos = 0;
  let prevStart = -1;
  let prevEnd = -1;
  let prevMode = 0;
  const problems = new Set<FsckMsgId>();
  // Names of non-directory entries that a later directory entry could duplicate (git's
  // verify_ordered: "foo", "foo.bar", "foo/" are not adjacent but "foo" and "foo/" clash).
  const candidates: [number, number][] = [];
  while (pos < d.length) {
    // git's decode_tree_entry: an octal mode, a space, a non-empty name, NUL, 20 bytes.
    if (d[pos] === SP) report("badTree", "cannot be parsed as a tree");
    let mode = 0;
    let k = pos;
    for (; k < d.length && d[k] !== SP; k++) {
      const c = d[k]!;
      if (c < 0x30 || c > 0x37) report("badTree", "cannot be parsed as a tree");
      mode = (mode * 8 + (c - 0x30)) % 0x100000000;
    }
    if (k >= d.length) report("badTree", "cannot be parsed as a tree");
    const start = k + 1;
    const end = d.indexOf(0, start);
    if (end < 0 || end + 21 > d.length) report("badTree", "cannot be parsed as a tree");
    if (end === start) report("badTree", "cannot be parsed as a tree");
    mode &= 0xffff;
    const oidAt = end + 1;
    if (isNullOid(d, oidAt)) problems.add("nullSha1");
    for (let i = start; i < end; i++) if (d[i] === SLASH) problems.add("fullPathname");
    const len = end - start;
    if (len === 1 && d[start] === DOT) problems.add("hasDot");
    if (len === 2 && d[start] === DOT && d[start + 1] === DOT) problems.add("hasDotdot");
    if (isHfsDot(d, start, end, "git") || isNtfsDotGit(d, start, end)) problems.add("hasDotgit");
    if (d[pos] === 0x30) problems.add("zeroPaddedFilemode");
    if (len > MAX_TREE_ENTRY_LEN) problems.add("largePathname");
    const symlink = (mode & S_IFMT) === S_IFLNK;
    if (isHfsDot(d, start, end, "gitmodules") || isNtfsDot(d, start, end, "gitmodules", "gi7eba")) {
      if (symlink) report("gitmodulesSymlink", ".gitmodules is a symbolic link");
      found?.gitmodules.push(bytesToHex(d, oidAt, 20));
    }
    if (isHfsDot(d, start, end, "gitattributes") || isNtfsDot(d, start, end, "gitattributes", "gi7d29")) {
      // A symlinked .gitattributes is only "info" in git.
      if (!symlink) found?.gitattributes.push(bytesToHex(d, oidAt, 20));
    }
    for (let b = d.indexOf(BACKSLASH, start); b >= 0 && b < end; b = d.indexOf(BACKSLASH, b + 1)) {
      if (isNtfsDotGit(d, b + 1, end)) problems.add("hasDotgit");
      if (isNtfsDot(d, b + 1, end, "gitmodules", "gi7eba")) {
        if (symlink) report("gitmodulesSymlink", ".gitmodules is a symbolic link");
        found?.gitmodules.push(bytesToHex(d, oidAt, 20));
      }
    }
    switch (mode) {
      case 0o100755:
      case 0o100644:
      case S_IFLNK:
      case S_IFDIR:
      case S_IFGITLINK:
      case 0o100664: // written by very old git; "info" in git even in strict mode
        break;
      default:
        problems.add("badFilemode");
    }
    if (prevStart >= 0) {
      const order = verifyOrdered(d, prevStart, prevEnd, prevMode, start, end, mode, candidates);
      if (order === "dups") problems.add("duplicateEntries");
      else if (order === "unordered") problems.add("treeNotSorted");
    }
    prevStart = start;
    prevEnd = end;
    prevMode = mode;
    pos = end + 21;
  }
  // Reported in git's order (the first one names the refusal).
  for (const [id, detail] of TREE_MESSAGES) if (problems.has(id)) report(id, detail);
}

const TREE_MESSAGES: [FsckMsgId, string][] = [
  ["nullSha1", "contains entries pointing to null sha1"],
  ["fullPathname", "contains full pathnames"],
  ["emptyName", "contains empty pathname"],
  ["hasDot", "contains '.'"],
  ["hasDotdot", "contains '..'"],
  ["hasDotgit", "contains '.git'"],
  ["zeroPaddedFilemode", "contains zero-padded file modes"],
  ["duplicateEntries", "contains duplicate file entries"],
  ["treeNotSorted", "not properly sorted"],
  ["largePathname", "contains excessively large pathname"],
  // Last: git only notes it, so a problem git refuses for is named first.
  ["badFilemode", "contains bad file modes"],
];

function isNullOid(d: Uint8Array, at: number): boolean {
  for (let k = 0; k < 20; k++) if (d[at + k] !== 0) return false;
  return true;
}

/** Whether the byte after a prefix sorts before "/" (git's is_less_than_slash). */
function lessThanSlash(c: number): boolean {
  return c !== 0 && c < SLASH;
}

/** git's verify_ordered for two adjacent entries (names as byte ranges of `d`). */
function verifyOrdered(d: Uint8Array, a: number, aEnd: number, aMode: number, b: number, bEnd: number, bMode: number, candidates: [number, number][]): "ok" | "dups" | "unordered" {
  const la = aEnd - a;
  const lb = bEnd - b;
  const n = Math.min(la, lb);
  for (let i = 0; i < n; i++) {
    const diff = d[a + i]! - d[b + i]!;
    if (diff) return diff < 0 ? "ok" : "unordered";
  }
  let c1 = la > n ? d[a + n]! : 0;
  let c2 = lb > n ? d[b + n]! : 0;
  if (c1 === 0 && c2 === 0) return "dups";
  if (c1 === 0 && (aMode & S_IFMT) === S_IFDIR) c1 = SLASH;
  if (c2 === 0 && (bMode & S_IFMT) === S_IFDIR) c2 = SLASH;
  if (c1 === 0 && lessThanSlash(c2)) {
    candidates.push([a, aEnd]);
  } else if (c2 === SLASH && lessThanSlash(c1)) {
    for (;;) {
      const f = candidates.pop();
      if (!f) break;
      const [fs, fe] = f;
      const fl = fe - fs;
      let prefix = fl <= lb;
      for (let i = 0; prefix && i < fl; i++) if (d[fs + i] !== d[b + i]) prefix = false;
      if (!prefix) continue;
      if (fl === lb) return "dups";
      if (lessThanSlash(d[b + fl]!)) {
        candidates.push(f);
        break;
      }
    }
  }
  return c1 < c2 ? "ok" : "unordered";
}

// ---------------------------------------------------------------------------------------------
// Names that mean `.git`, `.gitmodules` … on HFS+ and NTFS (git's utf8.c and path.c)

/** Where nextHfsChar stopped (module scratch: no cursor object per call; fsck sees every tree entry). */
let hfsAt = 0;

/** The next code point of a NUL-terminated UTF-8 name from `hfsAt`, skipping those HFS+ ignores; 0 at the end; -1 when malformed. */
function nextHfsChar(d: Uint8Array, end: number): number {
  for (;;) {
    const s = hfsAt;
    if (s >= end) return 0;
    const c0 = d[s]!;
    let ch: number;
    let len: number;
    if (c0 < 0x80) {
      ch = c0;
      len = 1;
    } else if ((c0 & 0xe0) === 0xc0) {
      if ((at0(d, s + 1, end) & 0xc0) !== 0x80 || (c0 & 0xfe) === 0xc0) return -1;
      ch = ((c0 & 0x1f) << 6) | (at0(d, s + 1, end) & 0x3f);
      len = 2;
    } else if ((c0 & 0xf0) === 0xe0) {
      const b1 = at0(d, s + 1, end);
      const b2 = at0(d, s + 2, end);
      if ((b1 & 0xc0) !== 0x80 || (b2 & 0xc0) !== 0x80 || (c0 === 0xe0 && (b1 & 0xe0) === 0x80) || (c0 === 0xed && (b1 & 0xe0) === 0xa0) || (c0 === 0xef && b1 === 0xbf && (b2 & 0xfe) === 0xbe)) return -1;
      ch = ((c0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
      len = 3;
    } else if ((c0 & 0xf8) === 0xf0) {
      const b1 = at0(d, s + 1, end);
      const b2 = at0(d, s + 2, end);
      const b3 = at0(d, s + 3, end);
      if ((b1 & 0xc0) !== 0x80 || (b2 & 0xc0) !== 0x80 || (b3 & 0xc0) !== 0x80 || (c0 === 0xf0 && (b1 & 0xf0) === 0x80) || (c0 === 0xf4 && b1 > 0x8f) || c0 > 0xf4) return -1;
      ch = ((c0 & 0x07) << 18) | ((b1 & 0x3f) << 12) | ((b2 & 0x3f) << 6) | (b3 & 0x3f);
      len = 4;
    } else return -1;
    hfsAt = s + len;
    if ((ch >= 0x200c && ch <= 0x200f) || (ch >= 0x202a && ch <= 0x202e) || (ch >= 0x206a && ch <= 0x206f) || ch === 0xfeff) continue;
    return ch;
  }
}

/** git's is_hfs_dot_generic: `.` + needle (ASCII, any case), HFS+-ignorable code points anywhere. */
function isHfsDot(d: Uint8Array, start: number, end: number, needle: string): boolean {
  // The first code point is "." or an ignorable one (all of them start with 0xe2 or 0xef in UTF-8).
  const first = at0(d, start, end);
  if (first !== DOT && first !== 0xe2 && first !== 0xef) return false;
  hfsAt = start;
  if (nextHfsChar(d, end) !== DOT) return false;
  for (let k = 0; k < needle.length; k++) {
    const c = nextHfsChar(d, end);
    if (c <= 0 || c > 127) return false;
    if (lower(c) !== needle.charCodeAt(k)) return false;
  }
  const c = nextHfsChar(d, end);
  return c === 0 || c === SLASH;
}

function lower(c: number): number {
  return c >= 0x41 && c <= 0x5a ? c + 32 : c;
}

/** The byte at `i` of a name that ends at `end` (0 past the end, as in C). */
function at0(d: Uint8Array, i: number, end: number): number {
  return i < end ? d[i]! : 0;
}

/** git's is_ntfs_dotgit: `.git` or `git~1`, then only spaces and dots up to the end, a separator or `:`. */
function isNtfsDotGit(d: Uint8Array, start: number, end: number): boolean {
  let i = start;
  const c = at0(d, i++, end);
  if (c === DOT) {
    if (lower(at0(d, i++, end)) !== 0x67 || lower(at0(d, i++, end)) !== 0x69 || lower(at0(d, i++, end)) !== 0x74) return false;
  } else if (lower(c) === 0x67) {
    if (lower(at0(d, i++, end)) !== 0x69 || lower(at0(d, i++, end)) !== 0x74 || at0(d, i++, end) !== 0x7e || at0(d, i++, end) !== 0x31) return false;
  } else return false;
  for (;;) {
    const x = at0(d, i++, end);
    if (x === 0 || x === SLASH || x === BACKSLASH || x === COLON) return true;
    if (x !== DOT && x !== SP) return false;
  }
}

/** git's is_ntfs_dot_generic for `.gitmodules` (short prefix "gi7eba") and its kin. */
function isNtfsDot(d: Uint8Array, start: number, end: number, name: string, shortPrefix: string): boolean {
  // Every spelling starts with ".", the needle's "g" (either case) or a "~" (short names).
  const first = at0(d, start, end);
  if (first !== DOT && (first | 0x20) !== 0x67 && first !== 0x7e) return false;
  if (first === DOT && caseEqual(d, start + 1, end, name, name.length)) return onlySpacesAndPeriods(d, start + name.length + 1, end);
  if (caseEqual(d, start, end, name, 6) && at0(d, start + 6, end) === 0x7e && at0(d, start + 7, end) >= 0x31 && at0(d, start + 7, end) <= 0x34) return onlySpacesAndPeriods(d, start + 8, end);
  let sawTilde = false;
  for (let i = 0; i < 8; i++) {
    const c = at0(d, start + i, end);
    if (c === 0) return false;
    if (sawTilde) {
      if (c < 0x30 || c > 0x39) return false;
    } else if (c === 0x7e) {
      const n = at0(d, start + ++i, end);
      if (n < 0x31 || n > 0x39) return false;
      sawTilde = true;
    } else if (i >= 6) return false;
    else if (c & 0x80) return false;
    else if (lower(c) !== shortPrefix.charCodeAt(i)) return false;
  }
  return onlySpacesAndPeriods(d, start + 8, end);
}

/** git's only_spaces_and_periods: from `i` to the end of the name (or a ":"), nothing but " " and ".". */
function onlySpacesAndPeriods(d: Uint8Array, i: number, end: number): boolean {
  for (;;) {
    const c = at0(d, i++, end);
    if (c === 0 || c === COLON) return true;
    if (c !== SP && c !== DOT) return false;
  }
}

/** strncasecmp(name + at, needle, n) === 0 for an ASCII needle. */
function caseEqual(d: Uint8Array, at: number, end: number, needle: string, n: number): boolean {
  for (let k = 0; k < n; k++) {
    const c = at0(d, at + k, end);
    if (c === 0 || lower(c) !== needle.charCodeAt(k)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// .gitmodules and .gitattributes

/** git's check_submodule_name: not empty, no `..` path component (with `/` or `\` separators). */
export function submoduleNameOk(name: string): boolean {
  if (name === "") return false;
  return !name.split(/[/\\]/).includes("..");
}

/** Percent-decoding as git's url_decode does it: malformed escapes are kept as they are. */
function urlDecode(s: string): string {
  return s.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

const startsWithDotSlash = (s: string) => s.startsWith("./") || s.startsWith(".\\");
const startsWithDotDotSlash = (s: string) => s.startsWith("../") || s.startsWith("..\\");

/** git's check_submodule_url. */
export function submoduleUrlOk(url: string): boolean {
  if (url.startsWith("-")) return false;
  if (startsWithDotSlash(url) || startsWithDotDotSlash(url) || url.startsWith("git://")) {
    if (urlDecode(url).includes("\n")) return false;
    // A relative URL escaping its root through "../" can rewrite the host part (CVE-2020-11008).
    let rest = url;
    let dotdots = 0;
    for (;;) {
      if (startsWithDotDotSlash(rest)) {
        dotdots++;
        rest = rest.slice(3);
      } else if (startsWithDotSlash(rest)) rest = rest.slice(2);
      else break;
    }
    return !(dotdots > 0 && (rest.startsWith(":") || rest.startsWith("/")));
  }
  const m = /^(?:(?:https?|ftps?)::)?((?:https?|ftps?):\/\/.*)$/s.exec(url) ?? /^(?:https?|ftps?)::(.*)$/s.exec(url);
  if (m) {
    const curl = m[1]!;
    if (curl.includes("\n") || urlDecode(curl).includes("\n")) return false;
    try {
      new URL(curl);
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * The `submodule.<name>.<key>` settings of a .gitmodules file, in order, read with git's config
 * syntax (sections, quoted subsections, values with quotes, escapes, comments and continuation
 * lines). Stops at the first syntax error, as git does (which it only reports as "info").
 */
export function readGitmodules(text: string): { name: string; key: string; value: string | null }[] {
  const out: { name: string; key: string; value: string | null }[] = [];
  let i = 0;
  let section: string | null = null;
  let subsection: string | null = null;
  const n = text.length;
  const isKeyChar = (c: string) => /[A-Za-z0-9-]/.test(c);
  while (i < n) {
    const c = text[i]!;
    if (c === "\n" || c === " " || c === "\t" || c === "\r") {
      i++;
      continue;
    }
    if (c === "#" || c === ";") {
      while (i < n && text[i] !== "\n") i++;
      continue;
    }
    if (c === "[") {
      i++;
      let base = "";
      subsection = null;
      for (;;) {
        if (i >= n) return out;
        const ch = text[i++]!;
        if (ch === "]") break;
        if (ch === " " || ch === "\t") {
          while (i < n && (text[i] === " " || text[i] === "\t")) i++;
          if (text[i] !== '"') return out;
          i++;
          let sub = "";
          for (;;) {
            if (i >= n || text[i] === "\n") return out;
            let x = text[i++]!;
            if (x === '"') break;
            if (x === "\\") {
              if (i >= n || text[i] === "\n") return out;
              x = text[i++]!;
            }
            sub += x;
          }
          if (text[i++] !== "]") return out;
          subsection = sub;
          break;
        }
        if (!isKeyChar(ch) && ch !== ".") return out;
        base += ch.toLowerCase();
      }
      if (subsection === null) {
        // The old `[section.subsection]` form: the subsection is what follows the first dot.
        const dot = base.indexOf(".");
        section = dot < 0 ? base : base.slice(0, dot);
        subsection = dot < 0 ? null : base.slice(dot + 1);
      } else section = base;
      continue;
    }
    if (!/[A-Za-z]/.test(c) || section === null) return out;
    let key = "";
    while (i < n && isKeyChar(text[i]!)) key += text[i++]!.toLowerCase();
    while (i < n && (text[i] === " " || text[i] === "\t")) i++;
    let value: string | null = null;
    if (text[i] === "=") {
      i++;
      const parsed = readValue(text, i);
      if (!parsed) return out;
      value = parsed.value;
      i = parsed.next;
    } else if (i < n && text[i] !== "\n" && text[i] !== "\r" && text[i] !== "#" && text[i] !== ";") return out;
    else while (i < n && text[i] !== "\n") i++;
    if (section === "submodule" && subsection !== null) out.push({ name: subsection, key, value });
  }
  return out;
}

/** A config value from `i`: quotes, escapes (\\ \" \n \t \b), comments and continuation lines. */
function readValue(text: string, i: number): { value: string; next: number } | null {
  let value = "";
  let quoted = false;
  let pendingSpace = "";
  let started = false;
  while (i < text.length) {
    const c = text[i++]!;
    if (c === "\n") {
      if (quoted) return null;
      return { value, next: i };
    }
    if (!quoted && (c === ";" || c === "#")) {
      while (i < text.length && text[i] !== "\n") i++;
      return { value, next: i };
    }
    if (!quoted && (c === " " || c === "\t" || c === "\r")) {
      if (started) pendingSpace += c;
      continue;
    }
    value += pendingSpace;
    pendingSpace = "";
    if (c === "\\") {
      const e = text[i++];
      if (e === "\n") continue;
      if (e === "\\" || e === '"') value += e;
      else if (e === "n") value += "\n";
      else if (e === "t") value += "\t";
      else if (e === "b") value += "\b";
      else return null;
      started = true;
      continue;
    }
    if (c === '"') {
      quoted = !quoted;
      started = true;
      continue;
    }
    value += c;
    started = true;
  }
  return quoted ? null : { value, next: i };
}

function fsckGitmodules(oid: Oid, data: Uint8Array): void {
  const report = (id: FsckMsgId, detail: string): never => {
    throw new FsckError({ id, type: "blob", oid, detail });
  };
  if (data.length > GITMODULES_MAX_SIZE) report("gitmodulesLarge", ".gitmodules too large to parse");
  // git reads config text as bytes; undecodable bytes stay as replacement characters here,
  // which never turn a bad name, URL or path into a good one.
  for (const { name, key, value } of readGitmodules(utf8.decode(data))) {
    if (!submoduleNameOk(name)) report("gitmodulesName", `disallowed submodule name: ${name}`);
    if (key === "url" && value !== null && !submoduleUrlOk(value)) report("gitmodulesUrl", `disallowed submodule url: ${value}`);
    if (key === "path" && value !== null && value.startsWith("-")) report("gitmodulesPath", `disallowed submodule path: ${value}`);
    if (key === "update" && value !== null && value.startsWith("!")) report("gitmodulesUpdate", `disallowed submodule update setting: ${value}`);
  }
}

function fsckGitattributes(oid: Oid, data: Uint8Array): void {
  const report = (id: FsckMsgId, detail: string): never => {
    throw new FsckError({ id, type: "blob", oid, detail });
  };
  if (data.length > ATTR_MAX_FILE_SIZE) report("gitattributesLarge", ".gitattributes too large to parse");
  let start = 0;
  const stop = data.indexOf(0) < 0 ? data.length : data.indexOf(0);
  while (start < stop) {
    let eol = data.indexOf(NL, start);
    if (eol < 0 || eol > stop) eol = stop;
    if (eol - start >= ATTR_MAX_LINE_LENGTH) report("gitattributesLineLength", ".gitattributes has too long lines to parse");
    start = eol + 1;
  }
}

// ---------------------------------------------------------------------------------------------
// Across objects

/**
 * The checks that need more than one object: a tree names a blob `.gitmodules` or
 * `.gitattributes`, and that blob's content is checked whether it arrives before, after, or
 * was stored long ago. Feed every object of a write to `inspect` (per-object checks are
 * fsckObject's), then call `finish` with a reader that sees the write and the repository.
 */
export class FsckSession {
  private readonly gitmodules = new Set<Oid>();
  private readonly gitattributes = new Set<Oid>();
  private readonly done = new Set<Oid>();

  /** Records what a tree names and checks a named blob (oid as 20 raw bytes at `at`, or hex). */
  readonly inspect = (type: ObjectType, data: Uint8Array, oid: Uint8Array | Oid, at = 0): void => {
    if (type === "tree") {
      if (mayNameSpecial(data)) specialEntries(data, this.gitmodules, this.gitattributes);
      return;
    }
    // A blob that arrives before the tree naming it is read back by finish (not kept: blobs may be large).
    if (type !== "blob" || (this.gitmodules.size === 0 && this.gitattributes.size === 0)) return;
    const hex = typeof oid === "string" ? oid : bytesToHex(oid, at, 20);
    if (this.gitmodules.has(hex) || this.gitattributes.has(hex)) this.check(hex, data);
  };

  private check(oid: Oid, data: Uint8Array): void {
    if (this.gitmodules.has(oid) && !this.done.has(`m${oid}`)) {
      this.done.add(`m${oid}`);
      fsckGitmodules(oid, data);
    }
    if (this.gitattributes.has(oid) && !this.done.has(`a${oid}`)) {
      this.done.add(`a${oid}`);
      fsckGitattributes(oid, data);
    }
  }

  /**
   * Checks every flagged blob not yet checked, read through `reader` (the write plus the
   * repository): a missing one is gitmodulesMissing, a non-blob gitmodulesBlob (and the same
   * for .gitattributes).
   */
  async finish(reader: ObjectReader): Promise<void> {
    for (const [set, kind] of [
      [this.gitmodules, "m"],
      [this.gitattributes, "a"],
    ] as const) {
      for (const oid of set) {
        if (this.done.has(`${kind}${oid}`)) continue;
        const what = kind === "m" ? ".gitmodules" : ".gitattributes";
        const header = await reader.readHeader(oid);
        const fail = (id: FsckMsgId, detail: string): never => {
          throw new FsckError({ id, type: header?.type ?? "blob", oid, detail });
        };
        if (!header) fail(kind === "m" ? "gitmodulesMissing" : "gitattributesMissing", `unable to read ${what} blob`);
        if (header!.type !== "blob") fail(kind === "m" ? "gitmodulesBlob" : "gitattributesBlob", `non-blob found at ${what}`);
        if (header!.size > (kind === "m" ? GITMODULES_MAX_SIZE : ATTR_MAX_FILE_SIZE)) fail(kind === "m" ? "gitmodulesLarge" : "gitattributesLarge", `${what} too large to parse`);
        const obj = await reader.read(oid);
        if (!obj) fail(kind === "m" ? "gitmodulesMissing" : "gitattributesMissing", `unable to read ${what} blob`);
        this.check(oid, obj!.data);
      }
    }
  }
}

/**
 * Whether a tree may name `.gitmodules` or `.gitattributes` in any spelling git recognises: some
 * entry name starts with ".", "g"/"G" (NTFS short names), a byte of an HFS+-ignorable code point,
 * or contains a backslash. A cheap scan that spares the full check for almost every tree.
 */
/**
 * Adds the blobs a tree names `.gitmodules` / `.gitattributes` (any spelling fsckTree accepts as
 * one) to the sets. Only the names: the tree already passed fsckTree's per-entry checks (the
 * caller's fsckObject), so this pass looks closely only at entries whose first byte could start
 * such a name. Why not fsckTree again: git.git's root tree names .gitattributes in every
 * version, and a second full check of every such tree was a third of a mirror sync's CPU.
 */
function specialEntries(d: Uint8Array, modules: Set<Oid>, attributes: Set<Oid>): void {
  let pos = 0;
  while (pos < d.length) {
    const sp = d.indexOf(SP, pos);
    if (sp < 0) return;
    const start = sp + 1;
    const end = d.indexOf(0, start);
    if (end < 0 || end + 21 > d.length) return;
    const c = d[start];
    const back = d.indexOf(BACKSLASH, start);
    if (c === DOT || c === 0x67 || c === 0x47 || c === 0xe2 || c === 0xef || (back >= 0 && back < end)) {
      let mode = 0;
      for (let k = pos; k < sp; k++) mode = (mode * 8 + (d[k]! - 0x30)) % 0x100000000;
      const symlink = (mode & 0xffff & S_IFMT) === S_IFLNK;
      const oidAt = end + 1;
      if (isHfsDot(d, start, end, "gitmodules") || isNtfsDot(d, start, end, "gitmodules", "gi7eba")) modules.add(bytesToHex(d, oidAt, 20));
      if (!symlink && (isHfsDot(d, start, end, "gitattributes") || isNtfsDot(d, start, end, "gitattributes", "gi7d29"))) attributes.add(bytesToHex(d, oidAt, 20));
      for (let b = back; b >= 0 && b < end; b = d.indexOf(BACKSLASH, b + 1)) {
        if (isNtfsDot(d, b + 1, end, "gitmodules", "gi7eba")) modules.add(bytesToHex(d, oidAt, 20));
      }
    }
    pos = end + 21;
  }
}

function mayNameSpecial(d: Uint8Array): boolean {
  let pos = 0;
  while (pos < d.length) {
    const sp = d.indexOf(SP, pos);
    if (sp < 0) return true;
    const end = d.indexOf(0, sp + 1);
    if (end < 0) return true;
    const c = d[sp + 1];
    if (c === DOT || c === 0x67 || c === 0x47 || c === 0xe2 || c === 0xef) return true;
    const b = d.indexOf(BACKSLASH, sp + 1);
    if (b >= 0 && b < end) return true;
    pos = end + 21;
  }
  return false;
}

/**
 * Checks objects the server wrote itself (commit API, lander) before they are published: each
 * object, then the `.gitmodules` / `.gitattributes` blobs their trees name, read through
 * `existing` when they are not among `objects`.
 */
export async function fsckObjects(objects: Iterable<RawObject & { oid?: Oid }>, existing: ObjectReader): Promise<void> {
  const session = new FsckSession();
  const byOid = new Map<Oid, RawObject>();
  for (const o of objects) {
    const oid = o.oid ?? hashObject(o.type, o.data);
    fsckObject(o.type, o.data, oid);
    byOid.set(oid, o);
    if (o.type === "tree") session.inspect("tree", o.data, oid);
  }
  for (const [oid, o] of byOid) if (o.type === "blob") session.inspect("blob", o.data, oid);
  // A name flagged on something other than a blob (a directory called .gitattributes) is found
  // among the new objects or the stored ones, and refused as git refuses it.
  await session.finish({
    has: async (oid) => byOid.has(oid) || (await existing.has(oid)),
    read: async (oid) => byOid.get(oid) ?? (await existing.read(oid)),
    readHeader: async (oid) => {
      const o = byOid.get(oid);
      return o ? { type: o.type, size: o.data.length } : await existing.readHeader(oid);
    },
  });
}
