// The v2 ls-refs command: the ref advertisement, on request.
//
// From gitprotocol-v2(5):
//
//   ls-refs takes in the following arguments:
//     symrefs / peel / ref-prefix <prefix> / unborn
//
//   output = *ref
//            flush-pkt
//   obj-id-or-unborn = (obj-id | "unborn")
//   ref = PKT-LINE(obj-id-or-unborn SP refname *(SP ref-attribute) LF)
//   ref-attribute = (symref | peeled)
//   symref = "symref-target:" symref-target
//   peeled = "peeled:" obj-id
import { FLUSH_PKT } from "./pkt-line.ts";
import { peelRefs, type RepoSnapshot, resolveHead } from "./repo-snapshot.ts";
import { TimeSlice } from "./time-slice.ts";
import { GitError } from "./types.ts";

/** This many prefixes or more and git ignores them all (ls-refs.c TOO_MANY_PREFIXES): every ref is sent. */
const TOO_MANY_PREFIXES = 65536;

/**
 * A test "does some prefix start this name" in O(log n): the prefixes sorted, those that extend
 * another dropped. Then the only candidate for a name is the greatest prefix not after it
 * (anything sorting between a matching prefix and the name starts with that prefix).
 */
export function prefixMatcher(prefixes: string[]): (name: string) => boolean {
  if (prefixes.length === 0) return () => true;
  const sorted = [...prefixes].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const kept: string[] = [];
  for (const p of sorted) if (kept.length === 0 || !p.startsWith(kept[kept.length - 1]!)) kept.push(p);
  return (name) => {
    // The last prefix <= name.
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (kept[mid]! <= name) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 && name.startsWith(kept[lo - 1]!);
  };
}

/** Answer an ls-refs request with `args`; `line` writes one pkt-line. */
export async function lsRefs(
  snapshot: RepoSnapshot,
  args: string[],
  line: (text: string) => Promise<void>,
  write: (bytes: Uint8Array) => Promise<void>,
): Promise<void> {
  let symrefs = false;
  let peel = false;
  let unborn = false;
  let prefixes: string[] = [];
  for (const arg of args) {
    if (arg === "symrefs") symrefs = true;
    else if (arg === "peel") peel = true;
    else if (arg === "unborn") unborn = true;
    else if (arg.startsWith("ref-prefix ")) prefixes.push(arg.slice(11));
    else throw new GitError(`ls-refs: unexpected line: '${arg}'`, "protocol");
  }
  if (prefixes.length >= TOO_MANY_PREFIXES) prefixes = [];
  const matches = prefixMatcher(prefixes);
  const slice = new TimeSlice();

  const refs = await peelRefs(snapshot);
  if (snapshot.head && matches("HEAD")) {
    const head = resolveHead(snapshot);
    const target = symrefs ? ` symref-target:${snapshot.head}` : "";
    if (head) {
      const peeled = refs.find((r) => r.name === head.name)?.peeled;
      await line(`${head.oid} HEAD${target}${peel && peeled ? ` peeled:${peeled}` : ""}`);
    } else if (unborn) {
      await line(`unborn HEAD${target}`);
    }
  }
  for (const r of refs) {
    await slice.tick();
    if (!matches(r.name)) continue;
    await line(`${r.oid} ${r.name}${peel && r.peeled ? ` peeled:${r.peeled}` : ""}`);
  }
  await write(FLUSH_PKT);
}
