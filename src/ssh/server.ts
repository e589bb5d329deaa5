// The SSH front door (ssh2): public-key authentication resolved against the database on every
// connection, and exec of git-upload-pack / git-receive-pack into the same engine as HTTP.
//
//   ssh://git@host:port/org/repo.git  →  exec "git-upload-pack 'org/repo.git'" (or '/org/repo.git')
//   env GIT_PROTOCOL=version=2 selects protocol v2 for upload-pack.
//
// The command and GIT_PROTOCOL are parsed by git/service-request.ts and served by the git
// service; this file only renders its outcome as an exit code and stderr text.
import { once } from "node:events";
import { createServer, type AddressInfo } from "node:net";
import ssh2 from "ssh2";
import constants from "ssh2/lib/protocol/constants.js";
import { parseSshCommand, protocolVersion, type GitService } from "../git/service-request.ts";
import type { Ctx } from "../services/context.ts";
import { serveGit, type GitOutcome, type ServiceIO } from "../services/git/serve.ts";
import type { Principal } from "../services/access/principal.ts";
import { fingerprintOf, principalForKey } from "../services/people/ssh-keys.ts";
import { authenticateLfs, parseLfsCommand } from "../services/lfs/lfs.ts";
import { AppError } from "../errors.ts";
import { Admission } from "./admission.ts";
import { nodeHostKeys } from "./host-keys.ts";

const { Server, utils } = ssh2 as unknown as typeof import("ssh2");
// What this ssh2 build can do (chacha20-poly1305 needs its optional native binding).
const SUPPORTED = constants as unknown as Record<string, string[]>;

/** Seconds a connection may take to authenticate. */
const AUTH_TIMEOUT_MS = 30_000;
/** A connection with no traffic for this long is closed. */
const IDLE_TIMEOUT_MS = 10 * 60_000;
/** Bytes we let ssh2 queue on one channel before waiting for it to drain. */
const CHANNEL_QUEUE_BYTES = 256 * 1024;

// Modern algorithms only: no SHA-1 key exchange or MACs, no CBC ciphers, no DSA. One exception,
// kept on purpose: for an RSA host key ssh2 always adds `ssh-rsa` (RSA with SHA-1 signatures) at
// the lowest priority, and accepts `ssh-rsa` user signatures. Clients that speak rsa-sha2 or
// ed25519 (OpenSSH, libgit2, dulwich, go-git) never choose it; JSch-based clients (JGit 4.x, as
// Debian ships it) can verify nothing else, and test/blackbox/git/interop-jgit.test.ts pins that
// they connect. Dropping it needs an ECDSA host key first (JSch verifies ecdsa-sha2-nistp256).
const WANTED = {
  kex: [
    "curve25519-sha256",
    "curve25519-sha256@libssh.org",
    "ecdh-sha2-nistp256",
    "ecdh-sha2-nistp384",
    "ecdh-sha2-nistp521",
    "diffie-hellman-group16-sha512",
    "diffie-hellman-group14-sha256",
  ],
  cipher: ["chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr", "aes192-ctr", "aes256-ctr"],
  hmac: ["hmac-sha2-256-etm@openssh.com", "hmac-sha2-512-etm@openssh.com", "hmac-sha2-256", "hmac-sha2-512"],
  serverHostKey: ["ssh-ed25519", "rsa-sha2-512", "rsa-sha2-256"],
  compress: ["none"],
} as const;
const ALGORITHMS = {
  kex: WANTED.kex.filter((a) => SUPPORTED.SUPPORTED_KEX!.includes(a)),
  cipher: WANTED.cipher.filter((a) => SUPPORTED.SUPPORTED_CIPHER!.includes(a)),
  hmac: WANTED.hmac.filter((a) => SUPPORTED.SUPPORTED_MAC!.includes(a)),
  serverHostKey: WANTED.serverHostKey.filter((a) => SUPPORTED.SUPPORTED_SERVER_HOST_KEY!.includes(a)),
  compress: WANTED.compress,
} as const;

/** A running SSH server. */
export interface SshServer {
  port: number;
  fingerprints: { type: string; fingerprint: string }[];
  close(): Promise<void>;
}

/** Starts the SSH server on host:port (port 0 picks one). */
export async function startSsh(ctx: Ctx, addr: { host: string; port: number }): Promise<SshServer> {
  const hostKeys = await nodeHostKeys(ctx.db, ctx.config.dataDir);
  const { sshUnauthenticated, sshUnauthenticatedPerSource } = ctx.config.limits;
  const admission = new Admission({ total: sshUnauthenticated, perSource: sshUnauthenticatedPerSource, authTimeoutMs: AUTH_TIMEOUT_MS });

  const server = new Server({ hostKeys: hostKeys.map((k) => k.private), algorithms: ALGORITHMS as never, ident: "svc" }, (client, info) => {
    const pending = admission.pendingFor(info.ip, info.port);
    let who: { principal: Principal; name: string; fingerprint: string } | null = null;
    let idleTimer = setTimeout(() => client.end(), IDLE_TIMEOUT_MS);
    const touch = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => client.end(), IDLE_TIMEOUT_MS);
    };
    client.on("error", () => {});
    client.on("close", () => clearTimeout(idleTimer));

    client.on("authentication", async (auth) => {
      if (auth.method !== "publickey") return auth.reject(["publickey"]);
      const fingerprint = fingerprintOf(auth.key.data);
      ctx.facts.fresh();
      // Why: the key is looked up now, not cached, so a revoked key fails at its next connection.
      const found = await principalForKey(ctx, fingerprint).catch((error) => {
        ctx.log.error("ssh key lookup failed", { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
        return null;
      });
      if (!found) return auth.reject(["publickey"]);
      if (!auth.signature) return auth.accept(); // the client is asking whether we would accept this key
      const key = utils.parseKey(auth.key.data);
      if (key instanceof Error || !auth.blob || key.verify(auth.blob, auth.signature, auth.hashAlgo) !== true) return auth.reject(["publickey"]);
      who = { ...found, fingerprint };
      auth.accept();
    });

    client.on("ready", () => {
      pending?.authenticated();
      client.on("session", (acceptSession) => {
        const session = acceptSession();
        let gitProtocol = "";
        session.on("env", (accept, _reject, info) => {
          if (info.key === "GIT_PROTOCOL") gitProtocol = info.val;
          accept?.();
        });
        session.on("pty", (accept) => accept?.());
        session.on("window-change", (accept) => accept?.());
        session.on("subsystem", (_accept, reject) => reject?.());
        session.on("shell", (accept) => {
          const channel = accept();
          const name = who?.name ?? "there";
          channel.stderr.write(`Hi ${name}! You've successfully authenticated, but svc does not provide shell access.\r\n`);
          channel.exit(0);
          channel.end();
        });
        session.on("exec", (accept, _reject, info) => {
          const channel = accept();
          void runExec(ctx, who, info.command, gitProtocol, channel, touch).catch((error) => {
            ctx.log.error("ssh exec failed", { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
            finish(channel, 1, "svc: internal error\n");
          });
        });
      });
    });
  });

  // Connections are accepted here, counted from their first moment (before the client sends its
  // version line, which is when the SSH library would first see them), then handed to ssh2.
  const listener = createServer((socket) => {
    if (!admission.admit(socket)) {
      socket.on("error", () => {});
      socket.destroy();
      return;
    }
    server.injectSocket(socket);
  });
  listener.listen(addr.port, addr.host);
  await once(listener, "listening");
  const port = (listener.address() as AddressInfo).port;
  return {
    port,
    fingerprints: hostKeys.map((k) => ({ type: k.type, fingerprint: k.fingerprint })),
    async close() {
      await new Promise<void>((r) => listener.close(() => r()));
    },
  };
}

type Channel = import("ssh2").ServerChannel;

function finish(channel: Channel, code: number, stderr?: string): void {
  if (stderr) channel.stderr.write(stderr);
  channel.exit(code);
  channel.end();
}

/** Runs one exec request: a git service, or a clear refusal. */
async function runExec(
  ctx: Ctx,
  who: { principal: Principal; name: string; fingerprint: string } | null,
  command: string,
  gitProtocol: string,
  channel: Channel,
  touch: () => void,
): Promise<void> {
  const lfs = parseLfsCommand(command);
  if (lfs) return runLfs(ctx, who, lfs, channel);
  const parsed = parseSshCommand(command);
  if (!parsed) {
    return finish(channel, 1, `svc: unsupported command ${JSON.stringify(command.slice(0, 200))}; only git-upload-pack and git-receive-pack are available\n`);
  }
  // Re-resolve at exec time too: authority is what the database says now.
  ctx.facts.fresh();
  const now = who ? await principalForKey(ctx, who.fingerprint) : null;
  if (!now) return finish(channel, 1, "svc: this key is no longer authorized\n");
  async function* input(): AsyncIterable<Uint8Array> {
    // Why destroyOnReturn false: the default iterator destroys the channel at EOF, which would
    // close it before the exit status is sent (git then reports a transport error).
    const chunks = (channel as unknown as { iterator(o: { destroyOnReturn: boolean }): AsyncIterable<Uint8Array> }).iterator({ destroyOnReturn: false });
    for await (const chunk of chunks) {
      touch();
      yield chunk;
    }
  }
  const io: ServiceIO = {
    input: input(),
    write: async (chunk: Uint8Array) => {
      touch();
      // Why: ssh2 queues up to 2 MiB per channel before write() says stop, and then writes to the
      // socket without backpressure; bounding what we queue keeps memory per clone small.
      if (channel.writableLength < CHANNEL_QUEUE_BYTES) {
        channel.write(chunk);
        return;
      }
      // Past the bound: this chunk's callback fires once everything queued before it has gone out.
      await new Promise<void>((resolve, reject) => channel.write(chunk, (e?: Error | null) => (e ? reject(e) : resolve())));
    },
  };
  const outcome = await serveGit(ctx, now.principal, { ...parsed, protocol: protocolVersion(gitProtocol), io, stateless: false, via: "ssh" });
  finish(channel, outcome.kind === "served" ? 0 : 1, stderrOf(outcome, parsed));
}

/**
 * Git LFS over SSH: `git-lfs-authenticate` answers the LFS URL and a short-lived header as JSON on
 * stdout, with the authority the key has for git now. `git-lfs-transfer` (the pure-SSH protocol)
 * is refused at once, so the client falls back to git-lfs-authenticate and HTTP.
 */
async function runLfs(
  ctx: Ctx,
  who: { principal: Principal; name: string; fingerprint: string } | null,
  cmd: NonNullable<ReturnType<typeof parseLfsCommand>>,
  channel: Channel,
): Promise<void> {
  if (cmd.kind === "bad") return finish(channel, 1, `svc: ${cmd.message}\n`);
  if (cmd.kind === "transfer") return finish(channel, 1, "svc: git-lfs-transfer is not supported here; Git LFS falls back to git-lfs-authenticate and HTTPS\n");
  ctx.facts.fresh();
  const now = who ? await principalForKey(ctx, who.fingerprint) : null;
  if (!now) return finish(channel, 1, "svc: this key is no longer authorized\n");
  try {
    const answer = await authenticateLfs(ctx, { principal: now.principal, fingerprint: who!.fingerprint }, cmd);
    channel.write(`${JSON.stringify(answer)}\n`);
    finish(channel, 0);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    // Anything the key may not see is masked as not found, as for git itself.
    const masked = error.code === "not_found" || error.code === "unauthenticated";
    finish(channel, 1, masked ? `ERROR: repository '${cmd.org}/${cmd.repo}' not found\n` : `ERROR: ${error.message}\n`);
  }
}

/** What git prints for an outcome (on stderr, after "fatal:" or before the exit status). */
function stderrOf(outcome: GitOutcome, req: { service: GitService; org: string; repo: string }): string | undefined {
  switch (outcome.kind) {
    case "served":
      return undefined;
    case "failed":
      return "svc: internal error\n";
    case "refused":
      switch (outcome.refusal) {
        case "forbidden-in-band":
          return undefined; // git already printed the reason
        case "unauthenticated":
        case "not-found":
          // Anything the caller may not see is masked as not found (there is no anonymous SSH).
          return `ERROR: repository '${req.org}/${req.repo}' not found\n`;
        default:
          return `ERROR: ${outcome.message}\n`;
      }
  }
}
