// The server side of have/ACK negotiation: which haves are common, and when the server
// has seen enough to stop ("ok to give up": every want reaches a commit the client has).
//
// From gitprotocol-pack(5):
//
//   upload-haves      =  have-list
//                        compute-end
//   have-list         =  *have-line
//   have-line         =  PKT-LINE("have" SP obj-id)
//   compute-end       =  flush-pkt / PKT-LINE("done")
//
//   server-response = *ack_multi ack / nak
//   ack_multi       = PKT-LINE("ACK" SP obj-id ack_status)
//   ack_status      = "continue" / "common" / "ready"
//   ack             = PKT-LINE("ACK" SP obj-id)
//   nak             = PKT-LINE("NAK")
import { type CommitCache } from "./revision.ts";
import type { Oid } from "./types.ts";

/** Commits the "ok to give up" walks of one request may visit in all. */
export const GIVE_UP_WALK_LIMIT = 200_000;

/** What the server learned about the client's objects (git's THEY_HAVE marks and have_obj). */
export class CommonCommits {
  /** Commits the client has, and their parents (THEY_HAVE). */
  private readonly theyHave = new Set<Oid>();
  /** Wants already known to reach a THEY_HAVE commit. */
  private readonly satisfied = new Set<Oid>();
  /** Objects the client has that we have too, in order: the "--not" side of the pack walk. */
  readonly haves: Oid[] = [];
  private oldestHave = 0;
  /** Bumped whenever theyHave grows or oldestHave moves: the only inputs of okToGiveUp. */
  private epoch = 0;
  /** The epoch of the last okToGiveUp that answered false (the same question gets the same answer). */
  private failedAt = -1;
  /**
   * Commits okToGiveUp may still visit in this request. Why: a client alternating haves we know
   * with haves we do not would make every call walk again; past this, "ready" is simply not sent
   * early (the client goes on until it says done, and the pack is the same).
   */
  private walkLeft = GIVE_UP_WALK_LIMIT;

  constructor(private readonly cache: CommitCache) {}

  /** Record a have line: -1 when we lack the object, 1 when it is newly common, 0 when already known. */
  async gotOid(oid: Oid): Promise<-1 | 0 | 1> {
    const head = await this.cache.reader.readHeader(oid);
    if (!head) return -1;
    let knew = false;
    if (head.type === "commit") {
      const node = await this.cache.get(oid);
      const before = this.theyHave.size;
      if (this.theyHave.has(oid)) knew = true;
      else this.theyHave.add(oid);
      if (this.oldestHave === 0 || node.time < this.oldestHave) {
        this.oldestHave = node.time;
        this.epoch++;
      }
      for (const p of node.parents) this.theyHave.add(p);
      if (this.theyHave.size !== before) this.epoch++;
    }
    if (knew) return 0;
    this.haves.push(oid);
    return 1;
  }

  /** True when every want reaches a commit the client has, through commits not older than its oldest have. */
  async okToGiveUp(wants: Oid[]): Promise<boolean> {
    if (this.haves.length === 0 || this.failedAt === this.epoch || this.walkLeft <= 0) return false;
    for (const want of wants) {
      if (this.satisfied.has(want)) continue;
      const p = await this.cache.peel(want);
      if (!p || p.type !== "commit" || (await this.reaches(p.oid))) {
        this.satisfied.add(want);
        continue;
      }
      this.failedAt = this.epoch;
      return false;
    }
    return true;
  }

  private async reaches(start: Oid): Promise<boolean> {
    const stack = [start];
    const visited = new Set<Oid>([start]);
    while (stack.length > 0) {
      if (--this.walkLeft < 0) return false;
      const oid = stack.pop()!;
      if (this.theyHave.has(oid)) return true;
      const node = await this.cache.lookup(oid);
      if (!node) continue;
      for (const p of node.parents) {
        if (visited.has(p)) continue;
        visited.add(p);
        if (this.theyHave.has(p)) return true;
        const pn = await this.cache.lookup(p);
        if (pn && pn.time >= this.oldestHave) stack.push(p);
      }
    }
    return false;
  }
}
