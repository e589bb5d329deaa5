// What every service function receives: the database, configuration and public addresses.
import type { Config } from "../config.ts";
import type { Database } from "../db/database.ts";
import type { MailTransport } from "../mail/types.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import type { FactCache } from "./access/fact-cache.ts";
import type { Resolvers } from "./access/resolvers.ts";
import type { GitStore } from "./git/snapshot.ts";
import type { DiffCache } from "./git/diff-cache.ts";
import type { BlameCache } from "./git/blame.ts";
import type { AnchorCache } from "./changes/anchor-cache.ts";
import type { DispatchCache } from "./ci/dispatch-cache.ts";
import type { Threads } from "../threads.ts";
import type { EventBus } from "./events/bus.ts";
import type { Signals } from "./events/signals.ts";
import type { Work } from "./jobs/engine.ts";
import type { ClaimHub } from "./ci/claim.ts";
import type { KnownMachines } from "./ci/credentials.ts";
import type { UsageBuffer } from "./metrics/record.ts";
import type { Stamps } from "../util/stamps.ts";
import type { ByteLru } from "../storage/lru.ts";
import type { GraphCache } from "./discovery/graph.ts";
import type { AppTokens } from "./mirrors/app-auth.ts";
import type { Limiters } from "./people/throttle.ts";
import type { BillingProvider } from "./billing/provider.ts";
import type { Telemetry } from "./telemetry/instrument.ts";

/** Service context, built once by the composition root. */
export interface Ctx {
  db: Database;
  config: Config;
  /** Public base URL without trailing slash (SVC_BASE_URL or the bound address). */
  baseUrl: string;
  /** host:port written into ssh_clone_url, or null when SSH is off. */
  sshPublic: string | null;
  store: ObjectStore;
  /** Authority facts cached per database epoch (see fact-cache.ts). */
  facts: FactCache;
  /** What access asks the domains above it: credential kinds, quota (access/resolvers.ts). */
  resolvers: Resolvers;
  /** Caches over stored packs, shared by every request. */
  git: GitStore;
  /** Worker threads for work that grows with hostile input (src/util/thread-pool.ts). */
  threads: Threads;
  /** Scratch space for spooling packs (under the data dir). */
  tmpDir: string;
  log: Logger;
  /** The mail transport, or null for the null transport (every message dropped). */
  mail: MailTransport | null;
  /** The transactional event path: SPEC §6.1 events and internal events, subscribers wired in src/wiring.ts. */
  events: EventBus;
  /** Wake-ups (after COMMIT inside a transaction); never the only path. */
  signals: Signals;
  /** Durable background work: `enqueue` in the caller's transaction; kinds defined in src/wiring.ts. */
  work: Work;
  /** CI runtime state: the waiting claims of this process, machines whose credential was verified, and running jobs' secret values (log masking). */
  ci: { claims: ClaimHub; machines: KnownMachines; logSecrets: Map<string, readonly string[]> };
  /** Write-behind bookkeeping, flushed in batches and at shutdown (each write empties the fact cache). */
  buffers: { tokenUse: Stamps; runnerSeen: Stamps; heartbeats: Stamps; usage: UsageBuffer };
  /**
   * Caches of this context: written contribution graphs, app installation tokens, computed diffs; the runs list's dispatchable
   * workflows; rendered READMEs (the tree page's markup by blob id and link base: a blob never changes).
   */
  caches: {
    contributions: GraphCache;
    appTokens: AppTokens;
    diffs: DiffCache;
    anchors: AnchorCache;
    dispatchable: DispatchCache;
    blames: BlameCache;
    readmes: ByteLru<string, string>;
  };
  /** Sign-in and credential throttles (SVC_LIMIT_*). */
  throttles: Limiters;
  /** The payment provider, or null when the deployment sells nothing. */
  billing: BillingProvider | null;
  /** Sign-in: the dummy argon2id hash verified for unknown addresses (made on first use; serve warms it). */
  auth: { dummyHash: Promise<string> | null };
  /** This context's metrics registry (GET /metrics) and the request and operation series. */
  telemetry: Telemetry;
  /** Set by `svc serve` on SIGTERM: /readyz answers 503 so a balancer takes the node out before it stops accepting. */
  draining?: boolean;
  /** Unsent spool bytes of all large fetches together (services/git/upload.ts: past SVC_GIT_MAX_PUSH, a thread waits for its own client). */
  uploads: { spooledUnsent: number; copiedBytes: number };
  /** The file view's syntax highlighting: its thread, queue and cache (src/http/web/repos/highlight.ts); closed with the context. */
  highlighter: Highlighter;
}

/**
 * Syntax highlighting on a thread with a cache by key (blob id and language). Declared here
 * because services never import the web layer; HighlightThread in src/http/web/repos/highlight.ts
 * implements it.
 */
export interface Highlighter {
  /** The remembered markup lines of `key`: lines, null (shown plain from now on) or undefined (not yet known). */
  cached(key: string): string[] | null | undefined;
  /** The markup lines of `code` from the thread (null when it cannot, or not within the time limit), or undefined when the queue is full. */
  highlight(key: string, code: string, language: string, o: { timeLimitMs?: number; log?: Logger }): Promise<string[] | null> | undefined;
  /** Starts the thread ahead of the first file view. */
  warm(): void;
  /**
   * A value derived from highlighted markup (a diff's parsed lines per file) remembered by key, so
   * a warm page skips re-deriving it; undefined when not remembered. Optional: a highlighter
   * without it derives every time.
   */
  recall?(key: string): unknown;
  /** Remembers `value` (about `bytes` large) for `recall`. */
  remember?(key: string, value: unknown, bytes: number): void;
  /** Terminates the thread and answers the waiting files plain. */
  close(): void;
}

/** JSON-lines logger on stderr. */
export interface Logger {
  /** Whether lines at this level are written. */
  enabled(level: "debug" | "info" | "warn" | "error"): boolean;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
}

export type { MailMessage, MailTransport } from "../mail/types.ts";
export { now, setClock } from "../util/clock.ts";
