// Test-only: an in-memory git host over smart HTTP (Bun.serve on port 0) and over a fake
// ssh (a TCP server reached through GIT_SSH_COMMAND), backed by serveUploadPack and
// serveReceivePack, so the real git client can clone, fetch and push against them.
import { mkdtemp, rename } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { advertiseRefs } from "../../../src/git/advertise.ts";
import { openFileSource } from "../../../src/git/file-source.ts";
import { PackIndex } from "../../../src/git/pack-index.ts";
import type { IndexedPack } from "../../../src/git/pack-indexer.ts";
import { Pack } from "../../../src/git/pack-reader.ts";
import { PackSet } from "../../../src/git/pack-set.ts";
import { type ReceivePackResult, serveReceivePack } from "../../../src/git/receive-pack.ts";
import type { RepoSnapshot } from "../../../src/git/repo-snapshot.ts";
import { protocolVersion } from "../../../src/git/service-request.ts";
import { type Oid, type RefCommand, ZERO_OID } from "../../../src/git/types.ts";
import { serveUploadPack, type UploadPackMetrics } from "../../../src/git/upload-pack.ts";
import { git, removeDir } from "./repo-fixture.ts";

/** A repository whose refs live in a Map and whose packs are local files. */
export class MemoryRepo {
  readonly refs = new Map<string, Oid>();
  head: string | null = "refs/heads/main";
  private packs: Pack[] = [];
  private closers: (() => Promise<void>)[] = [];
  /** Ref names the apply hook refuses ("protected branch"). */
  readonly protectedRefs = new Set<string>();
  /** When set, authorize refuses every push with this message. */
  refuseAll: string | null = null;
  readonly pushes: ReceivePackResult[] = [];
  readonly fetches: UploadPackMetrics[] = [];

  private constructor(readonly dir: string) {}

  /** An empty repository with its pack directory in a new temp dir. */
  static async create(): Promise<MemoryRepo> {
    return new MemoryRepo(await mkdtemp(join(tmpdir(), "svc-memory-repo-")));
  }

  /** Take the packs and refs of a real bare repository. */
  async importFrom(gitDir: string): Promise<void> {
    const packDir = join(gitDir, "objects", "pack");
    for (const name of await Array.fromAsync(new Bun.Glob("*.idx").scan(packDir))) {
      await this.addPack(join(packDir, name), join(packDir, name.replace(/\.idx$/, ".pack")), false);
    }
    for (const line of git(gitDir, ["for-each-ref", "--format=%(objectname) %(refname)"]).split("\n")) {
      if (!line) continue;
      const [oid, name] = line.split(" ");
      this.refs.set(name!, oid!);
    }
  }

  /** The snapshot a request is served from. */
  snapshot(): RepoSnapshot {
    const refs = [...this.refs].map(([name, oid]) => ({ name, oid })).sort((a, b) => (a.name < b.name ? -1 : 1));
    return { refs, head: this.head, objects: new PackSet([...this.packs]) };
  }

  /** The receive-pack hooks: compare-and-swap on every ref, atomically when asked. */
  hooks() {
    return {
      authorize: async (_commands: RefCommand[]) => this.refuseAll,
      apply: async (commands: RefCommand[], pack: IndexedPack | null, opts: { atomic: boolean }) => {
        const out = new Map<string, string | null>();
        for (const c of commands) {
          const current = this.refs.get(c.ref) ?? ZERO_OID;
          if (this.protectedRefs.has(c.ref)) out.set(c.ref, "protected branch");
          else if (current !== c.oldOid) out.set(c.ref, "fetch first");
          else out.set(c.ref, null);
        }
        const failed = [...out.values()].some((r) => r !== null);
        if (opts.atomic && failed) {
          for (const c of commands) if (out.get(c.ref) === null) out.set(c.ref, "atomic push failure");
          return out;
        }
        if (pack && [...out.values()].some((r) => r === null)) {
          const packPath = join(this.dir, `pack-${pack.name}.pack`);
          const idxPath = join(this.dir, `pack-${pack.name}.idx`);
          await rename(pack.packPath, packPath);
          await rename(pack.idxPath, idxPath);
          await this.addPack(idxPath, packPath, true);
        }
        for (const c of commands) {
          if (out.get(c.ref) !== null) continue;
          if (c.newOid === ZERO_OID) this.refs.delete(c.ref);
          else this.refs.set(c.ref, c.newOid);
        }
        return out;
      },
    };
  }

  private async addPack(idxPath: string, packPath: string, first: boolean): Promise<void> {
    const idx = PackIndex.parse(new Uint8Array(await Bun.file(idxPath).arrayBuffer()));
    const source = await openFileSource(packPath);
    this.closers.push(() => source.close());
    const pack = new Pack(idx.packChecksum, idx, source);
    this.packs = first ? [pack, ...this.packs] : [...this.packs, pack];
  }

  /** Close the pack files and remove the temp dir. */
  async close(): Promise<void> {
    await Promise.all(this.closers.map((c) => c()));
    await removeDir(this.dir);
  }
}

async function* bodyOf(req: Request): AsyncGenerator<Uint8Array> {
  if (!req.body) return;
  const stream = req.headers.get("content-encoding") === "gzip" ? req.body.pipeThrough(new DecompressionStream("gzip")) : req.body;
  for await (const chunk of stream) yield chunk as Uint8Array;
}

/** Run `serve` with a streamed response body. */
function streamed(contentType: string, serve: (write: (c: Uint8Array) => Promise<void>) => Promise<unknown>): Response {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  serve((c) => writer.write(c))
    .catch((e) => console.error("harness: service failed", e))
    .finally(() => writer.close().catch(() => {}));
  return new Response(readable, { headers: { "content-type": contentType, "cache-control": "no-cache" } });
}

/** A smart-HTTP server at http://127.0.0.1:<port>/repo.git. */
export function serveHttp(repo: MemoryRepo, tmpDir: string): { url: string; stop(): void } {
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      const protocol = protocolVersion(req.headers.get("git-protocol"));
      if (req.method === "GET" && url.pathname === "/repo.git/info/refs") {
        const service = url.searchParams.get("service");
        if (service !== "git-upload-pack" && service !== "git-receive-pack") return new Response("dumb", { status: 403 });
        const body = await advertiseRefs(repo.snapshot(), service, { protocol, http: true });
        return new Response(body, {
          headers: { "content-type": `application/x-${service}-advertisement`, "cache-control": "no-cache" },
        });
      }
      if (req.method === "POST" && url.pathname === "/repo.git/git-upload-pack") {
        const snapshot = repo.snapshot();
        return streamed("application/x-git-upload-pack-result", async (write) => {
          repo.fetches.push(await serveUploadPack(snapshot, { input: bodyOf(req), write }, { protocol, statelessRpc: true }));
        });
      }
      if (req.method === "POST" && url.pathname === "/repo.git/git-receive-pack") {
        const snapshot = repo.snapshot();
        return streamed("application/x-git-receive-pack-result", async (write) => {
          const result = await serveReceivePack(snapshot, { input: bodyOf(req), write }, { statelessRpc: true, tmpDir, hooks: repo.hooks() });
          repo.pushes.push(result);
        });
      }
      return new Response("not found", { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/repo.git`, stop: () => server.stop(true) };
}

/**
 * A stateful transport like ssh: a TCP server; GIT_SSH_COMMAND runs fake-ssh.ts, which sends
 * "<service> <GIT_PROTOCOL>\n" and then relays stdin/stdout (half-closing like ssh does).
 */
export async function serveSsh(repo: MemoryRepo, tmpDir: string): Promise<{ env: Record<string, string>; url: string; stop(): void }> {
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    // Events, not the async iterator: finishing that iterator destroys the socket before we answer.
    const queue: (Uint8Array | null)[] = [];
    let wake: (() => void) | null = null;
    const push = (c: Uint8Array | null) => {
      queue.push(c);
      wake?.();
    };
    socket.on("data", (c: Buffer) => push(new Uint8Array(c)));
    socket.on("end", () => push(null));
    socket.on("error", () => push(null));
    const it = (async function* (): AsyncGenerator<Uint8Array> {
      for (;;) {
        while (queue.length === 0) await new Promise<void>((r) => (wake = r));
        const c = queue.shift()!;
        if (c === null) return;
        yield c;
      }
    })();
    void (async () => {
      let head = new Uint8Array(0);
      let nl = -1;
      while (nl < 0) {
        const r = await it.next();
        if (r.done) return socket.end();
        head = concat(head, r.value);
        nl = head.indexOf(0x0a);
      }
      const [service, gitProtocol = ""] = new TextDecoder().decode(head.subarray(0, nl)).split(" ");
      const protocol = protocolVersion(gitProtocol);
      const rest = head.subarray(nl + 1);
      async function* input(): AsyncGenerator<Uint8Array> {
        if (rest.length > 0) yield rest;
        yield* it;
      }
      const write = (c: Uint8Array) => new Promise<void>((resolve, reject) => socket.write(c, (err) => (err ? reject(err) : resolve())));
      const snapshot = repo.snapshot();
      try {
        if (service === "git-upload-pack") {
          repo.fetches.push(await serveUploadPack(snapshot, { input: input(), write }, { protocol, statelessRpc: false }));
        } else {
          repo.pushes.push(await serveReceivePack(snapshot, { input: input(), write }, { statelessRpc: false, tmpDir, hooks: repo.hooks() }));
        }
      } catch (e) {
        console.error("harness: ssh service failed", e);
      }
      socket.end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const script = join(import.meta.dir, "fake-ssh.ts");
  return {
    env: { GIT_SSH_COMMAND: `${process.execPath} ${script} ${port}`, GIT_SSH_VARIANT: "ssh" },
    url: "ssh://git@example.invalid/repo.git",
    stop: () => server.close(),
  };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
