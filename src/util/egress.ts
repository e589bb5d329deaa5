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

/**
 * The special-purpose address blocks, as IANA lists them, with what we do about each. Sources
 * (compared entry by entry; test/unit/util/egress.test.ts holds the registries' rows):
 *   - IANA IPv4 Special-Purpose Address Registry, https://www.iana.org/assignments/iana-ipv4-special-registry
 *     (entries as of its 2024 updates), plus 224.0.0.0/4 from the IPv4 Multicast Address Space registry;
 *   - IANA IPv6 Special-Purpose Address Registry, https://www.iana.org/assignments/iana-ipv6-special-registry
 *     (as of 2025-10, with 100:0:0:1::/64 of RFC 9780), plus ff00::/8 (multicast) and fec0::/10
 *     (deprecated site-local) from the IPv6 Address Space registry, and every IPv6 address outside
 *     2000::/3, which that registry leaves reserved by the IETF (issue 25 row 12: the
 *     IPv4-translated ::ffff:0:0:0/96 was accepted because no list named it).
 * A block the registry marks "globally reachable" is public (`reason` null) even inside a larger
 * refused block (the anycast services of 192.0.0.0/24 and 2001::/23); the most specific block
 * containing an address decides. `embeds`: the block carries an IPv4 address in its last 32 bits
 * (or bits 16-47 for 6to4) and is judged by that address.
 */
type Block = { net: string; bits: number; reason: string | null; embeds?: "low32" | "6to4" };

const V4_BLOCKS: readonly Block[] = [
  { net: "0.0.0.0", bits: 8, reason: "this network" },
  { net: "10.0.0.0", bits: 8, reason: "private" },
  { net: "100.64.0.0", bits: 10, reason: "shared address space" },
  { net: "127.0.0.0", bits: 8, reason: "loopback" },
  { net: "169.254.0.0", bits: 16, reason: "link-local (cloud metadata)" },
  { net: "172.16.0.0", bits: 12, reason: "private" },
  { net: "192.0.0.0", bits: 24, reason: "IETF protocol assignments" },
  { net: "192.0.0.0", bits: 29, reason: "IPv4 service continuity prefix" },
  { net: "192.0.0.8", bits: 32, reason: "IPv4 dummy address" },
  { net: "192.0.0.9", bits: 32, reason: null }, // Port Control Protocol anycast: globally reachable
  { net: "192.0.0.10", bits: 32, reason: null }, // TURN anycast: globally reachable
  { net: "192.0.0.170", bits: 31, reason: "NAT64/DNS64 discovery" },
  { net: "192.0.2.0", bits: 24, reason: "documentation" },
  { net: "192.31.196.0", bits: 24, reason: null }, // AS112-v4: globally reachable
  { net: "192.52.193.0", bits: 24, reason: null }, // AMT: globally reachable
  { net: "192.88.99.0", bits: 24, reason: "6to4 relay (deprecated)" },
  { net: "192.168.0.0", bits: 16, reason: "private" },
  { net: "192.175.48.0", bits: 24, reason: null }, // Direct Delegation AS112: globally reachable
  { net: "198.18.0.0", bits: 15, reason: "benchmarking" },
  { net: "198.51.100.0", bits: 24, reason: "documentation" },
  { net: "203.0.113.0", bits: 24, reason: "documentation" },
  { net: "224.0.0.0", bits: 4, reason: "multicast" },
  { net: "240.0.0.0", bits: 4, reason: "reserved" },
  { net: "255.255.255.255", bits: 32, reason: "limited broadcast" },
];

const V6_BLOCKS: readonly Block[] = [
  { net: "::", bits: 8, reason: "reserved by the IETF" },
  { net: "::", bits: 128, reason: "unspecified" },
  { net: "::1", bits: 128, reason: "loopback" },
  { net: "::", bits: 96, reason: "IPv4-compatible (deprecated)" },
  { net: "::ffff:0:0", bits: 96, reason: null, embeds: "low32" }, // IPv4-mapped: the IPv4 address decides
  { net: "::ffff:0:0:0", bits: 96, reason: "IPv4-translated" },
  { net: "64:ff9b::", bits: 96, reason: null, embeds: "low32" }, // NAT64 well-known prefix: globally reachable, the IPv4 address decides
  { net: "64:ff9b:1::", bits: 48, reason: "IPv4/IPv6 translation (local use)" },
  { net: "100::", bits: 64, reason: "discard-only" },
  { net: "100:0:0:1::", bits: 64, reason: "dummy prefix" },
  { net: "2001::", bits: 23, reason: "IETF protocol assignments" },
  { net: "2001::", bits: 32, reason: "Teredo" },
  { net: "2001:1::1", bits: 128, reason: null }, // Port Control Protocol anycast: globally reachable
  { net: "2001:1::2", bits: 128, reason: null }, // TURN anycast: globally reachable
  { net: "2001:1::3", bits: 128, reason: null }, // DNS-SD service registration protocol anycast: globally reachable
  { net: "2001:2::", bits: 48, reason: "benchmarking" },
  { net: "2001:3::", bits: 32, reason: null }, // AMT: globally reachable
  { net: "2001:4:112::", bits: 48, reason: null }, // AS112-v6: globally reachable
  { net: "2001:10::", bits: 28, reason: "ORCHID (deprecated)" },
  { net: "2001:20::", bits: 28, reason: null }, // ORCHIDv2: globally reachable
  { net: "2001:30::", bits: 28, reason: null }, // Drone Remote ID entity tags: globally reachable
  { net: "2001:db8::", bits: 32, reason: "documentation" },
  { net: "2002::", bits: 16, reason: null, embeds: "6to4" }, // 6to4: the IPv4 address decides
  { net: "2620:4f:8000::", bits: 48, reason: null }, // Direct Delegation AS112: globally reachable
  { net: "3fff::", bits: 20, reason: "documentation" },
  { net: "5f00::", bits: 16, reason: "segment routing (SRv6) identifiers" },
  { net: "fc00::", bits: 7, reason: "unique local (private)" },
  { net: "fe80::", bits: 10, reason: "link-local" },
  { net: "fec0::", bits: 10, reason: "site-local (deprecated)" },
  { net: "ff00::", bits: 8, reason: "multicast" },
];

function v4ToInt(ip: string): number {
  const p = ip.split(".").map(Number);
  return ((p[0]! << 24) | (p[1]! << 16) | (p[2]! << 8) | p[3]!) >>> 0;
}

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

/** Whether the first `bits` bits of `a` and `b` agree. */
function samePrefix(a: Uint8Array, b: Uint8Array, bits: number): boolean {
  let i = 0;
  for (; bits >= 8; bits -= 8, i++) if (a[i] !== b[i]) return false;
  return bits === 0 || ((a[i]! ^ b[i]!) & (0xff << (8 - bits)) & 0xff) === 0;
}

function v4Bytes(ip: string): Uint8Array {
  const v = v4ToInt(ip);
  return new Uint8Array([v >>> 24, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff]);
}

const COMPILED_V4 = V4_BLOCKS.map((b) => ({ ...b, bytes: v4Bytes(b.net) }));
const COMPILED_V6 = V6_BLOCKS.map((b) => ({ ...b, bytes: v6Bytes(b.net) }));
const GLOBAL_UNICAST = v6Bytes("2000::");

/** The most specific block holding `bytes`, or null. */
function blockOf(bytes: Uint8Array, blocks: typeof COMPILED_V4): (typeof COMPILED_V4)[number] | null {
  let best: (typeof COMPILED_V4)[number] | null = null;
  for (const b of blocks) if (samePrefix(bytes, b.bytes, b.bits) && (!best || b.bits > best.bits)) best = b;
  return best;
}

/** Why `ip` is not a public address, or null when it is. */
export function nonPublicReason(ip: string): string | null {
  const family = isIP(ip);
  if (family === 4) return blockOf(v4Bytes(ip), COMPILED_V4)?.reason ?? null;
  if (family !== 6) return "not an IP address";
  const b = v6Bytes(ip);
  const block = blockOf(b, COMPILED_V6);
  if (block?.embeds === "low32") return nonPublicReason(`${b[12]}.${b[13]}.${b[14]}.${b[15]}`);
  if (block?.embeds === "6to4") return nonPublicReason(`${b[2]}.${b[3]}.${b[4]}.${b[5]}`);
  if (block) return block.reason;
  // Why: outside 2000::/3 nothing is allocated for global unicast (IANA IPv6 Address Space).
  if (!samePrefix(b, GLOBAL_UNICAST, 3)) return "reserved by the IETF";
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
