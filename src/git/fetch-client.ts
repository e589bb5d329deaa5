// The client side of fetch over smart HTTP: what a mirror uses to copy its origin.
//
// From gitprotocol-http(5):
//
//   C: GET $GIT_URL/info/refs?service=git-upload-pack HTTP/1.0
//   S: ... Content-Type: application/x-git-upload-pack-advertisement
//   Clients MUST validate the first five bytes of the response entity matches the regex
//   ^[0-9a-f]{4}#. ... Clients MUST verify the first pkt-line is # service=$servicename.
//   C: POST $GIT_URL/git-upload-pack HTTP/1.0
//      Content-Type: application/x-git-upload-pack-request
//   S: Content-Type: application/x-git-upload-pack-result
//
// A v2 server (asked with `Git-Protocol: version=2`) answers the GET with its capabilities
// ("version 2", one capability per line, flush; git http-backend leaves out the "# service="
// preamble); each POST then carries one command (gitprotocol-v2(5)):
//
//   request = command-request capability-list [section-delim *command-args] flush-pkt
//   ls-refs:  output = *ref flush-pkt
//             ref = PKT-LINE(obj-id-or-unborn SP refname *(SP ref-attribute) LF)
//             ref-attribute = (symref | peeled); symref = "symref-target:" symref-target;
//             peeled = "peeled:" obj-id
//   fetch:    output = acknowledgements flush-pkt |
//                      [acknowledgments delim-pkt] [shallow-info delim-pkt]
//                      [wanted-refs delim-pkt] [packfile-uris delim-pkt]
//                      packfile flush-pkt
//             acknowledgments = PKT-LINE("acknowledgments" LF) (nak | *ack) (ready)
//             packfile = PKT-LINE("packfile" LF) *PKT-LINE(%x01-03 *%x00-ff)
//
// A v0 server answers the GET with its refs (capabilities after a NUL on the first line), and
// each stateless POST repeats the wants (gitprotocol-pack(5)):
//
//   upload-request    =  want-list *shallow-line *1depth-request [filter-request] flush-pkt
//   want-list         =  first-want *additional-want
//   first-want        =  PKT-LINE("want" SP obj-id SP capability-list)
//   upload-haves      =  have-list compute-end
//   compute-end       =  flush-pkt / PKT-LINE("done")
//   server-response   =  *ack_multi ack / nak
//   ack_multi         =  PKT-LINE("ACK" SP obj-id ack_status); ack_status = "continue" / "common" / "ready"
//
// Over stateless HTTP every round is a new request: it repeats the wants and the haves already
// acknowledged, then offers the next batch (git's fetch-pack with stateless_rpc). The pack comes
// multiplexed (side-band-64k, always in v2) and is handed to the caller as a byte stream.
import { AGENT } from "./capabilities.ts";
import type { HaveWalker } from "./fetch-negotiator.ts";
import { isOid } from "./oid.ts";
import { concatBytes, DELIM_PKT, FLUSH_PKT, PktLineReader, pktLine, pktText } from "./pkt-line.ts";
import { checkRefFormat } from "./ref-name.ts";
import type { Oid } from "./types.ts";

/** One HTTP request the client needs sent. */
export interface HttpRequest {
  method: "GET" | "POST";
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

/** What came back: the status, headers, and the body as a stream the client reads once. */
export interface HttpResponse {
  status: number;
  header(name: string): string | null;
  body: AsyncIterable<Uint8Array>;
  /** Stops reading the body (releases the connection). */
  cancel(): Promise<void>;
}

/** Sends one request. The caller decides how (address checks, timeouts, redirects refused). */
export type HttpTransport = (req: HttpRequest) => Promise<HttpResponse>;

/** Credentials for the origin: Basic (user and password or token) or a bearer token. */
export type RemoteAuth = { kind: "basic"; username: string; password: string } | { kind: "bearer"; token: string };

/** Why a fetch failed, for the mirror's sync_error and the logs. */
export type FetchFailure = "auth" | "not-found" | "http" | "not-smart" | "protocol" | "remote" | "limit";

/** A failed fetch, with a message for people. */
export class FetchError extends Error {
  constructor(
    readonly kind: FetchFailure,
    message: string,
  ) {
    super(message);
    this.name = "FetchError";
  }
}

/** A ref of the origin; `peeled` is the object an annotated tag points at. */
export interface RemoteRef {
  name: string;
  oid: Oid;
  peeled: Oid | null;
}

/** Options of openRemote. */
export interface RemoteOptions {
  transport: HttpTransport;
  auth?: RemoteAuth | null;
  /** Only refs under these prefixes are listed (default refs/heads/ and refs/tags/). */
  refPrefixes?: string[];
  /** Refuse a remote listing more refs than this (default 200,000). */
  maxRefs?: number;
  /** Speak only v0 (tests of the fallback). */
  forceV0?: boolean;
}

/** How a pack fetch went: requests made, haves offered, what the origin acknowledged. */
export interface FetchStats {
  rounds: number;
  havesSent: number;
  acks: number;
  /** Bytes of pack data received. */
  packBytes: number;
}

const MAX_REFS = 200_000;
/** Give up negotiating after this many haves without a new ACK, once something was acknowledged (git's MAX_IN_VAIN). */
const MAX_IN_VAIN = 256;
/** Give up negotiating after this many haves when nothing at all was acknowledged: the origin's history is unrelated. */
const MAX_UNACKED = 4096;
/** Haves in the first round, doubling each round up to the last value. */
const FIRST_BATCH = 16;
const MAX_BATCH = 1024;
/** At most this many acknowledged haves are repeated in each stateless request. */
const MAX_COMMON = 2048;
const USER_AGENT = `git/${AGENT.replace("/", "-")}`;
const ADVERTISEMENT = "application/x-git-upload-pack-advertisement";
const RESULT = "application/x-git-upload-pack-result";

/** Reads the remote's refs; then `fetchPack` gets the objects it lacks. */
export async function openRemote(url: string, opts: RemoteOptions): Promise<RemoteRepository> {
  const remote = new RemoteRepository(url.replace(/\/+$/, ""), opts);
  await remote.discover();
  return remote;
}

/** One origin repository as seen over smart HTTP. */
export class RemoteRepository {
  protocol: 0 | 2 = 2;
  refs: RemoteRef[] = [];
  /** The branch HEAD names at the origin, or null (detached, unborn or not told). */
  head: string | null = null;
  private caps = new Map<string, string | null>();
  private readonly prefixes: string[];
  private readonly maxRefs: number;

  constructor(
    readonly url: string,
    private readonly opts: RemoteOptions,
  ) {
    this.prefixes = opts.refPrefixes ?? ["refs/heads/", "refs/tags/"];
    this.maxRefs = opts.maxRefs ?? MAX_REFS;
  }

  /** info/refs, then (v2) ls-refs. */
  async discover(): Promise<void> {
    const res = await this.send("GET", `${this.url}/info/refs?service=git-upload-pack`, null);
    expectType(res, ADVERTISEMENT);
    const reader = new PktLineReader(res.body);
    try {
      let first = await readData(reader, "advertisement");
      if (first === "# service=git-upload-pack") {
        const next = await reader.read();
        if (next.type !== "flush") throw new FetchError("protocol", "origin sent a malformed advertisement: no flush after the service line");
        first = await readData(reader, "advertisement");
      } else if (first.startsWith("# service=")) {
        throw new FetchError("protocol", `origin advertised ${first.slice(10)} instead of git-upload-pack`);
      }
      if (first === "version 2" && !this.opts.forceV0) {
        this.protocol = 2;
        for (;;) {
          const line = await reader.readLine();
          if (line === null) break;
          const eq = line.indexOf("=");
          this.caps.set(eq < 0 ? line : line.slice(0, eq), eq < 0 ? null : line.slice(eq + 1));
        }
        if (!this.caps.has("fetch") || !this.caps.has("ls-refs")) throw new FetchError("protocol", "origin speaks protocol v2 without ls-refs and fetch");
        const format = this.caps.get("object-format");
        if (format && format !== "sha1") throw new FetchError("protocol", `origin uses the ${format} object format; only sha1 is supported`);
        await res.cancel();
        await this.lsRefs();
        return;
      }
      if (first === "version 2") throw new FetchError("protocol", "origin answered in protocol v2 although v0 was asked");
      this.protocol = 0;
      await this.readV0Refs(reader, first);
    } finally {
      await res.cancel();
    }
  }

  /** The refs of a v0 advertisement whose first line is `first`. */
  private async readV0Refs(reader: PktLineReader, first: string): Promise<void> {
    let line: string | null = first;
    if (line === "version 1") line = await reader.readLine();
    const byName = new Map<string, RemoteRef>();
    let firstLine = true;
    while (line !== null) {
      if (line.startsWith("ERR ")) throw new FetchError("remote", `origin: ${line.slice(4)}`);
      let text = line;
      if (firstLine) {
        const nul = text.indexOf("\0");
        if (nul >= 0) {
          for (const word of text.slice(nul + 1).split(" ")) {
            if (!word) continue;
            const eq = word.indexOf("=");
            const key = eq < 0 ? word : word.slice(0, eq);
            const value = eq < 0 ? null : word.slice(eq + 1);
            if (key === "symref" && value?.startsWith("HEAD:")) this.head = value.slice(5);
            else this.caps.set(key, value);
          }
          text = text.slice(0, nul);
        }
        firstLine = false;
      }
      const sp = text.indexOf(" ");
      const oid = text.slice(0, sp);
      const name = text.slice(sp + 1);
      if (sp !== 40 || !isOid(oid)) throw new FetchError("protocol", `origin sent a malformed ref line: ${JSON.stringify(text.slice(0, 100))}`);
      if (name === "capabilities^{}") {
        // An empty repository: no refs, only capabilities.
      } else if (name.endsWith("^{}")) {
        const ref = byName.get(name.slice(0, -3));
        if (ref) ref.peeled = oid;
      } else if (this.wanted(name)) {
        byName.set(name, { name, oid, peeled: null });
        if (byName.size > this.maxRefs) throw new FetchError("limit", `origin lists more than ${this.maxRefs} refs`);
      }
      line = await reader.readLine();
    }
    if (reader.last !== "flush") throw new FetchError("protocol", "origin's advertisement ended without a flush");
    const format = this.caps.get("object-format");
    if (format && format !== "sha1") throw new FetchError("protocol", `origin uses the ${format} object format; only sha1 is supported`);
    this.refs = [...byName.values()];
  }

  /** v2 ls-refs with symrefs and peeled tags, under the wanted prefixes (and HEAD). */
  private async lsRefs(): Promise<void> {
    const args = ["peel", "symrefs", ...this.prefixes.map((p) => `ref-prefix ${p}`), "ref-prefix HEAD"];
    const res = await this.post(this.command("ls-refs", args));
    const reader = new PktLineReader(res.body);
    const refs: RemoteRef[] = [];
    try {
      for (;;) {
        const line = await reader.readLine();
        if (line === null) break;
        if (line.startsWith("ERR ")) throw new FetchError("remote", `origin: ${line.slice(4)}`);
        const parts = line.split(" ");
        const oid = parts[0]!;
        const name = parts[1] ?? "";
        if (!isOid(oid) || !name) throw new FetchError("protocol", `origin sent a malformed ls-refs line: ${JSON.stringify(line.slice(0, 100))}`);
        let peeled: Oid | null = null;
        let target: string | null = null;
        for (const attr of parts.slice(2)) {
          if (attr.startsWith("peeled:") && isOid(attr.slice(7))) peeled = attr.slice(7);
          else if (attr.startsWith("symref-target:")) target = attr.slice(14);
        }
        if (name === "HEAD") {
          this.head = target;
          continue;
        }
        if (!this.wanted(name)) continue;
        refs.push({ name, oid, peeled });
        if (refs.length > this.maxRefs) throw new FetchError("limit", `origin lists more than ${this.maxRefs} refs`);
      }
      if (reader.last !== "flush") throw new FetchError("protocol", "origin's ls-refs answer ended without a flush");
    } finally {
      await res.cancel();
    }
    this.refs = refs;
  }

  /** Whether a ref is one the caller asked for and a valid name (an origin cannot plant `refs/../x`). */
  private wanted(name: string): boolean {
    return this.prefixes.some((p) => name.startsWith(p)) && checkRefFormat(name);
  }

  /**
   * Fetches the objects of `wants`, offering the haves of `walker` (null: nothing local, a clone).
   * `known` are local objects the origin is known to have (a local ref whose value the origin
   * advertises unchanged): they are offered first and repeated every round without waiting for
   * an ACK, so the usual mirror update is settled in one round. Resolves with the pack as a
   * stream of bytes, to be read to its end once; `stats` fills in while it is read.
   */
  async fetchPack(wants: Oid[], walker: HaveWalker | null, stats: FetchStats, known: Oid[] = []): Promise<AsyncIterable<Uint8Array>> {
    if (wants.length === 0) throw new Error("fetchPack needs at least one want");
    const commonSet = new Set<Oid>(known.slice(0, MAX_COMMON));
    const common: Oid[] = [...commonSet];
    for (const oid of common) walker?.ack(oid);
    let batch = FIRST_BATCH;
    let inVain = 0;
    let acked = false;
    let sent = 0;
    // Without multi_ack_detailed a v0 origin cannot say what is common per round: offer one
    // batch with `done` and let it use what it recognizes.
    if (this.protocol === 0 && !this.caps.has("multi_ack_detailed")) {
      const haves = walker ? await walker.next(MAX_IN_VAIN) : [];
      stats.havesSent += haves.length + common.length;
      stats.rounds++;
      return this.countBytes(await this.doneV0(wants, [...common, ...haves]), stats);
    }
    // Rounds until the origin is ready or we have nothing (useful) left to offer.
    for (let round = 0; ; round++) {
      const haves = walker ? await walker.next(batch) : [];
      // The first round goes out even without haves of the walker when some are known.
      if (haves.length === 0 && (round > 0 || common.length === 0)) break;
      sent += haves.length;
      stats.havesSent += haves.length + (round === 0 ? common.length : 0);
      stats.rounds++;
      const answer = this.protocol === 2 ? await this.roundV2(wants, [...common, ...haves]) : await this.roundV0(wants, [...common, ...haves]);
      let fresh = 0;
      for (const oid of answer.acks) {
        stats.acks++;
        walker?.ack(oid);
        if (!commonSet.has(oid)) {
          commonSet.add(oid);
          fresh++;
          if (common.length < MAX_COMMON) common.push(oid);
        }
      }
      if (answer.pack) return this.countBytes(answer.pack, stats);
      if (fresh > 0) {
        acked = true;
        inVain = 0;
      } else inVain += haves.length;
      if (answer.ready) break;
      if (acked ? inVain > MAX_IN_VAIN : sent > MAX_UNACKED) break;
      batch = Math.min(batch * 2, MAX_BATCH);
    }
    stats.rounds++;
    const pack = this.protocol === 2 ? await this.doneV2(wants, common) : await this.doneV0(wants, common);
    return this.countBytes(pack, stats);
  }

  private async *countBytes(pack: AsyncIterable<Uint8Array>, stats: FetchStats): AsyncGenerator<Uint8Array> {
    for await (const chunk of pack) {
      stats.packBytes += chunk.length;
      yield chunk;
    }
  }

  // ---- protocol v2 ----------------------------------------------------------------------

  private command(name: string, args: string[]): Uint8Array {
    const parts = [pktLine(`command=${name}`), pktLine(`agent=${AGENT}`)];
    if (this.caps.has("object-format")) parts.push(pktLine("object-format=sha1"));
    parts.push(DELIM_PKT);
    for (const a of args) parts.push(pktLine(a));
    parts.push(FLUSH_PKT);
    return concatBytes(parts);
  }

  private fetchArgs(wants: Oid[], haves: Oid[], done: boolean): string[] {
    const args = ["thin-pack", "no-progress", "ofs-delta"];
    for (const w of wants) args.push(`want ${w}`);
    for (const h of haves) args.push(`have ${h}`);
    if (done) args.push("done");
    return args;
  }

  /** One negotiation round: the acknowledgments, and the pack when the origin was ready. */
  private async roundV2(wants: Oid[], haves: Oid[]): Promise<{ acks: Oid[]; ready: boolean; pack: AsyncIterable<Uint8Array> | null }> {
    const res = await this.post(this.command("fetch", this.fetchArgs(wants, haves, false)));
    const reader = new PktLineReader(res.body);
    try {
      const header = await readData(reader, "fetch response");
      if (header !== "acknowledgments") throw new FetchError("protocol", `origin answered a negotiation with ${JSON.stringify(header.slice(0, 40))}`);
      const acks: Oid[] = [];
      let ready = false;
      for (;;) {
        const line = await reader.readLine();
        if (line === null) break;
        if (line === "NAK") continue;
        if (line === "ready") ready = true;
        else if (line.startsWith("ACK ") && isOid(line.slice(4))) acks.push(line.slice(4));
        else throw new FetchError("protocol", `origin sent an unexpected acknowledgment: ${JSON.stringify(line.slice(0, 60))}`);
        // An origin can only acknowledge what it was offered.
        if (acks.length > haves.length) throw new FetchError("protocol", "origin acknowledged more than it was offered");
      }
      if (reader.last === "flush") {
        await res.cancel();
        return { acks, ready: false, pack: null };
      }
      if (reader.last !== "delim" || !ready) throw new FetchError("protocol", "origin's acknowledgments ended unexpectedly");
      return { acks, ready, pack: this.packSections(reader, res) };
    } catch (e) {
      await res.cancel();
      throw e;
    }
  }

  private async doneV2(wants: Oid[], common: Oid[]): Promise<AsyncIterable<Uint8Array>> {
    const res = await this.post(this.command("fetch", this.fetchArgs(wants, common, true)));
    return this.packSections(new PktLineReader(res.body), res);
  }

  /** Skips the sections before `packfile`, then yields the demultiplexed pack. */
  private async *packSections(reader: PktLineReader, res: HttpResponse): AsyncGenerator<Uint8Array> {
    try {
      for (;;) {
        const header = await readData(reader, "fetch response");
        if (header === "packfile") break;
        if (header.startsWith("ERR ")) throw new FetchError("remote", `origin: ${header.slice(4)}`);
        if (!["acknowledgments", "shallow-info", "wanted-refs", "packfile-uris"].includes(header)) {
          throw new FetchError("protocol", `origin sent an unknown section ${JSON.stringify(header.slice(0, 40))}`);
        }
        if (header === "packfile-uris") throw new FetchError("protocol", "origin sent packfile URIs, which were not asked for");
        while ((await reader.readLine()) !== null);
        if (reader.last !== "delim") throw new FetchError("protocol", `origin's ${header} section ended unexpectedly`);
      }
      yield* demux(reader);
    } finally {
      await res.cancel();
    }
  }

  // ---- protocol v0 ----------------------------------------------------------------------

  /** The want lines of a v0 request, the first carrying the capabilities we use. */
  private wantLines(wants: Oid[]): Uint8Array[] {
    const caps: string[] = [];
    for (const c of ["multi_ack_detailed", "side-band-64k", "thin-pack", "ofs-delta", "no-progress"]) if (this.caps.has(c)) caps.push(c);
    if (!this.caps.has("side-band-64k") && this.caps.has("side-band")) caps.push("side-band");
    if (this.caps.has("agent")) caps.push(`agent=${AGENT}`);
    return wants.map((w, i) => pktLine(i === 0 ? `want ${w} ${caps.join(" ")}` : `want ${w}`));
  }

  private async roundV0(wants: Oid[], haves: Oid[]): Promise<{ acks: Oid[]; ready: boolean; pack: null }> {
    const body = concatBytes([...this.wantLines(wants), FLUSH_PKT, ...haves.map((h) => pktLine(`have ${h}`)), FLUSH_PKT]);
    const res = await this.post(body);
    const reader = new PktLineReader(res.body);
    const acks: Oid[] = [];
    let ready = false;
    try {
      for (;;) {
        const line = await reader.readLine();
        if (line === null) {
          if (reader.last === "eof") break;
          continue;
        }
        if (line === "NAK") break;
        if (line.startsWith("ERR ")) throw new FetchError("remote", `origin: ${line.slice(4)}`);
        const m = /^ACK ([0-9a-f]{40})(?: (continue|common|ready))?$/.exec(line);
        if (!m) throw new FetchError("protocol", `origin sent an unexpected acknowledgment: ${JSON.stringify(line.slice(0, 60))}`);
        if (m[2] === "ready") ready = true;
        acks.push(m[1]!);
        if (acks.length > haves.length + 1) throw new FetchError("protocol", "origin acknowledged more than it was offered");
        if (!m[2]) break;
      }
    } finally {
      await res.cancel();
    }
    return { acks, ready, pack: null };
  }

  private async doneV0(wants: Oid[], common: Oid[]): Promise<AsyncIterable<Uint8Array>> {
    const body = concatBytes([...this.wantLines(wants), FLUSH_PKT, ...common.map((h) => pktLine(`have ${h}`)), pktLine("done")]);
    const res = await this.post(body);
    return this.v0Pack(new PktLineReader(res.body), res);
  }

  /** Skips the final ACK/NAK lines, then yields the pack (demultiplexed, or raw without side-band). */
  private async *v0Pack(reader: PktLineReader, res: HttpResponse): AsyncGenerator<Uint8Array> {
    const sideband = this.caps.has("side-band-64k") || this.caps.has("side-band");
    try {
      for (;;) {
        const pkt = sideband ? await reader.peek() : await reader.read();
        if (pkt.type !== "data") throw new FetchError("protocol", "origin ended its answer before the pack");
        const first = pkt.data[0]!;
        if (sideband && first >= 1 && first <= 3) break;
        if (sideband) await reader.read();
        const line = pktText(pkt.data);
        if (line.startsWith("ERR ")) throw new FetchError("remote", `origin: ${line.slice(4)}`);
        if (line === "NAK" || /^ACK [0-9a-f]{40}$/.test(line)) {
          if (!sideband) break;
          continue;
        }
        if (/^ACK [0-9a-f]{40} (continue|common|ready)$/.test(line)) continue;
        throw new FetchError("protocol", `origin sent ${JSON.stringify(line.slice(0, 60))} before the pack`);
      }
      if (sideband) yield* demux(reader);
      else yield* reader.rest();
    } finally {
      await res.cancel();
    }
  }

  // ---- HTTP -------------------------------------------------------------------------------

  private post(body: Uint8Array): Promise<HttpResponse> {
    return this.send("POST", `${this.url}/git-upload-pack`, body).then((res) => {
      expectType(res, RESULT);
      return res;
    });
  }

  private async send(method: "GET" | "POST", url: string, body: Uint8Array | null): Promise<HttpResponse> {
    const headers: Record<string, string> = { "user-agent": USER_AGENT, accept: method === "GET" ? "*/*" : RESULT, pragma: "no-cache" };
    if (!this.opts.forceV0) headers["git-protocol"] = "version=2";
    if (body) headers["content-type"] = "application/x-git-upload-pack-request";
    const auth = this.opts.auth;
    if (auth?.kind === "basic") headers.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}`;
    else if (auth?.kind === "bearer") headers.authorization = `Bearer ${auth.token}`;
    const res = await this.opts.transport(body ? { method, url, headers, body } : { method, url, headers });
    if (res.status === 200) return res;
    await res.cancel();
    if (res.status === 401 || res.status === 403) {
      // Why both causes: hosts answer a missing repository like a private one (so as not to reveal
      // which private names exist), so a mistyped URL looks exactly like a credential problem.
      throw new FetchError(
        "auth",
        auth
          ? `origin refused the credentials (HTTP ${res.status}): they may be wrong or lack access, or the repository may not exist; check the URL`
          : `origin answered HTTP ${res.status} without credentials: the repository may not exist (check the URL), or it is private and the mirror needs credentials`,
      );
    }
    if (res.status === 404) throw new FetchError("not-found", "origin repository not found (HTTP 404)");
    if (res.status >= 300 && res.status < 400) {
      const to = res.header("location");
      throw new FetchError(
        "http",
        `origin redirected (HTTP ${res.status}${to ? ` to ${to.slice(0, 200)}` : ""}); redirects are not followed, use the final address`,
      );
    }
    throw new FetchError("http", `origin answered HTTP ${res.status}`);
  }
}

/** Refuse a response that is not the smart protocol (a dumb server, an HTML login page). */
function expectType(res: HttpResponse, type: string): void {
  const got = (res.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (got !== type) {
    void res.cancel();
    throw new FetchError("not-smart", `origin is not a smart-HTTP git server (content type ${JSON.stringify(got)})`);
  }
}

/** The next data packet as text; anything else is a protocol error naming `what`. */
async function readData(reader: PktLineReader, what: string): Promise<string> {
  const line = await reader.readLine();
  if (line === null) throw new FetchError("protocol", `origin's ${what} ended early`);
  if (line.startsWith("ERR ")) throw new FetchError("remote", `origin: ${line.slice(4)}`);
  return line;
}

/** The pack data of side-band packets until the flush; band 3 is the origin's fatal error. */
async function* demux(reader: PktLineReader): AsyncGenerator<Uint8Array> {
  for (;;) {
    const pkt = await reader.read();
    if (pkt.type === "flush") return;
    if (pkt.type === "eof") throw new FetchError("protocol", "origin's pack stream ended without a flush");
    if (pkt.type !== "data") throw new FetchError("protocol", `origin sent a ${pkt.type} packet inside the pack`);
    const band = pkt.data[0];
    if (band === 1) yield pkt.data.subarray(1);
    else if (band === 3) throw new FetchError("remote", `origin: ${pktText(pkt.data.subarray(1)).slice(0, 500)}`);
    else if (band !== 2) throw new FetchError("protocol", `origin sent side-band ${band}`);
  }
}
