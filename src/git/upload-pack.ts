// git-upload-pack: serving fetch and clone, protocol v0 here and v2 in upload-pack-v2.ts.
//
// From gitprotocol-pack(5), after the ref advertisement:
//
//   upload-request    =  want-list *shallow-line *1depth-request [filter-request] flush-pkt
//
//   shallow-update    =  *shallow-line *unshallow-line flush-pkt   (only for deepen requests)
//
//   upload-haves      =  have-list compute-end
//   compute-end       =  flush-pkt / PKT-LINE("done")
//
//   "In multi_ack_detailed mode the server sends ACK obj-id common for each common have,
//   ACK obj-id ready once it could send a pack, and NAK at each flush; after 'done' it
//   sends a final ACK obj-id (or NAK when nothing is common) and then the pack. With
//   no-done the server sends the pack right after the NAK that follows 'ready'."
//
// Over smart HTTP (stateless RPC) each request carries the wants again and the response
// ends after the ACKs of a round; over SSH it is one conversation, starting with the
// advertisement written here.
import { advertiseRefs } from "./advertise.ts";
import { CapabilitySet } from "./capabilities.ts";
import { bandError, localPacker, type Packer, type PackOptions } from "./create-pack-file.ts";
import { CommonCommits } from "./negotiation.ts";
import { errPkt, PktLineReader, pktLine, FLUSH_PKT } from "./pkt-line.ts";
import { SIDE_BAND_64K_PACKET_MAX, SIDE_BAND_PACKET_MAX } from "./sideband.ts";
import type { RepoSnapshot } from "./repo-snapshot.ts";
import { CommitCache } from "./revision.ts";
import { GitError, type Oid, type ServiceIO } from "./types.ts";
import { serveV2 } from "./upload-pack-v2.ts";
import { TimeSlice } from "./time-slice.ts";
import {
  checkWantsReachable,
  isDeepen,
  LineCounts,
  type NegotiationLimits,
  newUploadRequest,
  parseShallowOrFilterLine,
  parseWant,
  type UploadRequest,
} from "./upload-request.ts";
import { computeShallow } from "./walk.ts";
import type { ShallowPlan } from "./shallow.ts";

export type { ServiceIO };

/** Transport facts: protocol version, and stateless RPC (smart HTTP) or one conversation (SSH). */
export interface UploadPackOptions {
  protocol: 0 | 2;
  statelessRpc: boolean;
  /** Generates the pack (default: in this thread over the snapshot); the service may run it on a worker thread. */
  packer?: Packer;
  /** Lines of each kind a request may carry (default DEFAULT_NEGOTIATION_LIMITS). */
  limits?: NegotiationLimits;
}

/** Summary of what was served, for metrics and logs. */
export interface UploadPackMetrics {
  bytesSent: number;
  objects: number;
  wants: number;
  haves: number;
  /** clone: no haves and no shallow lines. */
  kind: "clone" | "fetch";
  /** The message sent to the client when the request failed. */
  error?: string;
}

/** Counts what one invocation writes and asks for. */
export class UploadPackSession {
  bytesSent = 0;
  objects = 0;
  wants = 0;
  haves = 0;
  shallow = 0;
  error: string | undefined;

  constructor(
    readonly snapshot: RepoSnapshot,
    private readonly io: ServiceIO,
  ) {}

  /** Write to the client, counting bytes. */
  readonly write = async (chunk: Uint8Array): Promise<void> => {
    this.bytesSent += chunk.length;
    await this.io.write(chunk);
  };

  /** Write one text pkt-line. */
  line(text: string): Promise<void> {
    return this.write(pktLine(text));
  }

  /** The summary. */
  metrics(): UploadPackMetrics {
    const m: UploadPackMetrics = {
      bytesSent: this.bytesSent,
      objects: this.objects,
      wants: this.wants,
      haves: this.haves,
      kind: this.haves === 0 && this.shallow === 0 ? "clone" : "fetch",
    };
    if (this.error !== undefined) m.error = this.error;
    return m;
  }
}

/** Serve git-upload-pack over `io`; errors meant for the user are sent as ERR (or band 3) and reported in metrics. */
export async function serveUploadPack(snapshot: RepoSnapshot, io: ServiceIO, opts: UploadPackOptions): Promise<UploadPackMetrics> {
  const session = new UploadPackSession(snapshot, io);
  const reader = new PktLineReader(io.input);
  if (opts.protocol === 2) {
    await serveV2(session, reader, opts.statelessRpc, opts.packer ?? localPacker(snapshot), opts.limits);
    return session.metrics();
  }
  const state: V0State = { packStarted: false, writeError: null };
  try {
    if (!opts.statelessRpc) {
      await session.write(await advertiseRefs(snapshot, "git-upload-pack", { protocol: 0, http: false }));
    }
    await uploadPackV0(session, reader, opts.statelessRpc, state, opts.packer ?? localPacker(snapshot), new LineCounts(opts.limits));
  } catch (e) {
    await reportError(session, state, e);
  }
  return session.metrics();
}

interface V0State {
  packStarted: boolean;
  writeError: ((text: string) => Promise<void>) | null;
}

async function reportError(session: UploadPackSession, state: V0State, e: unknown): Promise<void> {
  const message = e instanceof GitError ? e.message : "upload-pack: internal server error";
  session.error = message;
  try {
    if (state.packStarted && state.writeError) await state.writeError(`${message}\n`);
    else if (!state.packStarted) await session.write(errPkt(message));
  } catch {
    // The client is gone; nothing more to tell it.
  }
  if (!(e instanceof GitError)) throw e;
}

async function uploadPackV0(
  session: UploadPackSession,
  reader: PktLineReader,
  stateless: boolean,
  state: V0State,
  packer: Packer,
  counts: LineCounts,
): Promise<void> {
  const { snapshot } = session;
  const req = newUploadRequest();
  const caps = new CapabilitySet();
  const wanted = new Set<Oid>();
  const slice = new TimeSlice();
  for (;;) {
    const line = await reader.readLine();
    if (line === null) break;
    counts.add(lineKind(line));
    await slice.tick();
    if (parseShallowOrFilterLine(line, req, snapshot, caps.has("filter"))) continue;
    const want = parseWant(line);
    if (!want) throw new GitError(`upload-pack: protocol error, expected to get object ID, not '${line}'`, "protocol");
    caps.add(want.rest);
    if (!wanted.has(want.oid)) {
      wanted.add(want.oid);
      req.wants.push(want.oid);
    }
  }
  session.wants = req.wants.length;
  session.shallow = req.shallow.length;
  if (req.wants.length === 0) return;
  req.deepenRelative = caps.has("deepen-relative");
  const multiAck = caps.has("multi_ack_detailed") ? 2 : caps.has("multi_ack") ? 1 : 0;
  const packOpts: PackOptions = {
    thinPack: caps.has("thin-pack"),
    ofsDelta: caps.has("ofs-delta"),
    includeTag: caps.has("include-tag"),
    noProgress: caps.has("no-progress"),
    sideband: caps.has("side-band-64k") ? SIDE_BAND_64K_PACKET_MAX : caps.has("side-band") ? SIDE_BAND_PACKET_MAX : 0,
  };
  await checkWantsReachable(snapshot, req.wants);

  let plan: ShallowPlan | undefined;
  if (isDeepen(req)) {
    plan = await computeShallow(snapshot.objects, collectArgs(snapshot, req, []));
    for (const oid of plan.shallow) await session.line(`shallow ${oid}`);
    for (const oid of plan.unshallow) await session.line(`unshallow ${oid}`);
    await session.write(FLUSH_PKT);
  }
  // A stateless client first fetches the shallow list alone, then negotiates in later requests.
  if (stateless && (await reader.peek()).type === "eof") return;

  const common = new CommonCommits(new CommitCache(snapshot.objects));
  if (!(await getCommonCommits(session, reader, common, req.wants, multiAck, caps.has("no-done"), stateless, counts))) return;

  state.writeError = bandError(session.write, packOpts);
  state.packStarted = true;
  session.objects = await packer({ request: { ...collectArgs(snapshot, req, common.haves), plan }, options: packOpts }, session.write);
}

/** The walk request of a parsed fetch request plus the common haves. */
export function collectArgs(snapshot: RepoSnapshot, req: UploadRequest, haves: Oid[]) {
  return {
    wants: req.wants,
    haves,
    shallow: req.shallow,
    depth: req.depth,
    deepenSince: req.deepenSince,
    deepenNot: req.deepenNot,
    deepenRelative: req.deepenRelative,
    filter: req.filter,
    tips: snapshot.refs.map((r) => r.oid),
  };
}

/** The kind of a request line: its first word ("want", "shallow", "have", ...). */
export function lineKind(line: string): string {
  const sp = line.indexOf(" ");
  const kind = sp < 0 ? line : line.slice(0, sp);
  return kind.length > 32 ? kind.slice(0, 32) : kind;
}

/** git's get_common_commits: answer have rounds; true when the pack should follow, false when the response ends. */
async function getCommonCommits(
  session: UploadPackSession,
  reader: PktLineReader,
  common: CommonCommits,
  wants: Oid[],
  multiAck: number,
  noDone: boolean,
  stateless: boolean,
  counts: LineCounts,
): Promise<boolean> {
  const slice = new TimeSlice();
  let gotCommon = false;
  let gotOther = false;
  let sentReady = false;
  let lastHex = "";
  for (;;) {
    const line = await reader.readLine();
    await slice.tick();
    if (line === null) {
      counts.reset("have");
      if (reader.last === "eof" && !stateless) throw new GitError("upload-pack: the remote end hung up", "protocol");
      if (multiAck === 2 && gotCommon && !gotOther && (await common.okToGiveUp(wants))) {
        sentReady = true;
        await session.line(`ACK ${lastHex} ready`);
      }
      if (common.haves.length === 0 || multiAck) await session.line("NAK");
      if (noDone && sentReady) {
        await session.line(`ACK ${lastHex}`);
        return true;
      }
      if (stateless || reader.last === "eof") return false;
      gotCommon = false;
      gotOther = false;
      continue;
    }
    if (line.startsWith("have ")) {
      counts.add("have");
      const oid = line.slice(5);
      if (!/^[0-9a-f]{40}$/.test(oid)) throw new GitError(`upload-pack: expected SHA1 object, got '${oid}'`, "protocol");
      session.haves++;
      if ((await common.gotOid(oid)) === -1) {
        gotOther = true;
        if (multiAck && (await common.okToGiveUp(wants))) {
          if (multiAck === 2) {
            sentReady = true;
            await session.line(`ACK ${oid} ready`);
          } else {
            await session.line(`ACK ${oid} continue`);
          }
        }
      } else {
        gotCommon = true;
        lastHex = oid;
        if (multiAck === 2) await session.line(`ACK ${oid} common`);
        else if (multiAck) await session.line(`ACK ${oid} continue`);
        else if (common.haves.length === 1) await session.line(`ACK ${oid}`);
      }
      continue;
    }
    if (line === "done") {
      if (common.haves.length > 0) {
        if (multiAck) await session.line(`ACK ${lastHex}`);
        return true;
      }
      await session.line("NAK");
      return true;
    }
    throw new GitError(`upload-pack: expected SHA1 list, got '${line}'`, "protocol");
  }
}
