// Tree traversal for `rev-list --objects`: the trees and blobs of the interesting
// commits, minus everything in the trees of the uninteresting edge commits, with the
// partial-clone filters of rev-list --filter (parsed here, reduced to rules both walks apply).
import { type EntryKind, forEachTreeEntry } from "./object-links.ts";
import { GitError, type ObjectReader, type Oid } from "./types.ts";

/**
 * A partial clone filter (git rev-list --filter), as git's list-objects-filter-options.c parses
 * it. `combine` holds its parts already flattened (a combine inside a combine is the same as its
 * parts side by side).
 */
export type ObjectFilter =
  | { kind: "blob:none" }
  | { kind: "blob:limit"; bytes: number }
  | { kind: "tree"; depth: number }
  | { kind: "object:type"; type: "commit" | "tree" | "blob" | "tag" }
  | { kind: "combine"; filters: ObjectFilter[] };

/** A filter-spec this server refuses, or one git itself cannot parse: the message for the client. */
export class FilterSpecError extends Error {}

/** Nested combine: filters deeper than this are refused (git sets no bound; no client nests at all). */
const MAX_COMBINE_DEPTH = 16;
/** Parts of one combine filter (git sets no bound; each costs nothing once compiled). */
const MAX_COMBINE_PARTS = 256;
/** git's RESERVED_NON_WS: characters a combine part must percent-encode. */
const RESERVED = "~`!@#$^&*()[]{}\\;'\",<>?";

/**
 * Parse a filter-spec ("blob:none", "blob:limit=1k", "tree:0", "object:type=blob",
 * "combine:tree:0+blob:none"); throws FilterSpecError with git's message for anything git
 * refuses to parse, and with upload-pack's "filter '<name>' not supported" for `sparse:oid`,
 * which this server does not serve (see docs/architecture.md "Partial clone filters").
 */
export function parseFilterSpec(spec: string, depth = 0): ObjectFilter {
  if (spec === "blob:none") return { kind: "blob:none" };
  if (spec.startsWith("blob:limit=")) {
    const bytes = parseGitUlong(spec.slice(11));
    if (bytes !== null) return { kind: "blob:limit", bytes };
  } else if (spec.startsWith("tree:")) {
    const d = parseGitUlong(spec.slice(5));
    if (d === null) throw new FilterSpecError("expected 'tree:<depth>'");
    return { kind: "tree", depth: d };
  } else if (spec.startsWith("sparse:oid=")) {
    // Why refused: the patterns come from a blob the client names and would be matched against
    // every path of the history (git's non-cone patterns backtrack); C git's own answer when an
    // operator sets uploadpackfilter.sparse:oid.allow=false, as the large hosts do.
    throw new FilterSpecError("filter 'sparse:oid' not supported");
  } else if (spec.startsWith("sparse:path=")) {
    throw new FilterSpecError("sparse:path filters support has been dropped");
  } else if (spec.startsWith("object:type=")) {
    const type = spec.slice(12);
    if (type === "commit" || type === "tree" || type === "blob" || type === "tag") return { kind: "object:type", type };
    throw new FilterSpecError(`'${type}' for 'object:type=<type>' is not a valid object type`);
  } else if (spec.startsWith("combine:")) {
    return parseCombine(spec.slice(8), depth);
  }
  throw new FilterSpecError(`invalid filter-spec '${spec}'`);
}

function parseCombine(arg: string, depth: number): ObjectFilter {
  if (arg === "") throw new FilterSpecError("expected something after combine:");
  if (depth >= MAX_COMBINE_DEPTH) throw new FilterSpecError(`invalid filter-spec: combine nested more than ${MAX_COMBINE_DEPTH} deep`);
  // git's strbuf_split_str keeps each '+' on the part before it, then drops it from all but the last.
  const parts: string[] = [];
  let from = 0;
  for (let i = 0; i < arg.length; i++) {
    if (arg[i] !== "+") continue;
    parts.push(arg.slice(from, i + 1 === arg.length ? i + 1 : i));
    from = i + 1;
  }
  if (from < arg.length) parts.push(arg.slice(from));
  const filters: ObjectFilter[] = [];
  for (const part of parts) {
    for (const c of part) {
      if (c <= " " || RESERVED.includes(c)) throw new FilterSpecError(`must escape char in sub-filter-spec: '${c}'`);
    }
    const sub = parseFilterSpec(percentDecode(part), depth + 1);
    if (sub.kind === "combine") filters.push(...sub.filters);
    else filters.push(sub);
    if (filters.length > MAX_COMBINE_PARTS) throw new FilterSpecError(`invalid filter-spec: more than ${MAX_COMBINE_PARTS} parts in combine`);
  }
  return { kind: "combine", filters };
}

/** git's url_percent_decode: "%XY" with two hex digits (not %00) becomes that byte. */
function percentDecode(s: string): string {
  if (!s.includes("%")) return s;
  const out: number[] = [];
  const bytes = new TextEncoder().encode(s);
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x25 && i + 2 < bytes.length) {
      const v = Number.parseInt(String.fromCharCode(bytes[i + 1]!, bytes[i + 2]!), 16);
      if (/^[0-9a-fA-F]{2}$/.test(String.fromCharCode(bytes[i + 1]!, bytes[i + 2]!)) && v > 0) {
        out.push(v);
        i += 2;
        continue;
      }
    }
    out.push(bytes[i]!);
  }
  return new TextDecoder().decode(new Uint8Array(out));
}

/**
 * git's git_parse_ulong: strtoumax with base detection (0x hex, leading 0 octal, leading
 * blanks and '+' allowed, no '-'), then an optional k/m/g unit; null when git would refuse it.
 * Values beyond 2^53 become Infinity (every size and depth is smaller).
 */
export function parseGitUlong(text: string): number | null {
  if (text === "" || text.includes("-")) return null;
  const m = /^[ \t\n\v\f\r]*\+?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([kKmMgG]?)$/.exec(text);
  if (!m) return null;
  const digits = m[1]!;
  let value: bigint;
  if (/^0[xX]/.test(digits)) value = BigInt(digits);
  else if (digits.length > 1 && digits[0] === "0") value = BigInt(`0o${digits.slice(1)}`);
  else value = BigInt(digits);
  const unit = m[2]!.toLowerCase();
  value *= unit === "k" ? 1024n : unit === "m" ? 1024n ** 2n : unit === "g" ? 1024n ** 3n : 1n;
  if (value > 0xffffffffffffffffn) return null;
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.POSITIVE_INFINITY : Number(value);
}

/**
 * What a filter lets through, reduced to rules over an object's kind and depth (the root tree of
 * a commit is at depth 0, its entries at 1; the entries of an explicitly wanted tree at 0).
 * A combine filter sends what every part sends (an object passes when it passes each part alone).
 */
export interface FilterRules {
  /** Commits other than the wanted ones are sent. */
  commits: boolean;
  /** Trees at depth < maxDepth are sent. */
  trees: boolean;
  /** Trees are read at all (their entries may be sent). */
  descend: boolean;
  /** Nothing at this depth or deeper is sent (tree:<depth>); Infinity without a tree filter. */
  maxDepth: number;
  /** Blobs below this size are sent: Infinity for all, 0 for none. */
  blobLimit: number;
}

/** The rules of `filter` (undefined: no filter, everything is sent). */
export function filterRules(filter: ObjectFilter | undefined): FilterRules {
  const rules: FilterRules = { commits: true, trees: true, descend: true, maxDepth: Number.POSITIVE_INFINITY, blobLimit: Number.POSITIVE_INFINITY };
  const apply = (f: ObjectFilter): void => {
    switch (f.kind) {
      case "blob:none":
        rules.blobLimit = 0;
        break;
      case "blob:limit":
        rules.blobLimit = Math.min(rules.blobLimit, f.bytes);
        break;
      case "tree":
        rules.maxDepth = Math.min(rules.maxDepth, f.depth);
        break;
      case "object:type":
        if (f.type !== "commit") rules.commits = false;
        if (f.type !== "tree") rules.trees = false;
        if (f.type !== "blob") rules.blobLimit = 0;
        if (f.type === "commit" || f.type === "tag") rules.descend = false;
        break;
      case "combine":
        for (const sub of f.filters) apply(sub);
        break;
    }
  };
  if (filter) apply(filter);
  if (rules.blobLimit === 0 && !rules.trees) rules.descend = false;
  return rules;
}

/** Reads trees once each; remembers what the client already has. */
export class TreeWalker {
  /** Trees and blobs reachable from uninteresting (client-side) trees. */
  readonly uninteresting = new Set<Oid>();

  constructor(private readonly reader: ObjectReader) {}

  /** The entries of a tree; throws GitError naming it when missing. */
  async entries(oid: Oid): Promise<{ kind: EntryKind; oid: Oid }[]> {
    const obj = await this.reader.read(oid);
    if (!obj) throw new GitError(`missing tree ${oid}`, "missing");
    if (obj.type !== "tree") throw new GitError(`object ${oid} is a ${obj.type}, not a tree`);
    const entries: { kind: EntryKind; oid: Oid }[] = [];
    forEachTreeEntry(obj.data, (kind, entry) => entries.push({ kind, oid: entry }));
    return entries;
  }

  /** Hint the subtrees among `entries` the walk will read next, so object storage fetches them side by side. */
  private prefetchTrees(entries: { kind: EntryKind; oid: Oid }[], seen?: Set<Oid>): void {
    if (!this.reader.prefetch) return;
    const next = entries.filter((e) => e.kind === "tree" && !this.uninteresting.has(e.oid) && !seen?.has(e.oid)).map((e) => e.oid);
    if (next.length > 0) this.reader.prefetch(next);
  }

  /** Mark a tree and everything below it as held by the client (mark_tree_uninteresting). */
  async markUninteresting(root: Oid): Promise<void> {
    if (this.uninteresting.has(root)) return;
    this.uninteresting.add(root);
    const stack = [root];
    while (stack.length > 0) {
      const tree = stack.pop()!;
      const entries = await this.entries(tree).catch(() => []);
      this.prefetchTrees(entries);
      for (const e of entries) {
        if (e.kind === "gitlink" || this.uninteresting.has(e.oid)) continue;
        this.uninteresting.add(e.oid);
        if (e.kind === "tree") stack.push(e.oid);
      }
    }
  }

  /**
   * Append to `trees`/`blobs` every object below the commits' root trees `roots` (depth 0) and the
   * explicitly wanted trees `given` (sent whatever the filter says; their entries at depth 0) not
   * yet in `seen` and not uninteresting, level by level (so each object is judged at its smallest
   * depth, as git's tree:<depth> filter does), leaving out what the filter omits.
   */
  async collect(roots: Oid[], given: Oid[], seen: Set<Oid>, trees: Oid[], blobs: Oid[], filter?: ObjectFilter): Promise<void> {
    const rules = filterRules(filter);
    const judged = new Set<Oid>();
    let level: Oid[] = [];
    const visit = async (tree: Oid, depth: number, next: Oid[]): Promise<void> => {
      const entries = await this.entries(tree);
      this.prefetchTrees(entries, seen);
      for (const e of entries) {
        if (e.kind === "gitlink" || judged.has(e.oid) || seen.has(e.oid) || this.uninteresting.has(e.oid)) continue;
        judged.add(e.oid);
        if (e.kind === "tree") {
          if (rules.trees && depth < rules.maxDepth) trees.push(e.oid);
          next.push(e.oid);
        } else if (depth < rules.maxDepth && (await this.wantBlob(e.oid, rules.blobLimit))) {
          blobs.push(e.oid);
        }
      }
    };
    for (const t of given) {
      if (seen.has(t) || this.uninteresting.has(t)) continue;
      seen.add(t);
      trees.push(t);
      if (rules.descend && 0 < rules.maxDepth) await visit(t, 0, level);
    }
    for (const t of roots) {
      if (judged.has(t) || seen.has(t) || this.uninteresting.has(t)) continue;
      judged.add(t);
      if (rules.trees && 0 < rules.maxDepth) trees.push(t);
      level.push(t);
    }
    for (let depth = 1; level.length > 0 && rules.descend && depth < rules.maxDepth; depth++) {
      const next: Oid[] = [];
      for (const t of level) await visit(t, depth, next);
      level = next;
    }
    for (const t of judged) seen.add(t);
  }

  private async wantBlob(oid: Oid, limit: number): Promise<boolean> {
    if (limit === Number.POSITIVE_INFINITY) return true;
    if (limit === 0) return false;
    const head = await this.reader.readHeader(oid);
    if (!head) throw new GitError(`missing blob ${oid}`, "missing");
    return head.size < limit;
  }
}
