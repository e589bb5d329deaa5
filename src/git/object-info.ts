// The v2 object-info command: object sizes without fetching the objects.
//
// From gitprotocol-v2(5):
//
//   An object-info request takes the following arguments:
//     size          Requests size information to be returned for each listed object id.
//     oid <oid>     Indicates to the server an object which the client wants to obtain
//                   information for.
//
//   output = info flush-pkt
//   info = PKT-LINE(attrs) LF) *PKT-LINE(obj-info LF)
//   attrs = attr | attrs SP attrs
//   attr = "size"
//   obj-info = obj-id SP obj-size
import { isOid } from "./oid.ts";
import { FLUSH_PKT } from "./pkt-line.ts";
import type { RepoSnapshot } from "./repo-snapshot.ts";
import { TimeSlice } from "./time-slice.ts";
import { GitError } from "./types.ts";

/**
 * Answer an object-info request; an unknown object gets an empty size, as git answers, and so
 * does one the repository's tips do not reach (with the snapshot's reachability index): what may
 * not be fetched is not described either.
 */
export async function objectInfo(
  snapshot: RepoSnapshot,
  args: string[],
  line: (text: string) => Promise<void>,
  write: (bytes: Uint8Array) => Promise<void>,
): Promise<void> {
  let size = false;
  const oids: string[] = [];
  for (const arg of args) {
    if (arg === "size") size = true;
    else if (arg.startsWith("oid ") && isOid(arg.slice(4))) oids.push(arg.slice(4));
    else throw new GitError(`object-info: unexpected line: '${arg}'`, "protocol");
  }
  if (size) await line("size");
  const slice = new TimeSlice();
  // One walk answers the usual request (everything reachable); only then are ids asked one by one.
  const index = size && snapshot.reach ? await snapshot.reach() : null;
  const allReachable = !index || (await index.firstUnreachable(snapshot.objects, oids)) === null;
  for (const oid of oids) {
    await slice.tick();
    if (!size) {
      await line(oid);
      continue;
    }
    const reachable = allReachable || snapshot.refs.some((r) => r.oid === oid) || (await index!.firstUnreachable(snapshot.objects, [oid])) === null;
    const head = reachable ? await snapshot.objects.readHeader(oid) : null;
    await line(head ? `${oid} ${head.size}` : `${oid} `);
  }
  await write(FLUSH_PKT);
}
