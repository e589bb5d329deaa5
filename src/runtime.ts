// Composition root: config → db → storage → services → http + ssh + workers.
import { BlameCache } from "./services/git/blame.ts";
import { ByteLru } from "./storage/lru.ts";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "./config.ts";
import { openDatabase } from "./db/open.ts";
import { gitHandler } from "./http/git.ts";
import { HighlightThread } from "./http/web/repos/highlight.ts";
import { startHttp } from "./http/server.ts";
import type { SshServer } from "./ssh/server.ts";
import { createLogger } from "./log.ts";
import { createMailTransport } from "./mail/index.ts";
import { warmAuth } from "./services/people/auth.ts";
import type { Ctx } from "./services/context.ts";
import { FactCache } from "./services/access/fact-cache.ts";
import { GitStore } from "./services/git/snapshot.ts";
import { flushTokenUse } from "./services/people/token-use.ts";
import { createObjectStore } from "./storage/index.ts";
import { instrumentContext, instrumentStore } from "./services/ops/instrument.ts";
import { Telemetry } from "./services/telemetry/instrument.ts";
import { ConfigError } from "./config.ts";
import { createThreads } from "./threads.ts";
import pkg from "../package.json" with { type: "json" };
import { ClaimHub, claimHub } from "./services/ci/claim.ts";
import { usageBuffer } from "./services/metrics/record.ts";
import { contributionCache } from "./services/discovery/contributions.ts";
import { newLimiters } from "./services/people/throttle.ts";
import { billingProvider } from "./services/billing/configured.ts";
import { AppTokens } from "./services/mirrors/app-auth.ts";
import { Stamps } from "./util/stamps.ts";
import { now } from "./util/clock.ts";
import { flushRunnerSeen } from "./services/ci/credentials.ts";
import { flushHeartbeats } from "./services/ci/job-calls.ts";
import { flushMetrics } from "./services/metrics/record.ts";
import { EventBus } from "./services/events/bus.ts";
import { PgSignals } from "./services/events/pg-signals.ts";
import { LocalSignals, type Signals } from "./services/events/signals.ts";
import { WorkEngine } from "./services/jobs/engine.ts";
import { domainResolvers, wire } from "./wiring.ts";
import { writeServeLock } from "./services/ops/serve-lock.ts";
import { DiffCache } from "./services/git/diff-cache.ts";
import { anchorCache } from "./services/changes/anchor-cache.ts";
import { DispatchCache } from "./services/ci/dispatch-cache.ts";

/** Bytes of rendered READMEs the context keeps (ctx.caches.readmes): a few thousand typical READMEs. */
const README_CACHE_BYTES = 16 * 1024 * 1024;

/** Opens the data dir, database (migrated) and object store: what every command needs. */
export async function openContext(config: Config): Promise<Ctx & { close(): void }> {
  const log = createLogger(config.logLevel);
  const { db, probes, channel, close } = await openDatabase(config);
  // Every store call is timed for /metrics; the store's own counters pass through.
  // The context's metrics: the store's calls are timed into its registry from the start.
  const telemetry = new Telemetry();
  const store = instrumentStore(telemetry.registry, await createObjectStore(config.storage));
  const tmpDir = join(config.dataDir, "tmp");
  mkdirSync(tmpDir, { recursive: true });
  const baseUrl = config.baseUrl ?? `http://${config.httpHost.includes(":") ? `[${config.httpHost}]` : config.httpHost}:${config.httpPort}`;
  const sshPublic = config.ssh ? (config.ssh.publicAddr ?? `${config.ssh.host}:${config.ssh.port}`) : null;
  // SVC_GIT_CACHE: half for the event loop's git caches, half split between the threads' (services/git/upload.ts).
  const threads = createThreads();
  // Across nodes on PostgreSQL (NOTIFY/LISTEN); within the process on SQLite.
  const signals: Signals = channel ? new PgSignals(db, channel, (what, error) => log.warn(what, { error: String(error) })) : new LocalSignals(db);
  const highlighter = new HighlightThread();
  const closeAll = () => {
    highlighter.close();
    void signals.close();
    threads.close();
    close();
  };
  const ctx: Ctx & { close(): void } = {
    db,
    config,
    baseUrl,
    sshPublic,
    store,
    facts: new FactCache(probes),
    resolvers: domainResolvers(),
    git: new GitStore(store, Math.floor(config.gitCacheBytes / 2)),
    threads,
    tmpDir,
    log,
    mail: createMailTransport(config.mail),
    events: new EventBus(() => ctx),
    signals,
    work: new WorkEngine(
      db,
      signals,
      () => ctx,
      () => ctx.log,
    ),
    close: closeAll,
    ci: { claims: new ClaimHub(() => ctx, telemetry.registry, signals), machines: new Map(), logSecrets: new Map() },
    buffers: { tokenUse: new Stamps(0), runnerSeen: new Stamps(now()), heartbeats: new Stamps(), usage: usageBuffer() },
    caches: {
      contributions: contributionCache(),
      appTokens: new AppTokens(),
      diffs: new DiffCache(),
      anchors: anchorCache(),
      dispatchable: new DispatchCache(),
      blames: new BlameCache(),
      readmes: new ByteLru<string, string>(README_CACHE_BYTES, (markup, key) => 64 + 2 * (markup.length + key.length)),
    },
    throttles: newLimiters(config.limits),
    billing: billingProvider(config),
    auth: { dummyHash: null },
    telemetry,
    uploads: { spooledUnsent: 0, copiedBytes: 0 },
    highlighter,
  };
  // Subscribers, job kinds and resolvers (src/wiring.ts).
  wire(ctx);
  return ctx;
}

/**
 * A listen failure as a configuration error naming the setting to change (the CLI prints it as
 * one line and exits 2), or null for any other error.
 */
export function listenProblem(error: unknown, setting: string, addr: string): ConfigError | null {
  const code = (error as { code?: string } | null)?.code;
  if (code === "EADDRINUSE") return new ConfigError(`${setting}: ${addr} is already in use (another svc running?); set ${setting} to a free host:port`);
  if (code === "EACCES") return new ConfigError(`${setting}: no permission to listen on ${addr}; use a port above 1023 or grant CAP_NET_BIND_SERVICE`);
  if (code === "EADDRNOTAVAIL") return new ConfigError(`${setting}: ${addr} is not an address of this machine; set ${setting} to one that is (or 0.0.0.0)`);
  return null;
}

function hostPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** `svc serve`: starts everything and resolves when a signal has drained the server. */
export async function serve(config: Config): Promise<void> {
  const ctx = await openContext(config);
  const uninstrument = instrumentContext(ctx, pkg.version);
  await warmAuth(ctx);
  // One thread started ahead of the first push, so it does not pay the modules' load; a pool that
  // cannot start (a binary built without its entry point) is a boot failure, not a failed push.
  await ctx.threads.run("pool.echo", null, { timeLimitMs: 10_000 }).catch((error) => {
    ctx.close();
    throw new ConfigError(`worker threads do not start: ${String(error)}`);
  });
  let server: ReturnType<typeof startHttp>;
  try {
    server = startHttp(ctx, { hostname: config.httpHost, port: config.httpPort, git: gitHandler(ctx) });
  } catch (error) {
    ctx.close();
    throw listenProblem(error, "SVC_HTTP_ADDR", hostPort(config.httpHost, config.httpPort)) ?? error;
  }
  // With port 0 (or no SVC_BASE_URL) the public address is what we actually bound.
  if (!config.baseUrl) ctx.baseUrl = `http://${hostPort(config.httpHost, server.port!)}`;
  let ssh: SshServer | null = null;
  if (config.ssh) {
    // Loaded only when SSH is on: ssh2's crypto keeps a WebAssembly module alive (~70 MB of heap headroom).
    const { startSsh } = await import("./ssh/server.ts");
    try {
      ssh = await startSsh(ctx, config.ssh);
    } catch (error) {
      await server.stop(true);
      ctx.close();
      throw listenProblem(error, "SVC_SSH_ADDR", hostPort(config.ssh.host, config.ssh.port)) ?? error;
    }
    if (!config.ssh.publicAddr) ctx.sshPublic = hostPort(config.ssh.host, ssh.port);
    for (const k of ssh.fingerprints) process.stdout.write(`ssh host key ${k.type} ${k.fingerprint}\n`);
  }
  // Every kind of background work (src/wiring.ts): one dispatcher, the periodic kinds, the sweeper.
  ctx.work.start();
  // The pid of this server in the data dir, so `svc migrate-db` refuses while it runs.
  const unlock = writeServeLock(config.dataDir);
  process.once("exit", unlock);
  const stopped = new Promise<void>((resolve) => {
    const shutdown = async (signal: string) => {
      ctx.log.info("shutting down", { signal, drain_ms: config.drainMs });
      // Waiting claims answer 204 now, so draining does not wait out their long poll.
      claimHub(ctx).stop();
      // Drain (rolling upgrades, issue 27): /readyz answers 503 for SVC_DRAIN_MS while requests
      // are still served, so a balancer's health check takes the node out before it refuses connections.
      ctx.draining = true;
      if (config.drainMs > 0) await new Promise((r) => setTimeout(r, config.drainMs));
      // Why: stop(false) stops accepting and waits for in-flight requests to finish.
      await Promise.all([server.stop(false), ssh?.close()]);
      // Attempts in flight are aborted; those that honour it are given back uncounted (a webhook
      // attempt, a mirror sync), the others finish and record their outcome.
      await ctx.work.stop();
      await flushHeartbeats(ctx).catch(() => undefined);
      await flushRunnerSeen(ctx).catch(() => undefined);
      await flushTokenUse(ctx);
      await flushMetrics(ctx).catch((error) => ctx.log.warn("metrics not recorded", { error: String(error) }));
      uninstrument();
      ctx.close();
      unlock();
      resolve();
    };
    process.once("SIGTERM", () => void shutdown("SIGTERM"));
    process.once("SIGINT", () => void shutdown("SIGINT"));
  });
  // Handlers first, then the ready line: a signal right after it must drain, not kill.
  const sshHost = config.ssh?.host.includes(":") ? `[${config.ssh.host}]` : config.ssh?.host;
  process.stdout.write(`listening http=${ctx.baseUrl} ssh=${ssh ? `${sshHost}:${ssh.port}` : "off"}\n`);
  await stopped;
}
