// Signals across nodes over PostgreSQL (issue 27, plan-27 §2 row 4): local delivery after COMMIT
// exactly as LocalSignals, plus, after COMMIT, `pg_notify('svc', '<node>|<topic>|<key>')` on the
// pool (never inside the write transaction: NOTIFY takes a commit-time global lock), coalesced per
// topic:key over COALESCE_MS. One LISTEN on channel `svc` (the driver's dedicated connection,
// re-listened by the driver after a reconnect); each (re)listen sends every subscriber a synthetic
// "look again" (key ANY_KEY), so what was announced while the connection was down is not lost.
// This node's own notifications come back too and are ignored: they were delivered locally.
import { randomUUID } from "node:crypto";
import type { Database, Tx } from "../../db/database.ts";
import type { NotifyChannel } from "../../db/open.ts";
import { ANY_KEY, LocalSignals, type Signals, type Topic } from "./signals.ts";

/** The PostgreSQL channel every node listens on. */
export const CHANNEL = "svc";
/** Identical topic:key notifications within this window are sent once. */
export const COALESCE_MS = 10;
const TOPICS: readonly Topic[] = ["work", "ci.queue", "facts"];

export class PgSignals implements Signals {
  /** This node's id, the first field of every payload it sends. */
  readonly nodeId = randomUUID();
  private readonly local: LocalSignals;
  private readonly pending = new Map<string, string>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private listening: Promise<{ unlisten(): Promise<void> } | null>;
  private closed = false;
  /** Whether the LISTEN connection is up now (svc_db_listen_connected). */
  listenConnected = false;
  /** Notifications received from other nodes, by topic (svc_db_notify_received_total). */
  readonly notifyReceived = new Map<Topic, number>();

  constructor(
    private readonly db: Database,
    private readonly channel: NotifyChannel,
    private readonly onError: (what: string, error: unknown) => void = () => {},
  ) {
    this.local = new LocalSignals(db);
    this.listening = channel
      .listen(
        CHANNEL,
        (payload) => this.received(payload),
        () => {
          this.listenConnected = true;
          this.lookAgain();
        },
        () => {
          this.listenConnected = false;
        },
      )
      .catch((error) => {
        // Why: the pollers stay the bound; the driver's reconnect only covers an established LISTEN.
        this.onError("LISTEN svc failed", error);
        return null;
      });
  }

  /** Resolves once the first LISTEN is acknowledged (or failed). */
  async ready(): Promise<void> {
    await this.listening;
  }

  notify(topic: Topic, key: string, tx?: Tx): void {
    this.local.notify(topic, key, tx);
    this.db.afterCommit(tx, () => this.send(topic, key));
  }

  subscribe(topic: Topic, fn: (key: string) => void): () => void {
    return this.local.subscribe(topic, fn);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listenConnected = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending.clear();
    await this.local.close();
    const sub = await this.listening;
    await sub?.unlisten().catch(() => {});
  }

  private send(topic: Topic, key: string): void {
    if (this.closed) return;
    const payload = `${this.nodeId}|${topic}|${key}`;
    this.pending.set(payload, payload);
    this.timer ??= setTimeout(() => this.flush(), COALESCE_MS);
  }

  private flush(): void {
    this.timer = null;
    const payloads = [...this.pending.keys()];
    this.pending.clear();
    if (this.closed) return;
    for (const p of payloads) this.channel.notify(CHANNEL, p).catch((error) => this.onError("NOTIFY svc failed", error));
  }

  private received(payload: string): void {
    const a = payload.indexOf("|");
    const b = a < 0 ? -1 : payload.indexOf("|", a + 1);
    if (b < 0 || payload.slice(0, a) === this.nodeId) return;
    const topic = payload.slice(a + 1, b) as Topic;
    if (!TOPICS.includes(topic)) return;
    this.notifyReceived.set(topic, (this.notifyReceived.get(topic) ?? 0) + 1);
    this.local.notify(topic, payload.slice(b + 1));
  }

  /** After a (re)LISTEN: anything may have been announced while nobody listened. */
  private lookAgain(): void {
    for (const topic of TOPICS) this.local.notify(topic, ANY_KEY);
  }
}
