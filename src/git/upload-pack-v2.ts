// Protocol v2 for upload-pack: the command loop (git's serve.c) and the fetch command.
//
// From gitprotocol-v2(5):
//
//   request = empty-request | command-request
//   empty-request = flush-pkt
//   command-request = command
//                     capability-list
//                     delim-pkt
//                     command-args
//                     flush-pkt
//   command = PKT-LINE("command=" key LF)
//
//   output = acknowledgements flush-pkt |
//            [acknowledgments delim-pkt] [shallow-info delim-pkt]
//            [wanted-refs delim-pkt] [packfile-uris delim-pkt]
//            packfile flush-pkt
//
//   acknowledgments = PKT-LINE("acknowledgments" LF)
//                     (nak | *ack)
//                     (ready)
//   shallow-info = PKT-LINE("shallow-info" LF)
//                  *PKT-LINE((shallow | unshallow) LF)
//   packfile = PKT-LINE("packfile" LF)
//              *PKT-LINE(%x01-03 *%x00-ff)
//
// Over SSH the capability advertisement is written first and commands follow until EOF;
// over smart HTTP each request is one command (the advertisement came from info/refs).
import { advertiseRefs } from "./advertise.ts";
import { bandError, type Packer, type PackOptions } from "./create-pack-file.ts";
import { lsRefs } from "./ls-refs.ts";
import { CommonCommits } from "./negotiation.ts";
import { objectInfo } from "./object-info.ts";
import { DELIM_PKT, errPkt, FLUSH_PKT, type PktLineReader, pktText } from "./pkt-line.ts";
import { CommitCache } from "./revision.ts";
import { SIDE_BAND_64K_PACKET_MAX } from "./sideband.ts";
import { GitError, type Oid } from "./types.ts";
import { TimeSlice } from "./time-slice.ts";
import { collectArgs, lineKind, type UploadPackSession } from "./upload-pack.ts";
import { checkWantsReachable, isDeepen, LineCounts, type NegotiationLimits, newUploadRequest, parseShallowOrFilterLine, parseWant } from "./upload-request.ts";
import { computeShallow } from "./walk.ts";

/** Haves hinted to object storage at once (a hint, not worth a pass over a huge list). */
const PREFETCH_HAVES = 1024;

/** Capabilities a v2 client may send with a command (all of them are advertised). */
const REQUEST_CAPABILITIES: ReadonlySet<string> = new Set(["agent", "object-format", "server-option", "session-id"]);

/** One parsed command request. */
interface CommandRequest {
  command: string;
  args: string[];
}

/** Run the v2 command loop: one command when stateless, else until the client hangs up. */
export async function serveV2(
  session: UploadPackSession,
  reader: PktLineReader,
  stateless: boolean,
  packer: Packer,
  limits?: NegotiationLimits,
): Promise<void> {
  const { snapshot } = session;
  if (!stateless) {
    await session.write(await advertiseRefs(snapshot, "git-upload-pack", { protocol: 2, http: false }));
  }
  for (;;) {
    const state = { packStarted: false, bandError: null as ((t: string) => Promise<void>) | null };
    try {
      const request = await readCommandRequest(reader, new LineCounts(limits));
      if (!request) return;
      if (request.command === "ls-refs") {
        await lsRefs(snapshot, request.args, (t) => session.line(t), session.write);
      } else if (request.command === "fetch") {
        await fetch(session, request.args, state, packer);
      } else if (request.command === "object-info") {
        await objectInfo(snapshot, request.args, (t) => session.line(t), session.write);
      } else {
        throw new GitError(`invalid command '${request.command}'`, "protocol");
      }
    } catch (e) {
      const message = e instanceof GitError ? e.message : "upload-pack: internal server error";
      session.error = message;
      try {
        if (state.packStarted && state.bandError) await state.bandError(`${message}\n`);
        else if (!state.packStarted) await session.write(errPkt(message));
      } catch {
        // The client is gone.
      }
      if (!(e instanceof GitError)) throw e;
      return;
    }
    if (stateless) return;
  }
}

/** Read "command=", capabilities and arguments; null for an empty request or end of input. */
async function readCommandRequest(reader: PktLineReader, counts: LineCounts): Promise<CommandRequest | null> {
  const first = await reader.read();
  if (first.type !== "data") return null;
  const head = pktText(first.data);
  if (!head.startsWith("command=")) throw new GitError(`expected a command, got '${head}'`, "protocol");
  const command = head.slice(8);
  for (;;) {
    const p = await reader.read();
    if (p.type === "flush") return { command, args: [] };
    if (p.type === "delim") break;
    if (p.type !== "data") throw new GitError("protocol error: truncated command request", "protocol");
    const cap = pktText(p.data);
    const key = cap.split("=", 1)[0]!;
    if (!REQUEST_CAPABILITIES.has(key)) throw new GitError(`unknown capability '${cap}'`, "protocol");
    if (key === "object-format" && cap !== "object-format=sha1") {
      throw new GitError(`mismatched object format: ${cap.slice(14)}`, "protocol");
    }
  }
  const args: string[] = [];
  const slice = new TimeSlice();
  for (;;) {
    const p = await reader.read();
    if (p.type === "flush") return { command, args };
    if (p.type !== "data") throw new GitError(`expected flush after ${command} arguments`, "protocol");
    const arg = pktText(p.data);
    counts.add(lineKind(arg));
    await slice.tick();
    args.push(arg);
  }
}

/** The fetch command (git's upload_pack_v2). */
async function fetch(
  session: UploadPackSession,
  args: string[],
  state: { packStarted: boolean; bandError: ((t: string) => Promise<void>) | null },
  packer: Packer,
): Promise<void> {
  const { snapshot } = session;
  const req = newUploadRequest();
  const haves: Oid[] = [];
  const wanted = new Set<Oid>();
  const flags = new Set<string>();
  const slice = new TimeSlice();
  for (const arg of args) {
    await slice.tick();
    const want = parseWant(arg);
    if (want) {
      if (!wanted.has(want.oid)) req.wants.push(want.oid);
      wanted.add(want.oid);
    } else if (arg.startsWith("have ")) {
      const oid = arg.slice(5);
      if (!/^[0-9a-f]{40}$/.test(oid)) throw new GitError(`upload-pack: expected SHA1 object, got '${oid}'`, "protocol");
      haves.push(oid);
    } else if (["thin-pack", "ofs-delta", "no-progress", "include-tag", "done", "wait-for-done", "deepen-relative"].includes(arg)) {
      flags.add(arg);
    } else if (arg.startsWith("packfile-uris ")) {
      // Not advertised; git also drops it without sideband-all.
    } else if (!parseShallowOrFilterLine(arg, req, snapshot, true)) {
      throw new GitError(`unexpected line: '${arg}'`, "protocol");
    }
  }
  req.deepenRelative = flags.has("deepen-relative");
  session.wants += req.wants.length;
  session.haves += haves.length;
  session.shallow += req.shallow.length;
  if (req.wants.length === 0 && !flags.has("wait-for-done")) return;
  await checkWantsReachable(snapshot, req.wants);

  const common = new CommonCommits(new CommitCache(snapshot.objects));
  if (haves.length > 0) {
    const acks: Oid[] = [];
    // Each have is looked up in turn; object storage fetches the first ones side by side meanwhile.
    snapshot.objects.prefetch(haves.length > PREFETCH_HAVES ? haves.slice(0, PREFETCH_HAVES) : haves);
    for (const oid of haves) if ((await common.gotOid(oid)) !== -1) acks.push(oid);
    if (!flags.has("done")) {
      await session.line("acknowledgments");
      if (acks.length === 0) await session.line("NAK");
      for (const oid of acks) await session.line(`ACK ${oid}`);
      if (flags.has("wait-for-done") || !(await common.okToGiveUp(req.wants))) {
        await session.write(FLUSH_PKT);
        return;
      }
      await session.line("ready");
      await session.write(DELIM_PKT);
    }
  }
  if (req.wants.length === 0) {
    await session.write(FLUSH_PKT);
    return;
  }

  const walkArgs = collectArgs(snapshot, req, common.haves);
  let plan: Awaited<ReturnType<typeof computeShallow>> | undefined;
  if (isDeepen(req) || req.shallow.length > 0) {
    await session.line("shallow-info");
    if (isDeepen(req)) {
      plan = await computeShallow(snapshot.objects, walkArgs);
      for (const oid of plan.shallow) await session.line(`shallow ${oid}`);
      for (const oid of plan.unshallow) await session.line(`unshallow ${oid}`);
    }
    await session.write(DELIM_PKT);
  }
  await session.line("packfile");
  const packOpts: PackOptions = {
    thinPack: flags.has("thin-pack"),
    ofsDelta: flags.has("ofs-delta"),
    includeTag: flags.has("include-tag"),
    noProgress: flags.has("no-progress"),
    sideband: SIDE_BAND_64K_PACKET_MAX,
  };
  state.packStarted = true;
  state.bandError = bandError(session.write, packOpts);
  session.objects += await packer({ request: { ...walkArgs, plan }, options: packOpts }, session.write);
}
