// Ref advertisement: the server's first message.
//
// From gitprotocol-pack(5) (protocol v0):
//
//   advertised-refs  =  *1("version 1")
//                       (no-refs / list-of-refs)
//                       *shallow
//                       flush-pkt
//   no-refs          =  PKT-LINE(zero-id SP "capabilities^{}"
//                       NUL capability-list)
//   list-of-refs     =  first-ref *other-ref
//   first-ref        =  PKT-LINE(obj-id SP refname
//                       NUL capability-list)
//   other-ref        =  PKT-LINE(other-tip / other-peeled)
//   other-tip        =  obj-id SP refname
//   other-peeled     =  obj-id SP refname "^{}"
//
// From gitprotocol-http(5): smart HTTP prefixes the v0 advertisement with
//   PKT-LINE("# service=$servicename" LF) flush-pkt
// (git http-backend omits it for protocol v2), and from gitprotocol-v2(5):
//   capability-advertisement = protocol-version capability-list flush-pkt
//   protocol-version = PKT-LINE("version 2" LF)
//
// advertiseRefs writes the "# service=" preamble itself when `http` is true, so the HTTP
// layer only sets headers. receive-pack has no v2: it always answers in v0.
//
// A refusal the user should read (a reader pushing) is an advertisement of one ERR packet,
// after the preamble over HTTP: git prints "remote error: <message>" and stops.
import { AGENT, RECEIVE_PACK_CAPABILITIES, UPLOAD_PACK_CAPABILITIES, V2_CAPABILITIES } from "./capabilities.ts";
import { concatBytes, errPkt, FLUSH_PKT, pktLine } from "./pkt-line.ts";
import { peelRefs, type RepoSnapshot, resolveHead } from "./repo-snapshot.ts";
import { ZERO_OID } from "./types.ts";

/** The two services of the smart protocol. */
export type GitService = "git-upload-pack" | "git-receive-pack";

/** Options of advertiseRefs. */
export interface AdvertiseOptions {
  protocol: 0 | 2;
  /** Smart HTTP info/refs response: add "# service=..." + flush for v0. */
  http: boolean;
}

/** The complete first response of `service` (the info/refs body over HTTP, the greeting over SSH). */
export async function advertiseRefs(snapshot: RepoSnapshot, service: GitService, opts: AdvertiseOptions): Promise<Uint8Array<ArrayBuffer>> {
  const parts: Uint8Array[] = [];
  const v2 = opts.protocol === 2 && service === "git-upload-pack";
  if (opts.http && !v2) parts.push(serviceHeader(service));
  if (v2) {
    parts.push(pktLine("version 2"));
    for (const c of V2_CAPABILITIES) parts.push(pktLine(c));
  } else if (service === "git-upload-pack") {
    parts.push(...(await uploadPackRefLines(snapshot)));
  } else {
    parts.push(...receivePackRefLines(snapshot));
  }
  parts.push(FLUSH_PKT);
  return concatBytes(parts);
}

/** The smart-HTTP preamble of an info/refs response: `# service=<service>` and a flush. */
export function serviceHeader(service: GitService): Uint8Array {
  return concatBytes([pktLine(`# service=${service}`), FLUSH_PKT]);
}

/** An advertisement that carries only `ERR <message>` (with the preamble over HTTP). */
export function advertiseError(service: GitService, message: string, opts: { http: boolean }): Uint8Array<ArrayBuffer> {
  return concatBytes(opts.http ? [serviceHeader(service), errPkt(message)] : [errPkt(message)]);
}

async function uploadPackRefLines(snapshot: RepoSnapshot): Promise<Uint8Array[]> {
  const head = resolveHead(snapshot);
  const caps = [...UPLOAD_PACK_CAPABILITIES];
  if (head) caps.push(`symref=HEAD:${head.name}`);
  caps.push("filter", "object-format=sha1", `agent=${AGENT}`);
  const refs = await peelRefs(snapshot);
  const lines: string[] = [];
  if (head) lines.push(`${head.oid} HEAD`);
  for (const r of refs) {
    lines.push(`${r.oid} ${r.name}`);
    if (r.peeled) lines.push(`${r.peeled} ${r.name}^{}`);
  }
  return withCapabilities(lines, caps.join(" "));
}

function receivePackRefLines(snapshot: RepoSnapshot): Uint8Array[] {
  const caps = [...RECEIVE_PACK_CAPABILITIES, "object-format=sha1", `agent=${AGENT}`].join(" ");
  return withCapabilities(
    snapshot.refs.map((r) => `${r.oid} ${r.name}`),
    caps,
  );
}

function withCapabilities(lines: string[], caps: string): Uint8Array[] {
  if (lines.length === 0) return [pktLine(`${ZERO_OID} capabilities^{}\0${caps}`)];
  return lines.map((l, i) => pktLine(i === 0 ? `${l}\0${caps}` : l));
}
