// Which TCP connections the SSH server takes on: at most `total` that have not authenticated yet,
// and at most `perSource` of those from one source address (an IPv6 /64 counts as one). Counted
// from the moment the connection is accepted, before the client sends a byte, and released when
// it authenticates or closes; a connection that has not authenticated in time is closed.
//
// Why both caps: the total bounds the work of unfinished handshakes (key exchange costs CPU), and
// the per-source cap keeps one client from filling the total and locking every user out.
import type { Socket } from "node:net";
import { sourceKey } from "../services/people/throttle.ts";

/** A connection being counted until it authenticates or closes. */
export interface Pending {
  /** The connection authenticated: it no longer counts (idempotent). */
  authenticated(): void;
}

/** Admission of unauthenticated connections. */
export class Admission {
  private total = 0;
  private readonly bySource = new Map<string, number>();
  private readonly byPeer = new Map<string, Pending>();

  constructor(private readonly limits: { total: number; perSource: number; authTimeoutMs: number }) {}

  /** Takes `socket` on (its Pending) or refuses it (null: the caller closes it). */
  admit(socket: Socket): Pending | null {
    const address = socket.remoteAddress ?? "unknown";
    const source = sourceKey(address);
    const fromSource = this.bySource.get(source) ?? 0;
    if (this.total >= this.limits.total || fromSource >= this.limits.perSource) return null;
    this.total++;
    this.bySource.set(source, fromSource + 1);
    const peer = `${address}|${socket.remotePort}`;
    let counted = true;
    const release = () => {
      if (!counted) return;
      counted = false;
      clearTimeout(timer);
      this.byPeer.delete(peer);
      this.total--;
      const left = (this.bySource.get(source) ?? 1) - 1;
      if (left > 0) this.bySource.set(source, left);
      else this.bySource.delete(source);
    };
    const timer = setTimeout(() => socket.destroy(), this.limits.authTimeoutMs);
    const pending: Pending = { authenticated: release };
    this.byPeer.set(peer, pending);
    socket.once("close", release);
    return pending;
  }

  /** The pending connection from `ip`:`port` (what the SSH library reports), if it is still counted. */
  pendingFor(ip: string | undefined, port: number | undefined): Pending | null {
    return this.byPeer.get(`${ip ?? "unknown"}|${port}`) ?? null;
  }

  /** Connections counted now (for tests and metrics). */
  get unauthenticated(): number {
    return this.total;
  }
}
