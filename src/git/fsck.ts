// Object checks of C git's fsck, with svc's own verdict per message id (FSCK_RULES): what is
// corrupt or dangerous to clients is refused with git's message id
// (Documentation/fsck-msgids.adoc), e.g.
//
//   object 1f0e…: gitmodulesName: disallowed submodule name: ../../modules/evil
//
// and what C git only warns about (or what its own parser reads without trouble: zero-padded
// modes, odd identity lines, tags without a tagger) is accepted and collected in FsckWarnings,
// which receive-pack tells the pusher about in `remote:` lines. The table with a reason for each
// id is docs/architecture.md "Object checks"; FSCK_RULES is the same table in code.
//
// Checked per object (fsckObject; the indexer's fsckForIndex on every commit, tree and tag a
// write brings in):
//   commits and tags: nulInHeader, unterminatedHeader, missingTree, badTreeSha1, badParentSha1,
//     missingAuthor, multipleAuthors, missingCommitter, nulInCommit; missingObject,
//     badObjectSha1, missingTypeEntry, missingType, badType, missingTagEntry, missingTag,
//     badTagName, missingTaggerEntry, badGpgsig, badHeaderContinuation; and in every identity
//     line missingNameBeforeEmail, missingEmail, badName, missingSpaceBeforeEmail, badEmail,
//     missingSpaceBeforeDate, badDate, zeroPaddedDate, badDateOverflow, badTimezone.
//   trees: badTree (unparsable), nullSha1, fullPathname, emptyName, hasDot, hasDotdot,
//     hasDotgit (".git" in any case, its HFS+ spellings with ignorable code points, its NTFS
//     spellings "git~1", ".git.", ".git::$INDEX_ALLOCATION", and after a backslash),
//     zeroPaddedFilemode, badFilemode, duplicateEntries, treeNotSorted, largePathname,
//     gitmodulesSymlink, gitattributesSymlink.
// Checked across objects (FsckSession): the blob a tree names `.gitmodules` (gitmodulesName,
//   gitmodulesUrl, gitmodulesPath, gitmodulesUpdate, gitmodulesLarge, gitmodulesBlob,
//   gitmodulesMissing) and `.gitattributes` (gitattributesLarge, gitattributesLineLength,
//   gitattributesBlob, gitattributesMissing).
//
// Entry points for write paths (docs/architecture.md "Object checks"):
// - a received pack: `const fsck = new FsckSession()`, pass it to indexPack (`fsck`), then
//   `await fsck.finish(reader)` with a reader that sees the new pack and the repository
//   (receive-pack and mirror sync do this); `fsck.warnings` holds what was accepted;
// - objects the server builds (commit API, lander): `await fsckObjects(objects, reader)`.
import type { CopyLog } from "./delta.ts";
import { bytesToHex, hashObject, hexToBytes } from "./oid.ts";
import { OidSet } from "./oid-set.ts";
import { checkRefFormat } from "./ref-name.ts";
import { lowerBound } from "./search.ts";
import { GitError, type ObjectReader, type ObjectType, type Oid, type RawObject } from "./types.ts";

/** git's message ids for the object problems svc checks. */
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
  | "badTagName"
  | "badTimezone"
  | "badTree"
  | "badTreeSha1"
  | "badType"
  | "duplicateEntries"
  | "gitattributesBlob"
  | "gitattributesLarge"
  | "gitattributesLineLength"
  | "gitattributesMissing"
  | "gitattributesSymlink"
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
  | "missingTaggerEntry"
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

/**
 * svc's verdict per message id: `refuse` what is corrupt (git's parser or a client's tree walk
 * cannot trust it) or dangerous to clients (paths that escape a checkout, hostile
 * .gitmodules/.gitattributes); `warn` (accept, and tell the pusher) what C git itself reads
 * without trouble. The reasons are the table in docs/architecture.md "Object checks".
 */
export const FSCK_RULES: Readonly<Record<FsckMsgId, "refuse" | "warn">> = {
  nulInHeader: "refuse",
  unterminatedHeader: "refuse",
  badHeaderContinuation: "refuse",
  badGpgsig: "refuse",
  missingTree: "refuse",
  badTreeSha1: "refuse",
  badParentSha1: "refuse",
  missingAuthor: "refuse",
  multipleAuthors: "refuse",
  missingCommitter: "refuse",
  missingObject: "refuse",
  badObjectSha1: "refuse",
  missingTypeEntry: "refuse",
  missingType: "refuse",
  badType: "refuse",
  missingTagEntry: "refuse",
  missingTag: "refuse",
  unknownType: "refuse",
  badTree: "refuse",
  duplicateEntries: "refuse",
  treeNotSorted: "refuse",
  emptyName: "refuse",
  fullPathname: "refuse",
  hasDot: "refuse",
  hasDotdot: "refuse",
  hasDotgit: "refuse",
  gitmodulesSymlink: "refuse",
  gitmodulesName: "refuse",
  gitmodulesUrl: "refuse",
  gitmodulesPath: "refuse",
  gitmodulesUpdate: "refuse",
  gitmodulesLarge: "refuse",
  gitmodulesBlob: "refuse",
  gitmodulesMissing: "refuse",
  gitattributesLarge: "refuse",
  gitattributesLineLength: "refuse",
  gitattributesBlob: "refuse",
  gitattributesMissing: "refuse",
  // Identity lines: git's own reader (split_ident_line) shows them; old importers wrote them.
  missingNameBeforeEmail: "warn",
  missingEmail: "warn",
  badName: "warn",
  missingSpaceBeforeEmail: "warn",
  badEmail: "warn",
  missingSpaceBeforeDate: "warn",
  badDate: "warn",
  zeroPaddedDate: "warn",
  badDateOverflow: "warn",
  badTimezone: "warn",
  // What git's fsck only warns about or notes.
  zeroPaddedFilemode: "warn",
  badFilemode: "warn",
  nullSha1: "warn",
  largePathname: "warn",
  nulInCommit: "warn",
  missingTaggerEntry: "warn",
  badTagName: "warn",
  gitattributesSymlink: "warn",
};

/** One problem found in an object: git's message id, the object and git's wording. */
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

/** FsckWarnings as plain data (structured-cloneable: it crosses from an indexing thread). */
export interface FsckWarningsData {
  counts: [FsckMsgId, number][];
  examples: FsckProblem[];
}

/**
 * The problems of one write that svc accepted (FSCK_RULES `warn`): a count per message id and
 * the first few objects, so a history with a million zero-padded trees costs a few lines.
 */
export class FsckWarnings {
  readonly counts = new Map<FsckMsgId, number>();
  readonly examples: FsckProblem[] = [];

  constructor(private readonly maxExamples = 10) {}

  add(problem: FsckProblem): void {
    this.counts.set(problem.id, (this.counts.get(problem.id) ?? 0) + 1);
    if (this.examples.length < this.maxExamples) this.examples.push(problem);
  }

  /** Problems counted (an object with two kinds of problem counts twice). */
  get total(): number {
    let n = 0;
    for (const c of this.counts.values()) n += c;
    return n;
  }

  toData(): FsckWarningsData {
    return { counts: [...this.counts], examples: this.examples };
  }

  addData(data: FsckWarningsData): void {
    for (const [id, n] of data.counts) this.counts.set(id, (this.counts.get(id) ?? 0) + n);
    for (const e of data.examples) if (this.examples.length < this.maxExamples) this.examples.push(e);
  }

  /**
   * What the pusher reads (each line becomes `remote: <line>`): the first objects with git's
   * wording, then a count per message id; at most maxExamples + 2 lines.
   */
  lines(): string[] {
    if (this.counts.size === 0) return [];
    const out = this.examples.map((p) => `warning: object ${p.oid ?? "(unknown)"}: ${p.id}: ${p.detail}`);
    const summary = [...this.counts].sort((a, b) => b[1] - a[1]).map(([id, n]) => `${id} ×${n}`);
    out.push(`warning: accepted ${this.total} object problem${this.total === 1 ? "" : "s"} that git's fsck warns about: ${summary.join(", ")}`);
    out.push("warning: clients with transfer.fsckObjects=true may refuse to fetch these objects");
    return out;
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
const TILDE = 0x7e;
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

/**
 * Reports one problem: throws FsckError when FSCK_RULES refuses it, else records it in the
 * warnings (when collected) and returns, for the check to go on past it as git's fsck does.
 */
type Report = (id: FsckMsgId, detail: string) => void;

function reporter(type: ObjectType, oid: Oid | (() => Oid) | null, data: Uint8Array, warnings: FsckWarnings | null): Report {
  const oidOf = () => (typeof oid === "function" ? oid() : (oid ?? hashObject(type, data)));
  return (id, detail) => {
    if (FSCK_RULES[id] === "refuse") throw new FsckError({ id, type, oid: oidOf(), detail });
    warnings?.add({ id, type, oid: oidOf(), detail });
  };
}

/**
 * Checks one object: throws FsckError naming git's message id for a problem svc refuses; the
 * problems it accepts go to `warnings` when given. `oid` is only for messages (computed from the
 * data when omitted and something is found).
 */
export function fsckObject(type: ObjectType, data: Uint8Array, oid: Oid | null = null, warnings: FsckWarnings | null = null): void {
  const report = reporter(type, oid, data, warnings);
  switch (type) {
    case "commit":
      fsckCommit(data, report);
      return;
    case "tag":
      fsckTag(data, report);
      return;
    case "tree":
      fsckTree(data, report, null, null);
      return;
    case "blob":
      return;
    default:
      report("unknownType", `unknown type '${type as string}'`);
  }
}

/** What the indexer passes to fsckForIndex besides the object. */
export interface IndexCheck {
  /** Every object the object names (a commit's tree and parents, a tag's object, a tree's entries but gitlinks). */
  links: OidSet | null;
  /** Where trees report the blobs they name `.gitmodules` / `.gitattributes` (a FsckSession's). */
  found: TreeFindings | null;
  /** Where the accepted problems go. */
  warnings: FsckWarnings | null;
  /** The indexer's tree offsets (see TreeLayout). */
  layout?: TreeLayout | null;
}

/**
 * What the indexer runs on every commit, tree and tag: fsckObject's checks, and in the same pass
 * the links for the connectivity check and the `.gitmodules` / `.gitattributes` findings. `oid`
 * gives the object's id for messages (it is hashed before it is checked).
 */
export function fsckForIndex(type: ObjectType, data: Uint8Array, oid: () => Oid, check: IndexCheck): void {
  const report = reporter(type, oid, data, check.warnings);
  const links = check.links;
  switch (type) {
    case "tree":
      fsckTree(data, report, check.found, links, check.layout ?? null);
      return;
    case "commit": {
      fsckCommit(data, report);
      // fsckCommit refused anything but "tree <hex>\n" then "parent <hex>\n" lines.
      if (links) {
        links.addHexAt(data, 5);
        for (let p = 46; startsWith(data, p, "parent "); p += 48) links.addHexAt(data, p + 7);
      }
      return;
    }
    case "tag":
      fsckTag(data, report);
      links?.addHexAt(data, 7);
      return;
    case "blob":
      return;
    default:
      report("unknownType", `unknown type '${type as string}'`);
  }
}

// ---------------------------------------------------------------------------------------------
// Commits and tags

/** Headers end with "\n\n", or at least the last header line ends with "\n"; no NUL before. Refusals only. */
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

/**
 * Checks one identity ("Name <email> 1700000000 +0100") from `p`; returns the position after its
 * line. Like git's fsck_ident, the first problem ends the check of the line.
 */
function fsckIdent(d: Uint8Array, p: number, report: Report): number {
  const nl = d.indexOf(NL, p);
  // verifyHeaders guarantees a newline ends every header line.
  const end = nl < 0 ? d.length : nl;
  const next = end + 1;
  const bad = (id: FsckMsgId, what: string): number => {
    report(id, `invalid author/committer line - ${what}`);
    return next;
  };
  if (d[p] === LT) return bad("missingNameBeforeEmail", "missing space before email");
  for (;;) {
    if (p >= end) return bad("missingEmail", "missing email");
    if (d[p] === GT) return bad("badName", "bad name");
    if (d[p] === LT) break;
    p++;
  }
  if (d[p - 1] !== SP) return bad("missingSpaceBeforeEmail", "missing space before email");
  p++;
  for (;;) {
    if (p >= end || d[p] === LT) return bad("badEmail", "bad email");
    if (d[p] === GT) break;
    p++;
  }
  p++;
  if (d[p] !== SP) return bad("missingSpaceBeforeDate", "missing space before date");
  p++;
  while (d[p] === SP || d[p] === TAB) p++;
  if (!isDigit(d[p])) return bad("badDate", "bad date");
  if (d[p] === 0x30 && d[p + 1] !== SP) return bad("zeroPaddedDate", "zero-padded date");
  const start = p;
  while (p < end && isDigit(d[p])) p++;
  // git parses at most 23 digits and refuses what does not fit a signed 64-bit time.
  if (p - start > 23 || BigInt(latin1.decode(d.subarray(start, p))) > INT64_MAX) return bad("badDateOverflow", "date causes integer overflow");
  if (d[p] !== SP) return bad("badDate", "bad date");
  p++;
  if ((d[p] !== 0x2b && d[p] !== 0x2d) || !isDigit(d[p + 1]) || !isDigit(d[p + 2]) || !isDigit(d[p + 3]) || !isDigit(d[p + 4]) || d[p + 5] !== NL) {
    return bad("badTimezone", "bad time zone");
  }
  return next;
}

/** Checks a commit; returns normally only when its tree and parent lines are well formed. */
function fsckCommit(d: Uint8Array, report: Report): void {
  verifyHeaders(d, report);
  let p = 0;
  if (!startsWith(d, p, "tree ")) {
    report("missingTree", "invalid format - expected 'tree' line");
    return;
  }
  p += 5;
  if (!oidLine(d, p)) {
    report("badTreeSha1", "invalid 'tree' line format - bad sha1");
    return;
  }
  p += 41;
  while (startsWith(d, p, "parent ")) {
    p += 7;
    if (!oidLine(d, p)) {
      report("badParentSha1", "invalid 'parent' line format - bad sha1");
      return;
    }
    p += 41;
  }
  let authors = 0;
  while (startsWith(d, p, "author ")) {
    authors++;
    p = fsckIdent(d, p + 7, report);
  }
  if (authors < 1) {
    report("missingAuthor", "invalid format - expected 'author' line");
    return;
  }
  if (authors > 1) {
    report("multipleAuthors", "invalid format - multiple 'author' lines");
    return;
  }
  if (!startsWith(d, p, "committer ")) {
    report("missingCommitter", "invalid format - expected 'committer' line");
    return;
  }
  fsckIdent(d, p + 10, report);
  if (d.includes(0)) report("nulInCommit", "NUL byte in the commit object body");
}

const TYPES: ReadonlySet<string> = new Set(["commit", "tree", "blob", "tag"]);

/** Checks a tag; returns normally only when its object line is well formed. */
function fsckTag(d: Uint8Array, report: Report): void {
  verifyHeaders(d, report);
  let p = 0;
  if (!startsWith(d, p, "object ")) {
    report("missingObject", "invalid format - expected 'object' line");
    return;
  }
  p += 7;
  if (!oidLine(d, p)) {
    report("badObjectSha1", "invalid 'object' line format - bad sha1");
    return;
  }
  p += 41;
  if (!startsWith(d, p, "type ")) {
    report("missingTypeEntry", "invalid format - expected 'type' line");
    return;
  }
  p += 5;
  let eol = d.indexOf(NL, p);
  if (eol < 0) {
    report("missingType", "invalid format - unexpected end after 'type' line");
    return;
  }
  if (!TYPES.has(latin1.decode(d.subarray(p, eol)))) {
    report("badType", "invalid 'type' value");
    return;
  }
  p = eol + 1;
  if (!startsWith(d, p, "tag ")) {
    report("missingTagEntry", "invalid format - expected 'tag' line");
    return;
  }
  p += 4;
  eol = d.indexOf(NL, p);
  if (eol < 0) {
    report("missingTag", "invalid format - unexpected end after 'type' line");
    return;
  }
  const name = utf8.decode(d.subarray(p, eol));
  if (!checkRefFormat(`tags/${name}`)) report("badTagName", `invalid 'tag' name: ${name.slice(0, 200)}`);
  p = eol + 1;
  if (startsWith(d, p, "tagger ")) p = fsckIdent(d, p + 7, report);
  else report("missingTaggerEntry", "invalid format - expected 'tagger' line");
  if (startsWith(d, p, "gpgsig ") || startsWith(d, p, "gpgsig-sha256 ")) {
    eol = d.indexOf(NL, p);
    if (eol < 0) {
      report("badGpgsig", "invalid format - unexpected end after 'gpgsig' or 'gpgsig-sha256' line");
      return;
    }
    p = eol + 1;
    while (p < d.length && d[p] === SP) {
      eol = d.indexOf(NL, p);
      if (eol < 0) {
        report("badHeaderContinuation", "invalid format - unexpected end in 'gpgsig' or 'gpgsig-sha256' continuation line");
        return;
      }
      p = eol + 1;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Trees

/**
 * Where a tree check reports the blobs a tree names `.gitmodules` / `.gitattributes` (their
 * oid: 20 bytes of `d` at `at`), for FsckSession to check across objects.
 */
export interface TreeFindings {
  gitmodules(d: Uint8Array, at: number): void;
  gitattributes(d: Uint8Array, at: number): void;
}

/** Mode constants as git compares them (S_IFMT bits and permissions). */
const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const S_IFGITLINK = 0o160000;

/** Tree problems as bits, in the order git reports them (the first one names the refusal). */
const TREE_MESSAGES: readonly [FsckMsgId, string][] = [
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
const P_NULL_SHA1 = 1 << 0;
const P_FULL_PATHNAME = 1 << 1;
const P_HAS_DOT = 1 << 3;
const P_HAS_DOTDOT = 1 << 4;
const P_HAS_DOTGIT = 1 << 5;
const P_ZERO_PADDED = 1 << 6;
const P_DUPLICATES = 1 << 7;
const P_NOT_SORTED = 1 << 8;
const P_LARGE_PATHNAME = 1 << 9;
const P_BAD_FILEMODE = 1 << 10;

/** verifyOrdered's verdicts. */
const ORDER_OK = 0;
const ORDER_DUPS = 1;
const ORDER_UNSORTED = 2;

/**
 * Checks a tree as git's fsck_tree does. With `links`, every entry but a gitlink is added to it;
 * with `found`, the `.gitmodules`/`.gitattributes` blobs are reported to it. One pass over the
 * bytes, no allocation per entry: this runs on every tree of every push and mirror sync (33 M
 * entries for git.git's history).
 */
function fsckTree(d: Uint8Array, report: Report, found: TreeFindings | null, links: OidSet | null, layout: TreeLayout | null = null): void {
  const n = d.length;
  let pos = 0;
  let prevStart = -1;
  let prevEnd = -1;
  let prevMode = 0;
  let problems = 0;
  let symlinkedAttributes = false;
  // Names of non-directory entries that a later directory entry could duplicate (git's
  // verify_ordered: "foo", "foo.bar", "foo/" are not adjacent but "foo" and "foo/" clash), as
  // start/end pairs.
  let candidates: number[] | null = null;
  // Where each entry starts (layout.starts), and what this tree copies from its base.
  let starts: Uint32Array | null = layout?.starts ?? null;
  let count = 0;
  const baseStarts = layout?.base ?? null;
  const baseCount = baseStarts ? baseStarts.length : 0;
  const baseLength = layout?.baseLength ?? 0;
  const ops = layout?.copies?.ops ?? null;
  const opCount = baseStarts && layout!.copies ? layout!.copies.count : 0;
  let op = 0;
  while (pos < n) {
    if (starts !== null && count + 1 >= starts.length) starts = layout!.grow();
    if (opCount > 0) {
      // Whole entries of the base copied as they are: the base passed every check that looks at
      // one entry (and put the entry in `links` and `found`), so only their order is checked
      // here. Most trees are a delta against the previous version of their directory, and
      // nearly all their entries are copied (98% of git.git's tree bytes).
      while (op < opCount && ops![3 * op]! + ops![3 * op + 1]! <= pos) op++;
      if (op < opCount && ops![3 * op]! <= pos) {
        const segEnd = ops![3 * op]! + ops![3 * op + 1]!;
        let b = ops![3 * op + 2]! + (pos - ops![3 * op]!);
        let k = lowerBound(baseStarts!, b);
        let copied = false;
        while (k < baseCount && baseStarts![k] === b) {
          const entryEnd = k + 1 < baseCount ? baseStarts![k + 1]! : baseLength;
          const l = entryEnd - b;
          if (pos + l > segEnd) break;
          if (count + 1 >= starts!.length) starts = layout!.grow();
          starts![count++] = pos;
          // The mode as written (usually "40000" or six digits; old trees pad or bend it).
          let sp = pos;
          let raw = 0;
          for (; d[sp] !== SP; sp++) raw = (raw * 8 + (d[sp]! - 0x30)) >>> 0;
          const start = sp + 1;
          const end = pos + l - 21;
          const mode = raw & 0xffff;
          // What the base was only warned about is this tree's problem too (a warning per object).
          if (d[pos] === 0x30) problems |= P_ZERO_PADDED;
          if (mode !== 0o100644 && mode !== S_IFDIR && mode !== 0o100755 && mode !== S_IFLNK && mode !== S_IFGITLINK && mode !== 0o100664)
            problems |= P_BAD_FILEMODE;
          if (d[end + 1] === 0 && isNullOid(d, end + 1)) problems |= P_NULL_SHA1;
          if (end - start > MAX_TREE_ENTRY_LEN) problems |= P_LARGE_PATHNAME;
          if (prevStart >= 0) problems |= orderProblem(d, prevStart, prevEnd, prevMode, start, end, mode, candidates ?? (candidates = []));
          prevStart = start;
          prevEnd = end;
          prevMode = mode;
          pos += l;
          b = entryEnd;
          k++;
          copied = true;
        }
        if (copied) continue;
      }
    }
    if (starts !== null) starts[count++] = pos;
    // git's decode_tree_entry: an octal mode, a space, a non-empty name, NUL, 20 bytes.
    if (d[pos] === SP) report("badTree", "cannot be parsed as a tree");
    let mode = 0;
    let k = pos;
    for (; k < n; k++) {
      const c = d[k]!;
      if (c === SP) break;
      if (c < 0x30 || c > 0x37) report("badTree", "cannot be parsed as a tree");
      mode = (mode * 8 + (c - 0x30)) >>> 0;
    }
    if (k >= n) report("badTree", "cannot be parsed as a tree");
    const start = k + 1;
    let end = start;
    let backslash = false;
    for (; end < n; end++) {
      const c = d[end]!;
      if (c === 0) break;
      if (c === SLASH) problems |= P_FULL_PATHNAME;
      else if (c === BACKSLASH) backslash = true;
    }
    if (end + 21 > n) report("badTree", "cannot be parsed as a tree");
    if (end === start) report("badTree", "cannot be parsed as a tree");
    mode &= 0xffff;
    const oidAt = end + 1;
    if (d[oidAt] === 0 && isNullOid(d, oidAt)) problems |= P_NULL_SHA1;
    const len = end - start;
    const symlink = (mode & S_IFMT) === S_IFLNK;
    // Every name below (".", "..", ".git", ".gitmodules", ".gitattributes" in git's HFS+ and NTFS
    // spellings) starts with one of these bytes: most entries skip the name checks.
    const c0 = d[start]!;
    if (c0 === DOT || c0 === 0x67 || c0 === 0x47 || c0 === TILDE || c0 === 0xe2 || c0 === 0xef) {
      if (c0 === DOT && len === 1) problems |= P_HAS_DOT;
      if (c0 === DOT && len === 2 && d[start + 1] === DOT) problems |= P_HAS_DOTDOT;
      if (isHfsDot(d, start, end, "git") || isNtfsDotGit(d, start, end)) problems |= P_HAS_DOTGIT;
      if (isHfsDot(d, start, end, "gitmodules") || isNtfsDot(d, start, end, "gitmodules", "gi7eba")) {
        if (symlink) report("gitmodulesSymlink", ".gitmodules is a symbolic link");
        found?.gitmodules(d, oidAt);
      }
      // A symlinked .gitattributes is only "info" in git (and its content is not checked).
      if (isHfsDot(d, start, end, "gitattributes") || isNtfsDot(d, start, end, "gitattributes", "gi7d29")) {
        if (symlink) symlinkedAttributes = true;
        else found?.gitattributes(d, oidAt);
      }
    }
    if (d[pos] === 0x30) problems |= P_ZERO_PADDED;
    if (len > MAX_TREE_ENTRY_LEN) problems |= P_LARGE_PATHNAME;
    if (backslash) {
      for (let b = start; b < end; b++) {
        if (d[b] !== BACKSLASH) continue;
        if (isNtfsDotGit(d, b + 1, end)) problems |= P_HAS_DOTGIT;
        if (isNtfsDot(d, b + 1, end, "gitmodules", "gi7eba")) {
          if (symlink) report("gitmodulesSymlink", ".gitmodules is a symbolic link");
          found?.gitmodules(d, oidAt);
        }
      }
    }
    if (mode !== 0o100644 && mode !== 0o100755 && mode !== S_IFDIR && mode !== S_IFLNK && mode !== S_IFGITLINK && mode !== 0o100664) {
      // 100664 was written by very old git; "info" in git even in strict mode.
      problems |= P_BAD_FILEMODE;
    }
    if (prevStart >= 0) problems |= orderProblem(d, prevStart, prevEnd, prevMode, start, end, mode, candidates ?? (candidates = []));
    if (links !== null && mode !== S_IFGITLINK) links.add(d, oidAt);
    prevStart = start;
    prevEnd = end;
    prevMode = mode;
    pos = end + 21;
  }
  if (layout !== null) layout.count = count;
  if (problems !== 0) for (let b = 0; b < TREE_MESSAGES.length; b++) if (problems & (1 << b)) report(...TREE_MESSAGES[b]!);
  if (symlinkedAttributes) report("gitattributesSymlink", ".gitattributes is a symlink");
}

/** The order problem (duplicateEntries, treeNotSorted) of two adjacent entries, as a bit; 0 when in order. */
function orderProblem(d: Uint8Array, a: number, aEnd: number, aMode: number, b: number, bEnd: number, bMode: number, candidates: number[]): number {
  // The common case first: the names differ within the shorter one, in order.
  let i = 0;
  const m = Math.min(aEnd - a, bEnd - b);
  while (i < m && d[a + i] === d[b + i]) i++;
  if (i < m && d[a + i]! < d[b + i]!) return 0;
  const order = verifyOrdered(d, a, aEnd, aMode, b, bEnd, bMode, candidates);
  return order === ORDER_DUPS ? P_DUPLICATES : order === ORDER_UNSORTED ? P_NOT_SORTED : 0;
}

/**
 * Entry offsets of trees, between the indexer and the tree checks: after a check, where each
 * entry of the tree starts (`starts[0..count)`); before one, for a tree resolved from a delta,
 * its base's offsets and length and the delta's copy instructions (so that whole entries copied
 * from the base are not checked again).
 */
export class TreeLayout {
  starts: Uint32Array = new Uint32Array(1024);
  count = 0;
  base: Uint32Array | null = null;
  baseLength = 0;
  copies: CopyLog | null = null;

  /** Doubles `starts`, keeping its values; returns it. */
  grow(): Uint32Array {
    const next = new Uint32Array(2 * this.starts.length);
    next.set(this.starts);
    this.starts = next;
    return next;
  }

  /** A copy of the offsets the last check found. */
  takeStarts(): Uint32Array {
    return this.starts.slice(0, this.count);
  }

  /** Fills `starts` from a tree that passed its checks (a walk's root, read again). */
  scan(d: Uint8Array): void {
    let count = 0;
    for (let pos = 0; pos < d.length; ) {
      if (count + 1 >= this.starts.length) this.grow();
      this.starts[count++] = pos;
      pos = d.indexOf(0, pos) + 21;
      if (pos < 21) break;
    }
    this.count = count;
  }
}

function isNullOid(d: Uint8Array, at: number): boolean {
  for (let k = 0; k < 20; k++) if (d[at + k] !== 0) return false;
  return true;
}

/** Whether the byte after a prefix sorts before "/" (git's is_less_than_slash). */
function lessThanSlash(c: number): boolean {
  return c !== 0 && c < SLASH;
}

/** git's verify_ordered for two adjacent entries (names as byte ranges of `d`). */
function verifyOrdered(d: Uint8Array, a: number, aEnd: number, aMode: number, b: number, bEnd: number, bMode: number, candidates: number[]): number {
  const la = aEnd - a;
  const lb = bEnd - b;
  const n = Math.min(la, lb);
  for (let i = 0; i < n; i++) {
    const diff = d[a + i]! - d[b + i]!;
    if (diff) return diff < 0 ? ORDER_OK : ORDER_UNSORTED;
  }
  let c1 = la > n ? d[a + n]! : 0;
  let c2 = lb > n ? d[b + n]! : 0;
  if (c1 === 0 && c2 === 0) return ORDER_DUPS;
  if (c1 === 0 && (aMode & S_IFMT) === S_IFDIR) c1 = SLASH;
  if (c2 === 0 && (bMode & S_IFMT) === S_IFDIR) c2 = SLASH;
  if (c1 === 0 && lessThanSlash(c2)) {
    candidates.push(a, aEnd);
  } else if (c2 === SLASH && lessThanSlash(c1)) {
    while (candidates.length > 0) {
      const fe = candidates.pop()!;
      const fs = candidates.pop()!;
      const fl = fe - fs;
      let prefix = fl <= lb;
      for (let i = 0; prefix && i < fl; i++) if (d[fs + i] !== d[b + i]) prefix = false;
      if (!prefix) continue;
      if (fl === lb) return ORDER_DUPS;
      if (lessThanSlash(d[b + fl]!)) {
        candidates.push(fs, fe);
        break;
      }
    }
  }
  return c1 < c2 ? ORDER_OK : ORDER_UNSORTED;
}

// ---------------------------------------------------------------------------------------------
// Names that mean `.git`, `.gitmodules` … on HFS+ and NTFS (git's utf8.c and path.c)

// module-state: scratch (synchronous, reused by every call; see below)
/** Where nextHfsChar left off (one module-level cursor: these checks never nest). */
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
      const b1 = s + 1 < end ? d[s + 1]! : 0;
      if ((b1 & 0xc0) !== 0x80 || (c0 & 0xfe) === 0xc0) return -1;
      ch = ((c0 & 0x1f) << 6) | (b1 & 0x3f);
      len = 2;
    } else if ((c0 & 0xf0) === 0xe0) {
      const b1 = s + 1 < end ? d[s + 1]! : 0;
      const b2 = s + 2 < end ? d[s + 2]! : 0;
      if (
        (b1 & 0xc0) !== 0x80 ||
        (b2 & 0xc0) !== 0x80 ||
        (c0 === 0xe0 && (b1 & 0xe0) === 0x80) ||
        (c0 === 0xed && (b1 & 0xe0) === 0xa0) ||
        (c0 === 0xef && b1 === 0xbf && (b2 & 0xfe) === 0xbe)
      )
        return -1;
      ch = ((c0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
      len = 3;
    } else if ((c0 & 0xf8) === 0xf0) {
      const b1 = s + 1 < end ? d[s + 1]! : 0;
      const b2 = s + 2 < end ? d[s + 2]! : 0;
      const b3 = s + 3 < end ? d[s + 3]! : 0;
      if (
        (b1 & 0xc0) !== 0x80 ||
        (b2 & 0xc0) !== 0x80 ||
        (b3 & 0xc0) !== 0x80 ||
        (c0 === 0xf0 && (b1 & 0xf0) === 0x80) ||
        (c0 === 0xf4 && b1 > 0x8f) ||
        c0 > 0xf4
      )
        return -1;
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
  // Only "." or the first byte of an ignorable code point (U+200C… and U+FEFF) can start it.
  const c0 = start < end ? d[start]! : 0;
  if (c0 !== DOT && c0 !== 0xe2 && c0 !== 0xef) return false;
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
    if (lower(at0(d, i++, end)) !== 0x69 || lower(at0(d, i++, end)) !== 0x74 || at0(d, i++, end) !== TILDE || at0(d, i++, end) !== 0x31) return false;
  } else return false;
  for (;;) {
    const x = at0(d, i++, end);
    if (x === 0 || x === SLASH || x === BACKSLASH || x === COLON) return true;
    if (x !== DOT && x !== SP) return false;
  }
}

/** is_ntfs_dot_generic's tail: only spaces and periods from `i` up to the end or a `:`. */
function onlySpacesAndPeriods(d: Uint8Array, i: number, end: number): boolean {
  for (;;) {
    const c = at0(d, i++, end);
    if (c === 0 || c === COLON) return true;
    if (c !== SP && c !== DOT) return false;
  }
}

/** git's is_ntfs_dot_generic for `.gitmodules` (short prefix "gi7eba") and its kin. */
function isNtfsDot(d: Uint8Array, start: number, end: number, name: string, shortPrefix: string): boolean {
  const c0 = at0(d, start, end);
  if (c0 === DOT && caseEqual(d, start + 1, end, name, name.length)) return onlySpacesAndPeriods(d, start + name.length + 1, end);
  // The short names below start with the name's first letter or with "~".
  if (lower(c0) !== name.charCodeAt(0) && c0 !== TILDE) return false;
  if (caseEqual(d, start, end, name, 6) && at0(d, start + 6, end) === TILDE && at0(d, start + 7, end) >= 0x31 && at0(d, start + 7, end) <= 0x34)
    return onlySpacesAndPeriods(d, start + 8, end);
  let sawTilde = false;
  for (let i = 0; i < 8; i++) {
    const c = at0(d, start + i, end);
    if (c === 0) return false;
    if (sawTilde) {
      if (c < 0x30 || c > 0x39) return false;
    } else if (c === TILDE) {
      const n = at0(d, start + ++i, end);
      if (n < 0x31 || n > 0x39) return false;
      sawTilde = true;
    } else if (i >= 6) return false;
    else if (c & 0x80) return false;
    else if (lower(c) !== shortPrefix.charCodeAt(i)) return false;
  }
  return onlySpacesAndPeriods(d, start + 8, end);
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

/** FsckSession's findings as plain data. */
export interface FsckSessionState {
  gitmodules: Oid[];
  gitattributes: Oid[];
  /** Blobs already checked ("m<oid>" / "a<oid>"). */
  done: string[];
  warnings: FsckWarningsData;
}

/**
 * The checks that need more than one object: a tree names a blob `.gitmodules` or
 * `.gitattributes`, and that blob's content is checked whether it arrives before, after, or
 * was stored long ago. A received pack: pass the session to indexPack (`fsck`), whose tree
 * checks report the names to `found` and whose blobs go to `inspectBlob`; elsewhere feed every
 * object to `inspect` (per-object checks are fsckObject's). Then call `finish` with a reader
 * that sees the write and the repository.
 */
export class FsckSession {
  private readonly gitmodules = new Set<Oid>();
  private readonly gitattributes = new Set<Oid>();
  /** Both sets' oids as raw bytes: most blobs are no such blob, and are told so without a hex string. */
  private readonly flagged = new OidSet(16);
  private readonly done = new Set<Oid>();
  /** The problems of the write that svc accepts (FSCK_RULES `warn`), for the pusher. */
  readonly warnings = new FsckWarnings();

  /** What the session found, as plain data (a session on an indexing thread hands it back). */
  state(): FsckSessionState {
    return { gitmodules: [...this.gitmodules], gitattributes: [...this.gitattributes], done: [...this.done], warnings: this.warnings.toData() };
  }

  /** Takes in what another session found (the thread's, for `finish` here). */
  absorb(state: FsckSessionState): void {
    for (const oid of state.gitmodules) this.found.gitmodules(hexToBytes(oid), 0);
    for (const oid of state.gitattributes) this.found.gitattributes(hexToBytes(oid), 0);
    for (const key of state.done) this.done.add(key);
    this.warnings.addData(state.warnings);
  }

  /** Where a tree check (fsckTree through validateObject) reports what the tree names. */
  readonly found: TreeFindings = {
    gitmodules: (d, at) => {
      this.flagged.add(d, at);
      this.gitmodules.add(bytesToHex(d, at, 20));
    },
    gitattributes: (d, at) => {
      this.flagged.add(d, at);
      this.gitattributes.add(bytesToHex(d, at, 20));
    },
  };

  /** Records what a tree names and checks a named blob (oid as 20 raw bytes at `at`, or hex). */
  readonly inspect = (type: ObjectType, data: Uint8Array, oid: Uint8Array | Oid, at = 0): void => {
    if (type === "tree") {
      specialEntries(data, this.found);
      return;
    }
    if (type !== "blob") return;
    if (typeof oid !== "string") {
      this.inspectBlob(data, oid, at);
      return;
    }
    // A blob that arrives before the tree naming it is read back by finish (not kept: blobs may be large).
    if (this.gitmodules.has(oid) || this.gitattributes.has(oid)) this.check(oid, data);
  };

  /** Checks a blob (its oid: 20 bytes of `oids` at `at`) when a tree seen so far names it. */
  readonly inspectBlob = (data: Uint8Array, oids: Uint8Array, at: number): void => {
    if (this.flagged.size === 0 || !this.flagged.has(oids, at)) return;
    this.check(bytesToHex(oids, at, 20), data);
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
        if (header!.size > (kind === "m" ? GITMODULES_MAX_SIZE : ATTR_MAX_FILE_SIZE))
          fail(kind === "m" ? "gitmodulesLarge" : "gitattributesLarge", `${what} too large to parse`);
        const obj = await reader.read(oid);
        if (!obj) fail(kind === "m" ? "gitmodulesMissing" : "gitattributesMissing", `unable to read ${what} blob`);
        this.check(oid, obj!.data);
      }
    }
  }
}

/**
 * Reports the blobs a tree names `.gitmodules` / `.gitattributes` (any spelling fsckTree takes
 * for one) to `found`, without fsckTree's other checks (the tree passed them, or is checked
 * elsewhere); tolerant of a malformed tree (stops at the first unparsable entry).
 */
function specialEntries(d: Uint8Array, found: TreeFindings): void {
  let pos = 0;
  while (pos < d.length) {
    let mode = 0;
    let sp = pos;
    for (; sp < d.length && d[sp] !== SP; sp++) mode = (mode * 8 + (d[sp]! - 0x30)) >>> 0;
    const start = sp + 1;
    let end = start;
    let backslash = false;
    for (; end < d.length && d[end] !== 0; end++) if (d[end] === BACKSLASH) backslash = true;
    if (end + 21 > d.length) return;
    const symlink = (mode & 0xffff & S_IFMT) === S_IFLNK;
    const oidAt = end + 1;
    const c0 = d[start];
    if (c0 === DOT || c0 === 0x67 || c0 === 0x47 || c0 === TILDE || c0 === 0xe2 || c0 === 0xef) {
      if (isHfsDot(d, start, end, "gitmodules") || isNtfsDot(d, start, end, "gitmodules", "gi7eba")) found.gitmodules(d, oidAt);
      if (!symlink && (isHfsDot(d, start, end, "gitattributes") || isNtfsDot(d, start, end, "gitattributes", "gi7d29"))) found.gitattributes(d, oidAt);
    }
    if (backslash) {
      for (let b = start; b < end; b++) if (d[b] === BACKSLASH && isNtfsDot(d, b + 1, end, "gitmodules", "gi7eba")) found.gitmodules(d, oidAt);
    }
    pos = end + 21;
  }
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
