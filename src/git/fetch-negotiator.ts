// The client side of have negotiation: which commits to offer as `have`, newest first, and what
// an ACK tells us (git's default negotiator, negotiator/default.c).
//
// From gitprotocol-pack(5):
//
//   the client ... send[s] "have" lines for the objects it has, starting with the most recent
//   ... once the client has received an ACK for a "have", it ... stops sending "have" lines for
//   the ancestors of that commit, since the server already knows they are common.
//
// The walk starts at the local ref tips and pops commits by committer time. A commit the server
// acknowledged is COMMON and so are its ancestors: they are never offered, and the walk ends when
// only common commits are left in the queue.
import { CommitCache, CommitQueue } from "./revision.ts";
import type { Oid } from "./types.ts";

const SEEN = 1;
const COMMON = 2;
const POPPED = 4;

/** Offers the commits of a local object store as haves and learns from ACKs. */
export class HaveWalker {
  private readonly queue = new CommitQueue();
  private readonly flags = new Map<Oid, number>();
  /** Commits in the queue that are not known to be common (git's non_common_revs). */
  private nonCommon = 0;

  constructor(private readonly cache: CommitCache) {}

  /** Starts the walk at a local ref tip (tags are peeled; anything but a commit is ignored). */
  async addTip(oid: Oid): Promise<void> {
    const peeled = await this.cache.peel(oid);
    if (!peeled || peeled.type !== "commit") return;
    await this.enqueue(peeled.oid, 0);
  }

  /** Up to `max` more commits to offer, newest first; empty when there is nothing left worth offering. */
  async next(max: number): Promise<Oid[]> {
    const out: Oid[] = [];
    while (out.length < max && this.nonCommon > 0) {
      const node = this.queue.pop();
      if (!node) break;
      const f = this.flags.get(node.oid)!;
      this.flags.set(node.oid, f | POPPED);
      const common = (f & COMMON) !== 0;
      if (!common) {
        this.nonCommon--;
        out.push(node.oid);
      }
      for (const p of node.parents) await this.enqueue(p, common ? COMMON : 0);
    }
    return out;
  }

  /** The server said it has `oid`: it and everything below it that we walked are common. */
  ack(oid: Oid): void {
    const stack = [oid];
    while (stack.length > 0) {
      const c = stack.pop()!;
      const f = this.flags.get(c);
      if (f === undefined || f & COMMON) continue;
      this.flags.set(c, f | COMMON);
      if (!(f & POPPED)) this.nonCommon--;
      const node = this.cache.known(c);
      if (node) for (const p of node.parents) if (this.flags.has(p)) stack.push(p);
    }
  }

  /** Queues a commit once (missing commits are skipped: a shallow or partial local history). */
  private async enqueue(oid: Oid, mark: number): Promise<void> {
    const f = this.flags.get(oid);
    if (f !== undefined) {
      if (mark & COMMON && !(f & COMMON)) this.ack(oid);
      return;
    }
    const node = await this.cache.lookup(oid).catch(() => null);
    if (!node) return;
    this.flags.set(oid, SEEN | mark);
    if (!(mark & COMMON)) this.nonCommon++;
    this.queue.push(node);
  }
}
