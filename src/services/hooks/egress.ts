// Requests to addresses users gave us (webhook receivers, mirror origins). Such an address is
// untrusted: it could aim the server at itself, at the private network behind it or at a cloud
// metadata endpoint. So the host is resolved here, every address it resolves to must be public
// (unless the operator allows private ones), and the connection goes to the address that was
// checked (the URL is rewritten to it, with the Host header and the TLS server name kept), so a
// second DNS answer cannot swap it. Redirects are never followed and no proxy is used.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

/** Why an address was refused. */
export class EgressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EgressError";
  }
}

/** IPv4 ranges that are not the public internet: [network, prefix length, what]. */
const V4_BLOCKED: [string, number, string][] = [
  ["0.0.0.0", 8, "this network"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared address space"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local (cloud metadata)"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "6to4 relay"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

function v4ToInt(ip: string): number {
  const p = ip.split(".").map(Number);
  return ((p[0]! << 24) | (p[1]! << 16) | (p[2]! << 8) | p[3]!) >>> 0;
}

const V4_RANGES = V4_BLOCKED.map(([net, bits, what]) => ({ base: v4ToInt(net), mask: bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0, what }));

/** The 16 bytes of an IPv6 address (with an embedded IPv4 tail allowed). */
function v6Bytes(ip: string): Uint8Array {
  let text = ip.split("%")[0]!;
  const out = new Uint8Array(16);
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const v = v4ToInt(tail[1]!);
    text = `${text.slice(0, -tail[1]!.length)}${((v >>> 16) & 0xffff).toString(16)}:${(v & 0xffff).toString(16)}`;
  }
  const [head, rest] = text.includes("::") ? text.split("::") : [text, null];
  const hs = head ? head.split(":").filter((x) => x !== "") : [];
  const rs = rest ? rest.split(":").filter((x) => x !== "") : [];
  const groups = rest === null ? hs : [...hs, ...new Array(8 - hs.length - rs.length).fill("0"), ...rs];
  groups.forEach((g, i) => {
    const n = Number.parseInt(g, 16);
    out[2 * i] = (n >> 8) & 0xff;
    out[2 * i + 1] = n & 0xff;
  });
  return out;
}

/** Why `ip` is not a public address, or null when it is. */
export function nonPublicReason(ip: string): string | null {
  const family = isIP(ip);
  if (family === 4) {
    const v = v4ToInt(ip);
    for (const r of V4_RANGES) if (((v & r.mask) >>> 0) === r.base) return r.what;
    return null;
  }
  if (family !== 6) return "not an IP address";
  const b = v6Bytes(ip);
  const zeroUpTo = (n: number) => b.subarray(0, n).every((x) => x === 0);
  if (zeroUpTo(15) && (b[15] === 0 || b[15] === 1)) return b[15] === 1 ? "loopback" : "unspecified";
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) name an IPv4 address.
  const embedded = (at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
  if (zeroUpTo(10) && b[10] === 0xff && b[11] === 0xff) return nonPublicReason(embedded(12));
  if (zeroUpTo(12)) return nonPublicReason(embedded(12));
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) return nonPublicReason(embedded(12));
  // 6to4 (2002:a.b.c.d::/48) carries one too.
  if (b[0] === 0x20 && b[1] === 0x02) return nonPublicReason(embedded(2));
  if ((b[0]! & 0xfe) === 0xfc) return "unique local (private)";
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return "link-local";
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return "site-local";
  if (b[0] === 0xff) return "multicast";
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x0d && b[3] === 0xb8) return "documentation";
  if (b[0] === 0x01 && b[1] === 0x00 && b.subarray(2, 8).every((x) => x === 0)) return "discard";
  return null;
}

/** Checks an http(s) URL's shape: absolute, a host, no credentials unless `allowCredentials`. */
export function parseEgressUrl(raw: string, what: string, opts: { allowCredentials?: boolean } = {}): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new EgressError(`${what} must be an absolute http:// or https:// URL`);
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || !u.hostname) throw new EgressError(`${what} must be an absolute http:// or https:// URL`);
  if (!opts.allowCredentials && (u.username || u.password)) throw new EgressError(`${what} must not carry credentials`);
  return u;
}

/** The address to connect to for `url`'s host: every address it resolves to must be public unless `allowPrivate`. */
export async function resolveEgress(url: URL, allowPrivate: boolean): Promise<{ address: string; family: 4 | 6 }> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let addresses: { address: string; family: number }[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch {
      throw new EgressError(`cannot resolve ${host}`);
    }
    if (addresses.length === 0) throw new EgressError(`cannot resolve ${host}`);
  }
  if (!allowPrivate) {
    // Why all of them: a name with one public and one private address could be connected to either.
    for (const a of addresses) {
      const why = nonPublicReason(a.address);
      if (why) throw new EgressError(`${host} resolves to ${a.address}, a ${why} address; only public addresses are allowed`);
    }
  }
  const chosen = addresses.find((a) => a.family === 4) ?? addresses[0]!;
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

/** Options of egressFetch. */
export interface EgressInit {
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array | string;
  signal?: AbortSignal;
  allowPrivate: boolean;
}

/**
 * fetch() to a user-given URL: resolved and checked first, connected to the checked address,
 * redirects answered as they are (3xx), no proxy. Throws EgressError for a refused address.
 */
export async function egressFetch(url: URL, init: EgressInit): Promise<Response> {
  const { address, family } = await resolveEgress(url, init.allowPrivate);
  const pinned = new URL(url.href);
  pinned.username = "";
  pinned.password = "";
  pinned.hostname = family === 6 ? `[${address}]` : address;
  const hostName = url.hostname.replace(/^\[|\]$/g, "");
  const headers: Record<string, string> = { ...init.headers, host: url.host };
  const options: BunFetchRequestInit = {
    method: init.method,
    headers,
    body: init.body as BodyInit | undefined,
    signal: init.signal,
    redirect: "manual",
    proxy: false,
    // The certificate is still checked against the name the user gave, not the address.
    ...(url.protocol === "https:" && !isIP(hostName) ? { tls: { serverName: hostName } } : {}),
  };
  return fetch(pinned.href, options);
}
