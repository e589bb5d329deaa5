// Composition root: config → db → storage → services → http + ssh + workers.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "./config.ts";
import { epochProbes, migrate, openDatabase } from "./db/client.ts";
import { gitHandler } from "./http/git.ts";
import { startHttp } from "./http/server.ts";
import type { SshServer } from "./ssh/server.ts";
import { createLogger } from "./log.ts";
import { createMailTransport } from "./mail/index.ts";
import { warmAuth } from "./services/people/auth.ts";
import type { Ctx } from "./services/context.ts";
import { FactCache } from "./services/access/fact-cache.ts";
import { GitStore } from "./services/git/snapshot.ts";
import { compactRepo, gcRepo, scheduleGcPass, sweepRepo } from "./services/git/maintenance.ts";
import { startMailWorker } from "./services/mail/outbox.ts";
import { purgeRepoStorage } from "./services/repos/purge.ts";
import { flushTokenUse } from "./services/people/token-use.ts";
import { createObjectStore } from "./storage/index.ts";
import { startWorkers } from "./services/jobs/worker.ts";
import { subscribeToEvents } from "./services/hooks/events.ts";
import { claimHub } from "./services/ci/claim.ts";
import { startCiSweeper } from "./services/ci/sweeper.ts";
import { enqueueTriggers, onTriggerQueued, runTrigger } from "./services/ci/trigger.ts";

/** Opens the data dir, database (migrated) and object store: what every command needs. */
export async function openContext(config: Config): Promise<Ctx & { close(): void }> {
  const log = createLogger(config.logLevel);
  const { db, sqlite, close } = openDatabase(config.dataDir);
  migrate(sqlite);
  // A push writes its CI triggers in its own transaction (services/ci/trigger.ts).
  subscribeToEvents("ci", enqueueTriggers);
  const store = await createObjectStore(config.storage);
  const tmpDir = join(config.dataDir, "tmp");
  mkdirSync(tmpDir, { recursive: true });
  const baseUrl = config.baseUrl ?? `http://${config.httpHost.includes(":") ? `[${config.httpHost}]` : config.httpHost}:${config.httpPort}`;
  const sshPublic = config.ssh ? (config.ssh.publicAddr ?? `${config.ssh.host}:${config.ssh.port}`) : null;
  return { db, config, baseUrl, sshPublic, store, facts: new FactCache(epochProbes(db, sqlite)), git: new GitStore(store), tmpDir, log, mail: createMailTransport(config.mail), close };
}

/** `svc serve`: starts everything and resolves when a signal has drained the server. */
export async function serve(config: Config): Promise<void> {
  const ctx = await openContext(config);
  await warmAuth();
  const server = startHttp(ctx, { hostname: config.httpHost, port: config.httpPort, git: gitHandler(ctx) });
  // With port 0 (or no SVC_BASE_URL) the public address is what we actually bound.
  if (!config.baseUrl) ctx.baseUrl = `http://${config.httpHost.includes(":") ? `[${config.httpHost}]` : config.httpHost}:${server.port}`;
  let ssh: SshServer | null = null;
  if (config.ssh) {
    // Loaded only when SSH is on: ssh2's crypto keeps a WebAssembly module alive (~70 MB of heap headroom).
    const { startSsh } = await import("./ssh/server.ts");
    ssh = await startSsh(ctx, config.ssh);
    if (!config.ssh.publicAddr) ctx.sshPublic = `${config.ssh.host.includes(":") ? `[${config.ssh.host}]` : config.ssh.host}:${ssh.port}`;
    for (const k of ssh.fingerprints) process.stdout.write(`ssh host key ${k.type} ${k.fingerprint}\n`);
  }
  const workers = startWorkers(ctx, {
    "repo.purge": purgeRepoStorage,
    "repo.compact": async (c, p) => void (await compactRepo(c, p)),
    "repo.gc": async (c, p) => void (await gcRepo(c, p)),
    "repo.sweep": async (c, p) => void (await sweepRepo(c, p)),
  });
  const mailWorker = startMailWorker(ctx);
  // CI: its own worker loop, woken the moment a push queues a trigger, and the timeout sweeper.
  const ciWorkers = startWorkers(ctx, { "ci.trigger": runTrigger });
  onTriggerQueued(ciWorkers.poke);
  const ciSweeper = startCiSweeper(ctx);
  // The periodic GC pass: one pack of everything reachable per repository, every six hours.
  const gcTimer = setInterval(() => void scheduleGcPass(ctx).catch((error) => ctx.log.error("gc pass failed", { error: String(error) })), 6 * 3600 * 1000);
  const stopped = new Promise<void>((resolve) => {
    const shutdown = async (signal: string) => {
      ctx.log.info("shutting down", { signal });
      // Waiting claims answer 204 now, so draining does not wait out their long poll.
      claimHub(ctx).stop();
      // Why: stop(false) stops accepting and waits for in-flight requests to finish.
      await Promise.all([server.stop(false), ssh?.close()]);
      clearInterval(gcTimer);
      onTriggerQueued(null);
      await Promise.all([workers.stop(), mailWorker.stop(), ciWorkers.stop(), ciSweeper.stop()]);
      await flushTokenUse(ctx);
      ctx.close();
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
