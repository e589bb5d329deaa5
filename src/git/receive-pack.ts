// git-receive-pack: serving push (protocol v0; receive-pack has no v2).
//
// From gitprotocol-pack(5):
//
//   update-requests   =  *shallow ( command-list | push-cert )
//   shallow           =  PKT-LINE("shallow" SP obj-id)
//   command-list      =  PKT-LINE(command NUL capability-list)
//                        *PKT-LINE(command)
//                        flush-pkt
//   command           =  create / delete / update
//   create            =  zero-id SP new-id  SP name
//   delete            =  old-id  SP zero-id SP name
//   update            =  old-id  SP new-id  SP name
//
//   push-options      =  *PKT-LINE(push-option) flush-pkt
//   packfile is not sent if the only command used is 'delete'.
//
//   report-status     =  unpack-status
//                        1*(command-status)
//                        flush-pkt
//   unpack-status     =  PKT-LINE("unpack" SP unpack-result)
//   unpack-result     =  "ok" / error-msg
//   command-status    =  command-ok / command-fail
//   command-ok        =  PKT-LINE("ok" SP refname)
//   command-fail      =  PKT-LINE("ng" SP refname SP error-msg)
//
//   report-status-v2  =  unpack-status 1*(command-status-v2) flush-pkt
//   command-status-v2 =  command-ok-v2 / command-fail
//   command-ok-v2     =  command-ok *option-line
//
// Option lines of report-status-v2 only describe refs rewritten by a proc-receive hook,
// which this server does not have, so both reports carry the same lines.
import { rm } from "node:fs/promises";
import { advertiseRefs } from "./advertise.ts";
import { formatSize } from "./bytes.ts";
import { CapabilitySet } from "./capabilities.ts";
import { checkConnectivity, linksClosed } from "./connectivity.ts";
import { FsckSession } from "./fsck.ts";
import { isOid } from "./oid.ts";
import { type IndexedPack, type IndexTaskRunner, indexPack } from "./pack-indexer.ts";
import { openIndexedPack, overlayReader } from "./pack-overlay.ts";
import type { Pack } from "./pack-reader.ts";
import { concatBytes, encodePkt, errPkt, FLUSH_PKT, PktLineReader, pktLine } from "./pkt-line.ts";
import { isValidPushRefName } from "./ref-name.ts";
import type { RepoSnapshot } from "./repo-snapshot.ts";
import { encodeSideband, SIDE_BAND_64K_PACKET_MAX } from "./sideband.ts";
import { GitError, type ObjectReader, type Oid, type RefCommand, type ServiceIO, ZERO_OID } from "./types.ts";

/** Decisions receive-pack leaves to the caller (permissions, ref storage). */
export interface ReceivePackHooks {
  /** Called after commands are parsed, before the pack is read: a string refuses the whole push (sent to the client as an error), e.g. permission denied. */
  authorize?(commands: RefCommand[]): Promise<string | null>;
  /**
   * Called once the pack is indexed and connectivity checked; commits atomically (or per ref when !atomic) with
   * compare-and-swap on oldOid; returns, per ref name, null for ok or a reason string ("fetch first",
   * "non-fast-forward", "protected branch ...", "failed to lock"). `objects` reads the repository with the new
   * pack (for isAncestor). The pack's temp files are deleted when it returns: move or copy them before.
   */
  apply(
    commands: RefCommand[],
    pack: IndexedPack | null,
    opts: { atomic: boolean; pushOptions: string[]; objects: ObjectReader },
  ): Promise<Map<string, string | null>>;
}

/** Options of serveReceivePack. */
export interface ReceivePackOptions {
  /** Smart HTTP (the advertisement came from info/refs) rather than one SSH conversation. */
  statelessRpc: boolean;
  /** Where the received pack and its index are written. */
  tmpDir: string;
  /**
   * Refuse pushes larger than this many bytes (the whole request: commands and pack). The
   * client gets "unpack push exceeds the maximum size of …" (git prints it) and nothing is kept.
   */
  maxPackBytes?: number;
  /** The request's declared length (HTTP Content-Length), when known: over maxPackBytes, the push is refused before its pack is read. */
  declaredBytes?: number;
  /** Refuse an object larger than this once inflated (SVC_GIT_MAX_OBJECT); checked while inflating. */
  maxObjectBytes?: number;
  /** Index the pack on a worker thread (the process's pool); without it, on this thread. */
  run?: IndexTaskRunner;
  /** Milliseconds between side-band keepalive packets while the client waits for the report (default 5000). */
  keepaliveMs?: number;
  hooks: ReceivePackHooks;
}

/** What happened, for the caller's logs, metrics and events. */
export interface ReceivePackResult {
  commands: RefCommand[];
  /** Per ref: null when updated, else the reason reported to the client. */
  results: Map<string, string | null>;
  /** Set when the pack could not be read or the request was refused as a whole. */
  error?: string;
  pushOptions: string[];
  /** Objects in the received pack (0 without a pack). */
  objects: number;
  bytesReceived: number;
  /** What the object checks accepted with a warning (FSCK_RULES), per message id. */
  warnings: Map<string, number>;
}

const NON_COMMIT_TO_BRANCH = "non-commit object to a branch";

/** Serve one git-receive-pack invocation over `io`. */
export async function serveReceivePack(snapshot: RepoSnapshot, io: ServiceIO, opts: ReceivePackOptions): Promise<ReceivePackResult> {
  const result: ReceivePackResult = { commands: [], results: new Map(), pushOptions: [], objects: 0, bytesReceived: 0, warnings: new Map() };
  if (!opts.statelessRpc) {
    await io.write(await advertiseRefs(snapshot, "git-receive-pack", { protocol: 0, http: false }));
  }
  const counted = countBytes(io.input, result, opts.maxPackBytes ?? Number.POSITIVE_INFINITY);
  const reader = new PktLineReader(counted);
  const caps = new CapabilitySet();
  // Ref names that are not UTF-8, as the client's bytes (refused, and reported back byte for byte).
  const rawRefs = new Map<string, Uint8Array>();
  const reply = new Reporter(io, caps, rawRefs);

  try {
    await readCommands(reader, caps, result.commands, rawRefs);
  } catch (e) {
    const message = errorMessage(e);
    result.error = message;
    for (const c of result.commands) result.results.set(c.ref, "unpacker error");
    if (result.commands.length > 0) await reply.report(`unpack ${message}`, result.commands, result.results);
    else await reply.error(message);
    if (!(e instanceof GitError)) throw e;
    return result;
  }
  if (result.commands.length === 0) return result;

  let pack: IndexedPack | null = null;
  let opened: { pack: Pack; close(): Promise<void> } | null = null;
  // From the pack's checksum on, the client only waits: resolving deltas, the object checks, the
  // connectivity check and publishing say nothing for a minute on git.git under load, long
  // enough for a proxy's read timeout (bench/README.md "Receiving real histories"). Like C git's
  // receive.keepAlive, empty band-1 packets keep the line busy until the report.
  let stopKeepalive: (() => void) | null = null;
  const startKeepalive = () => {
    stopKeepalive ??= reply.keepalive(opts.keepaliveMs ?? 5000);
  };
  const endKeepalive = () => {
    stopKeepalive?.();
    stopKeepalive = () => {};
  };
  try {
    if (caps.has("push-options")) result.pushOptions = await readPushOptions(reader);
    const refusal = (await opts.hooks.authorize?.(result.commands)) ?? null;
    if (refusal !== null) {
      result.error = refusal;
      for (const c of result.commands) result.results.set(c.ref, refusal);
      await reply.error(refusal);
      return result;
    }
    if (result.commands.some((c) => c.newOid !== ZERO_OID)) {
      const limit = opts.maxPackBytes ?? Number.POSITIVE_INFINITY;
      if ((opts.declaredBytes ?? 0) > limit) throw new GitError(`push exceeds the maximum size of ${formatSize(limit)}`, "too-large");
      // git's receive.fsckObjects: every object checked as it is indexed, then the blobs the
      // trees name .gitmodules / .gitattributes, wherever they are (fsck.ts).
      const fsck = new FsckSession();
      // The pack is complete at its checksum: indexPack reads no further, so a client that keeps
      // its side open until the report (libgit2, dulwich, JGit over SSH) gets one.
      pack = await indexPack(reader.rest(), {
        tmpDir: opts.tmpDir,
        thinBaseReader: snapshot.objects,
        maxBytes: opts.maxPackBytes,
        maxObjectBytes: opts.maxObjectBytes,
        run: opts.run,
        fsck,
        onComplete: startKeepalive,
      });
      result.objects = pack.objectCount;
      opened = await openIndexedPack(pack);
      await fsck.finish(overlayReader([opened.pack], snapshot.objects));
      result.warnings = new Map(fsck.warnings.counts);
      // Accepted, but worth knowing: git prints these as `remote: warning: …`.
      await reply.progress(fsck.warnings.lines());
    }
  } catch (e) {
    endKeepalive();
    await opened?.close();
    if (pack) await removePack(pack);
    const message = errorMessage(e);
    result.error = message;
    for (const c of result.commands) result.results.set(c.ref, "unpacker error");
    await reply.report(`unpack ${message}`, result.commands, result.results);
    if (!(e instanceof GitError)) throw e;
    return result;
  }

  const atomic = caps.has("atomic");
  // The repository as it will be once the pack is published: for checks and for the hook.
  const objects = opened ? overlayReader([opened.pack], snapshot.objects) : snapshot.objects;
  try {
    startKeepalive();
    let failures: Map<string, string>;
    try {
      failures = await checkCommands(snapshot, objects, result.commands, pack && opened ? { pack, opened: opened.pack } : null, rawRefs);
      let toApply = result.commands.filter((c) => !failures.has(c.ref));
      if (atomic && failures.size > 0) toApply = [];
      if (toApply.length > 0) {
        const outcome = await opts.hooks.apply(toApply, pack, { atomic, pushOptions: result.pushOptions, objects });
        for (const c of toApply) {
          const r = outcome.get(c.ref);
          if (r !== undefined && r !== null) failures.set(c.ref, r);
        }
      }
    } finally {
      endKeepalive();
    }
    for (const c of result.commands) {
      const failed = failures.get(c.ref) ?? (atomic && failures.size > 0 ? "atomic push failure" : null);
      result.results.set(c.ref, failed);
    }
    await reply.report("unpack ok", result.commands, result.results);
    return result;
  } catch (e) {
    result.error = errorMessage(e);
    for (const c of result.commands) result.results.set(c.ref, "failed to update ref");
    await reply.report("unpack ok", result.commands, result.results).catch(() => {});
    if (!(e instanceof GitError)) throw e;
    return result;
  } finally {
    await opened?.close();
    // The hook moved or copied what it kept; anything left in tmpDir is ours to remove.
    if (pack) await removePack(pack);
  }
}

const utf8Strict = new TextDecoder("utf-8", { fatal: true });
const latin1 = new TextDecoder("latin1");

/**
 * Parse shallow lines and the command list (capabilities after NUL on the first command). A line
 * that is not UTF-8 (a ref name with bytes such as \xff) is read byte for byte (latin-1) and its
 * ref recorded in `rawRefs`: it is refused as a funny refname, never decoded into another name.
 */
async function readCommands(reader: PktLineReader, caps: CapabilitySet, commands: RefCommand[], rawRefs: Map<string, Uint8Array>): Promise<void> {
  const seen = new Set<string>();
  for (;;) {
    const pkt = await reader.read();
    if (pkt.type === "flush" || pkt.type === "eof") return;
    if (pkt.type !== "data") throw new GitError("protocol error: unexpected packet in command list", "protocol");
    let raw = false;
    let line: string;
    try {
      line = utf8Strict.decode(pkt.data);
    } catch {
      line = latin1.decode(pkt.data);
      raw = true;
    }
    if (line.endsWith("\n")) line = line.slice(0, -1);
    const nul = line.indexOf("\0");
    if (nul >= 0) {
      if (commands.length === 0) caps.add(line.slice(nul + 1));
      line = line.slice(0, nul);
    }
    if (line.startsWith("shallow ") && commands.length === 0) continue;
    if (line.startsWith("push-cert")) throw new GitError("push certificates are not supported", "protocol");
    const oldOid = line.slice(0, 40);
    const newOid = line.slice(41, 81);
    const ref = line.slice(82);
    if (!isOid(oldOid) || !isOid(newOid) || line[40] !== " " || line[81] !== " " || ref === "") {
      throw new GitError(`protocol error: expected old/new/ref, got '${line}'`, "protocol");
    }
    if (seen.has(ref)) throw new GitError(`protocol error: ${ref} updated twice`, "protocol");
    seen.add(ref);
    if (raw) {
      // The ref's bytes: from the end of the new id's separator to the end of the name.
      const nameBytes = pkt.data.subarray(82, 82 + ref.length);
      if (!isUtf8(nameBytes)) rawRefs.set(ref, nameBytes.slice());
    }
    commands.push({ ref, oldOid, newOid });
  }
}

async function readPushOptions(reader: PktLineReader): Promise<string[]> {
  const options: string[] = [];
  for (;;) {
    const line = await reader.readLine();
    if (line === null) {
      if (reader.last !== "flush") throw new GitError("protocol error: truncated push options", "protocol");
      return options;
    }
    options.push(line);
  }
}

function isUtf8(bytes: Uint8Array): boolean {
  try {
    utf8Strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Per-command refusals before any ref moves: bad names, missing objects, non-commits on branches. */
async function checkCommands(
  snapshot: RepoSnapshot,
  objects: ObjectReader,
  commands: RefCommand[],
  received: { pack: IndexedPack; opened: Pack } | null,
  rawRefs: Map<string, Uint8Array>,
): Promise<Map<string, string>> {
  const failures = new Map<string, string>();
  const updates: RefCommand[] = [];
  for (const c of commands) {
    if (rawRefs.has(c.ref) || !isValidPushRefName(c.ref)) failures.set(c.ref, "funny refname");
    else if (c.newOid !== ZERO_OID) updates.push(c);
  }
  if (updates.length === 0) return failures;
  const check = (tips: Oid[]) => checkConnectivity(objects, tips, { existing: snapshot.objects });
  try {
    const tips = updates.map((c) => c.newOid);
    // Usually every link of the new pack resolves: then nothing needs to be read again.
    if (!received || !linksClosed(received.pack.links, received.opened.idx, snapshot.objects, tips)) await check(tips);
  } catch (e) {
    if (!(e instanceof GitError)) throw e;
    for (const c of updates) {
      const bad = await check([c.newOid]).then(
        () => null,
        (err: unknown) => err,
      );
      if (bad) failures.set(c.ref, bad instanceof GitError && bad.code === "invalid" ? bad.message : "missing necessary objects");
    }
  }
  for (const c of updates) {
    if (failures.has(c.ref) || !c.ref.startsWith("refs/heads/")) continue;
    const head = await objects.readHeader(c.newOid);
    if (head?.type !== "commit") failures.set(c.ref, NON_COMMIT_TO_BRANCH);
  }
  return failures;
}

async function removePack(pack: IndexedPack): Promise<void> {
  await Promise.all([rm(pack.packPath, { force: true }), rm(pack.idxPath, { force: true })]);
}

function errorMessage(e: unknown): string {
  return e instanceof GitError ? e.message : "internal server error";
}

async function* countBytes(input: AsyncIterable<Uint8Array>, result: ReceivePackResult, limit: number): AsyncGenerator<Uint8Array> {
  for await (const chunk of input) {
    result.bytesReceived += chunk.length;
    if (result.bytesReceived > limit) throw new GitError(`push exceeds the maximum size of ${formatSize(limit)}`, "too-large");
    yield chunk;
  }
}

export { formatSize };

/** Writes the report, in side-band 1 when negotiated (git's report()). */
class Reporter {
  constructor(
    private readonly io: ServiceIO,
    private readonly caps: CapabilitySet,
    private readonly rawRefs: Map<string, Uint8Array>,
  ) {}

  /** Lines git prints as `remote: <line>` (side-band 2); nothing without a side band. */
  async progress(lines: string[]): Promise<void> {
    if (!this.sideband || lines.length === 0) return;
    for (const line of lines) for (const p of encodeSideband(2, new TextEncoder().encode(`${line}\n`), SIDE_BAND_64K_PACKET_MAX)) await this.io.write(p);
  }

  /** One status line for `ref`, with a ref name that is not UTF-8 sent back as its own bytes. */
  private statusLine(ref: string, reason: string | null): Uint8Array {
    const tail = reason === null ? "\n" : ` ${reason.replaceAll("\n", " ")}\n`;
    const raw = this.rawRefs.get(ref);
    if (!raw) return pktLine(reason === null ? `ok ${ref}` : `ng ${ref} ${reason.replaceAll("\n", " ")}`);
    const enc = new TextEncoder();
    return encodePkt(concatBytes([enc.encode(reason === null ? "ok " : "ng "), raw, enc.encode(tail)]));
  }

  private get sideband(): boolean {
    return this.caps.has("side-band-64k");
  }

  /** Send report-status (or report-status-v2) when the client asked for one. */
  async report(unpack: string, commands: RefCommand[], results: Map<string, string | null>): Promise<void> {
    if (!this.caps.has("report-status") && !this.caps.has("report-status-v2")) {
      if (this.sideband) await this.io.write(FLUSH_PKT);
      return;
    }
    const lines = [pktLine(unpack.replaceAll("\n", " "))];
    for (const c of commands) lines.push(this.statusLine(c.ref, results.get(c.ref) ?? null));
    lines.push(FLUSH_PKT);
    await this.send(concatBytes(lines));
  }

  /** Refuse the whole push: an ERR packet the client prints as "remote error: ...". */
  async error(message: string): Promise<void> {
    await this.send(errPkt(message));
  }

  /** Send an empty band-1 packet every `ms` while busy; returns the stop function. */
  keepalive(ms: number): () => void {
    if (!this.sideband) return () => {};
    const timer = setInterval(() => void this.io.write(new Uint8Array([0x30, 0x30, 0x30, 0x35, 0x01])), ms);
    return () => clearInterval(timer);
  }

  private async send(bytes: Uint8Array): Promise<void> {
    if (!this.sideband) {
      await this.io.write(bytes);
      return;
    }
    for (const p of encodeSideband(1, bytes, SIDE_BAND_64K_PACKET_MAX)) await this.io.write(p);
    await this.io.write(FLUSH_PKT);
  }
}
