// Which addresses a webhook receiver or mirror origin may have (DECISIONS §4), as a table; the
// URL shape checks; and that a name is refused when any address it resolves to is not public.
import { describe, expect, test } from "bun:test";
import { EgressError, egressFetch, nonPublicReason, parseEgressUrl, resolveEgress } from "../../../src/util/egress.ts";
import { appOriginKey, genericOriginKey } from "../../../src/services/mirrors/origin.ts";

describe("nonPublicReason", () => {
  const rows: [string, string | null][] = [
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["172.31.255.255", "private"],
    ["172.32.0.1", null],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local (cloud metadata)"],
    ["100.100.100.200", "shared address space"],
    ["0.0.0.0", "this network"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "limited broadcast"],
    ["240.0.0.1", "reserved"],
    ["192.0.2.10", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["8.8.8.8", null],
    ["1.1.1.1", null],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "link-local (cloud metadata)"],
    ["::ffff:8.8.8.8", null],
    ["64:ff9b::10.0.0.1", "private"],
    ["2002:c0a8:0101::1", "private"],
    ["fd00:ec2::254", "unique local (private)"],
    ["fc00::1", "unique local (private)"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "documentation"],
    ["2606:4700:4700::1111", null],
    ["2001:4860:4860::8888", null],
    // Issue 25 row 12: the IPv4-translated form of 127.0.0.1 was accepted.
    ["::ffff:0:7f00:1", "IPv4-translated"],
    ["::ffff:0:808:808", "IPv4-translated"],
    ["::7f00:1", "IPv4-compatible (deprecated)"],
    ["::8.8.8.8", "IPv4-compatible (deprecated)"],
    ["64:ff9b::8.8.8.8", null],
    ["64:ff9b:1::8.8.8.8", "IPv4/IPv6 translation (local use)"],
    ["2002:0808:0808::1", null],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"],
    ["5f00::1", "segment routing (SRv6) identifiers"],
    ["3fff:1::1", "documentation"],
    ["4000::1", "reserved by the IETF"],
    ["e000::1", "reserved by the IETF"],
    ["fec0::1", "site-local (deprecated)"],
  ];
  test.each(rows)("%s → %p", (ip, why) => {
    expect(nonPublicReason(ip)).toBe(why);
  });
});

/**
 * The IANA special-purpose registries, row by row: [block, globally reachable]. IPv4:
 * https://www.iana.org/assignments/iana-ipv4-special-registry; IPv6:
 * https://www.iana.org/assignments/iana-ipv6-special-registry (Teredo's and 6to4's "N/A" are
 * listed as not reachable here: Teredo is refused, 6to4 judged by its IPv4 address). Plus the
 * multicast blocks of the address-space registries.
 */
const REGISTRY: [string, boolean][] = [
  ["0.0.0.0/8", false],
  ["0.0.0.0/32", false],
  ["10.0.0.0/8", false],
  ["100.64.0.0/10", false],
  ["127.0.0.0/8", false],
  ["169.254.0.0/16", false],
  ["172.16.0.0/12", false],
  ["192.0.0.0/24", false],
  ["192.0.0.0/29", false],
  ["192.0.0.8/32", false],
  ["192.0.0.9/32", true],
  ["192.0.0.10/32", true],
  ["192.0.0.170/32", false],
  ["192.0.0.171/32", false],
  ["192.0.2.0/24", false],
  ["192.31.196.0/24", true],
  ["192.52.193.0/24", true],
  ["192.88.99.0/24", false],
  ["192.168.0.0/16", false],
  ["192.175.48.0/24", true],
  ["198.18.0.0/15", false],
  ["198.51.100.0/24", false],
  ["203.0.113.0/24", false],
  ["240.0.0.0/4", false],
  ["255.255.255.255/32", false],
  ["224.0.0.0/4", false],
  ["::1/128", false],
  ["::/128", false],
  ["::ffff:0:0/96", false],
  ["64:ff9b::/96", true],
  ["64:ff9b:1::/48", false],
  ["100::/64", false],
  ["100:0:0:1::/64", false],
  ["2001::/23", false],
  ["2001::/32", false],
  ["2001:1::1/128", true],
  ["2001:1::2/128", true],
  ["2001:1::3/128", true],
  ["2001:2::/48", false],
  ["2001:3::/32", true],
  ["2001:4:112::/48", true],
  ["2001:10::/28", false],
  ["2001:20::/28", true],
  ["2001:30::/28", true],
  ["2001:db8::/32", false],
  ["2002::/16", false],
  ["2620:4f:8000::/48", true],
  ["3fff::/20", false],
  ["5f00::/16", false],
  ["fc00::/7", false],
  ["fe80::/10", false],
  ["ff00::/8", false],
];

describe("the IANA special-purpose registries, every row", () => {
  test.each(REGISTRY)("%s: refused unless globally reachable (%p)", (block, reachable) => {
    const [net] = block.split("/");
    // The block's first address; for blocks that carry an IPv4 address, one that carries a public one.
    const probe =
      net === "::ffff:0:0"
        ? "::ffff:8.8.8.8"
        : net === "64:ff9b::"
          ? "64:ff9b::8.8.8.8"
          : net === "2002::"
            ? "2002:a00:1::1"
            : net === "::" && block === "::/128"
              ? "::"
              : net!;
    const why = nonPublicReason(probe);
    if (block === "::ffff:0:0/96")
      expect(why).toBeNull(); // IPv4-mapped: judged by its (public) IPv4 address
    else if (block === "2002::/16")
      expect(why).toBe("private"); // 6to4 of 10.0.0.1: judged by its IPv4 address
    else expect({ block, refused: why !== null }).toEqual({ block, refused: !reachable });
  });
});

describe("URLs and names", () => {
  test("only absolute http(s) URLs with a host; credentials only where allowed", () => {
    for (const bad of ["ftp://example.com/x", "file:///etc/passwd", "example.com/hook", "http://", "gopher://x"]) {
      expect(() => parseEgressUrl(bad, "url")).toThrow(EgressError);
    }
    expect(() => parseEgressUrl("https://u:p@example.com/x", "url")).toThrow("must not carry credentials");
    expect(parseEgressUrl("https://u:p@example.com/x", "url", { allowCredentials: true }).username).toBe("u");
  });

  test("a name resolving to loopback is refused unless private addresses are allowed; literals need no lookup", async () => {
    await expect(resolveEgress(new URL("http://localhost:9/"), false)).rejects.toThrow(/loopback address/);
    expect((await resolveEgress(new URL("http://localhost:9/"), true)).address).toMatch(/^(127\.0\.0\.1|::1)$/);
    expect(await resolveEgress(new URL("http://[2606:4700:4700::1111]/"), false)).toEqual({ address: "2606:4700:4700::1111", family: 6 });
    await expect(resolveEgress(new URL("http://0x7f.1/"), false)).rejects.toThrow(/loopback/);
    await expect(resolveEgress(new URL("http://no-such-host.invalid/"), false)).rejects.toThrow("cannot resolve no-such-host.invalid");
  });

  test("egressFetch connects to the checked address and keeps the Host header; a refused address makes no request", async () => {
    const seen: string[] = [];
    using s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (r) => (seen.push(r.headers.get("host")!), new Response("ok")) });
    const res = await egressFetch(new URL(`http://localhost:${s.port}/x`), { method: "GET", headers: {}, allowPrivate: true });
    expect(await res.text()).toBe("ok");
    expect(seen).toEqual([`localhost:${s.port}`]);
    await expect(egressFetch(new URL(`http://localhost:${s.port}/x`), { method: "GET", headers: {}, allowPrivate: false })).rejects.toThrow(EgressError);
    expect(seen).toHaveLength(1);
  });
});

describe("origin keys (what inbound pushes match)", () => {
  test("generic URLs: case of scheme and host, default port, credentials, .git and trailing slashes do not matter", () => {
    const key = genericOriginKey("https://git.example.com/team/lib.git")!;
    for (const same of [
      "HTTPS://Git.Example.com/team/lib",
      "https://git.example.com:443/team/lib/",
      "https://u:p@git.example.com/team/lib.git/",
      "https://git.example.com/team/lib.git?x=1#y",
    ]) {
      expect(genericOriginKey(same)).toBe(key);
    }
    expect(genericOriginKey("https://git.example.com/Team/lib.git")).not.toBe(key);
    expect(genericOriginKey("http://git.example.com/team/lib.git")).not.toBe(key);
    expect(genericOriginKey("git@example.com:team/lib.git")).toBeNull();
    expect(appOriginKey("Owner/Name")).toBe(appOriginKey("owner/name"));
  });
});
