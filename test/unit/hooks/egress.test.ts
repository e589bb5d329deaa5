// Which addresses a webhook receiver or mirror origin may have (DECISIONS §4), as a table; the
// URL shape checks; and that a name is refused when any address it resolves to is not public.
import { describe, expect, test } from "bun:test";
import { EgressError, egressFetch, nonPublicReason, parseEgressUrl, resolveEgress } from "../../../src/services/hooks/egress.ts";
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
    ["255.255.255.255", "reserved"],
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
  ];
  test.each(rows)("%s → %p", (ip, why) => {
    expect(nonPublicReason(ip)).toBe(why);
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
    for (const same of ["HTTPS://Git.Example.com/team/lib", "https://git.example.com:443/team/lib/", "https://u:p@git.example.com/team/lib.git/", "https://git.example.com/team/lib.git?x=1#y"]) {
      expect(genericOriginKey(same)).toBe(key);
    }
    expect(genericOriginKey("https://git.example.com/Team/lib.git")).not.toBe(key);
    expect(genericOriginKey("http://git.example.com/team/lib.git")).not.toBe(key);
    expect(genericOriginKey("git@example.com:team/lib.git")).toBeNull();
    expect(appOriginKey("Owner/Name")).toBe(appOriginKey("owner/name"));
  });
});
