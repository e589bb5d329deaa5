// The arguments a fetch request shares between protocol v0 (upload-request) and v2 (fetch).
//
// From gitprotocol-pack(5):
//
//   upload-request    =  want-list
//                        *shallow-line
//                        *1depth-request
//                        [filter-request]
//                        flush-pkt
//   want-list         =  first-want
//                        *additional-want
//   shallow-line      =  PKT-LINE("shallow" SP obj-id)
//   depth-request     =  PKT-LINE("deepen" SP depth) /
//                        PKT-LINE("deepen-since" SP timestamp) /
//                        PKT-LINE("deepen-not" SP ref)
//   first-want        =  PKT-LINE("want" SP obj-id SP capability-list)
//   additional-want   =  PKT-LINE("want" SP obj-id)
//   filter-request    =  PKT-LINE("filter" SP filter-spec)
import { FilterSpecError, parseFilterSpec, type ObjectFilter } from "./list-objects.ts";
import { isOid } from "./oid.ts";
import { expandRefName, type RepoSnapshot } from "./repo-snapshot.ts";
import { GitError, type Oid } from "./types.ts";
import { firstUnreachable } from "./walk.ts";

/**
 * How many lines of one kind (want, have, shallow, deepen-not, ref-prefix, oid, ...) one
 * upload-pack request may carry; over SSH each round of haves counts on its own. Why a bound:
 * each line costs memory and a lookup, and nothing else limits their number (an upload-pack body
 * may be as large as a push). Real clients stay far below the default: git sends at most a few
 * tens of thousands of haves per round, and wants beyond the refs only for the blobs of a
 * partial clone's checkout.
 */
export interface NegotiationLimits {
  maxLines: number;
  /** The setting that raises the limit, named in the refusal. */
  setting?: string;
}

/** The default bound: 500,000 lines of each kind per request. */
export const DEFAULT_NEGOTIATION_LIMITS: NegotiationLimits = Object.freeze({ maxLines: 500_000 });

/** Counts the lines of each kind of one request; throws the refusal git prints past the limit. */
export class LineCounts {
  private readonly counts = new Map<string, number>();

  constructor(private readonly limits: NegotiationLimits = DEFAULT_NEGOTIATION_LIMITS) {}

  /** Count one `kind` line. */
  add(kind: string): void {
    const n = (this.counts.get(kind) ?? 0) + 1;
    if (n > this.limits.maxLines) {
      const raise = this.limits.setting ? `; the server's ${this.limits.setting} sets it` : "";
      throw new GitError(`upload-pack: more than ${this.limits.maxLines} '${kind}' lines in one request${raise}`, "too-large");
    }
    this.counts.set(kind, n);
  }

  /** Start counting `kind` again (a new round of haves in one conversation). */
  reset(kind: string): void {
    this.counts.delete(kind);
  }
}

/** A parsed fetch request (wants, shallow state, deepen and filter arguments). */
export interface UploadRequest {
  wants: Oid[];
  shallow: Oid[];
  depth: number;
  deepenSince?: number;
  /** deepen-not refs, resolved to their ids. */
  deepenNot: Oid[];
  deepenRelative: boolean;
  filter?: ObjectFilter;
}

const deepenNotSeen = new WeakMap<UploadRequest, Set<Oid>>();

/** An empty request. */
export function newUploadRequest(): UploadRequest {
  return { wants: [], shallow: [], depth: 0, deepenNot: [], deepenRelative: false };
}

/** True when the request changes the client's shallow boundary (deepen, deepen-since, deepen-not). */
export function isDeepen(req: UploadRequest): boolean {
  return req.depth > 0 || req.deepenSince !== undefined || req.deepenNot.length > 0;
}

/** Parse "want <oid>"; returns the oid and the rest of the line (v0 capabilities). */
export function parseWant(line: string): { oid: Oid; rest: string } | null {
  if (!line.startsWith("want ")) return null;
  const oid = line.slice(5, 45);
  if (!isOid(oid) || (line.length > 45 && line[45] !== " ")) {
    throw new GitError(`upload-pack: protocol error, expected to get object ID, not '${line}'`, "protocol");
  }
  return { oid, rest: line.slice(46) };
}

/**
 * Apply a shallow/deepen/deepen-since/deepen-not/filter line to `req`; false when the line is
 * none of these. `filterAllowed` is false in v0 unless the client asked for the filter capability.
 */
export function parseShallowOrFilterLine(line: string, req: UploadRequest, snapshot: RepoSnapshot, filterAllowed: boolean): boolean {
  const sp = line.indexOf(" ");
  const key = sp < 0 ? line : line.slice(0, sp);
  const arg = sp < 0 ? "" : line.slice(sp + 1);
  switch (key) {
    case "shallow":
      if (!isOid(arg)) throw new GitError(`invalid shallow line: ${line}`, "protocol");
      req.shallow.push(arg);
      return true;
    case "deepen": {
      const depth = /^\d+$/.test(arg) ? Number(arg) : 0;
      if (depth <= 0) throw new GitError(`Invalid deepen: ${line}`, "protocol");
      req.depth = Math.min(depth, 0x7fffffff);
      return true;
    }
    case "deepen-since": {
      const since = /^\d+$/.test(arg) ? Number(arg) : 0;
      if (since <= 0) throw new GitError(`Invalid deepen-since: ${line}`, "protocol");
      req.deepenSince = since;
      return true;
    }
    case "deepen-not": {
      const refs = expandRefName(snapshot, arg);
      if (refs.length !== 1) throw new GitError(`upload-pack: ambiguous deepen-not: ${line}`, "protocol");
      // Each ref once: a request may name the same one many times.
      let seen = deepenNotSeen.get(req);
      if (!seen) deepenNotSeen.set(req, (seen = new Set()));
      if (!seen.has(refs[0]!.oid)) {
        seen.add(refs[0]!.oid);
        req.deepenNot.push(refs[0]!.oid);
      }
      return true;
    }
    case "filter": {
      if (!filterAllowed) throw new GitError("upload-pack: filtering capability not negotiated", "protocol");
      if (req.filter) throw new GitError("upload-pack: multiple filter-specs cannot be combined", "protocol");
      try {
        req.filter = parseFilterSpec(arg);
      } catch (e) {
        if (e instanceof FilterSpecError) throw new GitError(e.message, "protocol");
        throw e;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * Throw "not our ref" unless every want is reachable from a tip (allow-reachable-sha1-in-want):
 * a ref, or with the snapshot's reachability index (a server's), an open change's head too. The
 * index answers commits and tags at once; other objects take the tree walk.
 */
export async function checkWantsReachable(snapshot: RepoSnapshot, wants: Oid[]): Promise<void> {
  const tips = new Set(snapshot.refs.map((r) => r.oid));
  const others = wants.filter((w) => !tips.has(w));
  if (others.length === 0) return;
  const bad = snapshot.reach
    ? await (await snapshot.reach()).firstUnreachable(snapshot.objects, others)
    : await firstUnreachable(snapshot.objects, [...tips], others);
  if (bad) throw new GitError(`upload-pack: not our ref ${bad}`, "not-our-ref");
}
