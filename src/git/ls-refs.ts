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
 * A test "does some prefix start this name": the prefixes in a set, and each name's own prefixes
 * of the lengths that occur looked up in it (a few dozen lookups per ref, whatever the number of
 * prefixes). Built with yields: tens of thousands of prefixes are many strings to hash.
 */
export async function prefixMatcher(prefixes: string[], slice: TimeSlice = new TimeSlice()): Promise<(name: string) => boolean> {
  if (prefixes.length === 0) return () => true;
  const set = new Set<string>();
  const lengths = new Set<number>();
  for (const p of prefixes) {
    await slice.tick();
    set.add(p);
    lengths.add(p.length);
  }
  const sorted = [...lengths].sort((a, b) => a - b);
  return (name) => {
    for (const n of sorted) {
      if (n > name.length) return false;
      if (set.has(n === name.length ? name : name.slice(0, n))) return true;
    }
    return false;
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
  const slice = new TimeSlice();
  const matches = await prefixMatcher(prefixes, slice);

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
