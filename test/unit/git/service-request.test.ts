// How transports name a git service request (git/service-request.ts), and the ERR framing both
// transports rely on (errPkt, advertiseError): one parser and one framer for HTTP and SSH.
import { describe, expect, test } from "bun:test";
import { advertiseError, serviceHeader } from "../../../src/git/advertise.ts";
import { errPkt } from "../../../src/git/pkt-line.ts";
import { parseSmartHttpRequest, parseSshCommand, protocolVersion } from "../../../src/git/service-request.ts";

const dec = new TextDecoder();

describe("protocolVersion (Git-Protocol header, GIT_PROTOCOL variable)", () => {
  test("the greatest version= item of a colon-separated list; v0 otherwise", () => {
    const cases: Record<string, 0 | 2> = {
      "version=2": 2,
      "version=1:version=2": 2,
      "version=2:version=1": 2,
      "object-format=sha1:version=2": 2,
      " version=2 ": 2,
      "version=1": 0,
      "version=0": 0,
      "version=20": 0,
      "xversion=2": 0,
      "version=2x": 0,
      "version = 2": 0,
      "": 0,
      [`${"a".repeat(5000)}:version=2`]: 0,
    };
    const got = Object.fromEntries(Object.keys(cases).map((v) => [v, protocolVersion(v)]));
    expect(got).toEqual(cases);
    expect([protocolVersion(null), protocolVersion(undefined)]).toEqual([0, 0]);
  });
});

describe("parseSshCommand", () => {
  test("the path forms git sends: quoted or not, leading slash or not, .git or not", () => {
    const forms = ["'sg/app.git'", "'/sg/app.git'", "'sg/app'", "'/sg/app'", "sg/app.git", "/sg/app", "'sg/app.git/'"];
    for (const f of forms)
      expect({ f, got: parseSshCommand(`git-upload-pack ${f}`) }).toEqual({ f, got: { service: "git-upload-pack", org: "sg", repo: "app" } });
    expect(parseSshCommand("git-receive-pack 'sg/dotted.name.git'")).toEqual({ service: "git-receive-pack", org: "sg", repo: "dotted.name" });
  });

  test("anything else is null", () => {
    const bad = [
      "",
      "ls",
      "git-upload-archive 'sg/app.git'",
      "git-upload-pack",
      "git-upload-pack ''",
      "git-upload-pack 'a/b/c'",
      "git-upload-pack '../sg/app.git'",
      "git-upload-pack 'sg/app.git' extra",
      "git-upload-pack 'sg app/x'",
      `git-upload-pack 'sg/${"a".repeat(5000)}.git'`,
    ];
    expect(bad.map(parseSshCommand)).toEqual(bad.map(() => null));
  });
});

describe("parseSmartHttpRequest", () => {
  const parse = (method: string, pathAndQuery: string, contentType: string | null = null) => {
    const url = `http://svc.test${pathAndQuery}`;
    return parseSmartHttpRequest({ method, path: new URL(url).pathname, url, contentType });
  };

  test("info/refs and the two RPCs, with or without .git, percent-decoded", () => {
    expect(parse("GET", "/acme/app.git/info/refs?service=git-upload-pack")).toEqual({
      kind: "advertise",
      service: "git-upload-pack",
      org: "acme",
      repo: "app",
    });
    expect(parse("HEAD", "/acme/app/info/refs?service=git-receive-pack")).toEqual({ kind: "advertise", service: "git-receive-pack", org: "acme", repo: "app" });
    expect(parse("POST", "/acme/my%20app.git/git-receive-pack", "application/x-git-receive-pack-request")).toEqual({
      kind: "rpc",
      service: "git-receive-pack",
      org: "acme",
      repo: "my app",
    });
  });

  test("request problems are typed, not thrown", () => {
    const problem = (r: ReturnType<typeof parse>) => (r?.kind === "invalid" ? r.problem : r?.kind);
    expect({
      dumb: problem(parse("GET", "/acme/app.git/info/refs")),
      otherService: problem(parse("GET", "/acme/app.git/info/refs?service=git-upload-archive")),
      infoRefsPost: problem(parse("POST", "/acme/app.git/info/refs?service=git-upload-pack")),
      rpcGet: problem(parse("GET", "/acme/app.git/git-upload-pack")),
      contentType: problem(parse("POST", "/acme/app.git/git-upload-pack", "application/x-git-receive-pack-request")),
      badEscape: problem(parse("GET", "/acme/%ZZ.git/info/refs?service=git-upload-pack")),
    }).toEqual({ dumb: "dumb-http", otherService: "dumb-http", infoRefsPost: "method", rpcGet: "method", contentType: "content-type", badEscape: "bad-path" });
  });

  test("paths that are not git's are null (the API handles them)", () => {
    for (const p of ["/v1/orgs", "/acme/app.git/HEAD", "/acme/app.git/objects/info/packs", "/a/b/c/info/refs", "/acme/info/refs"]) {
      expect({ p, got: parse("GET", p) }).toEqual({ p, got: null });
    }
  });
});

describe("ERR framing", () => {
  test("errPkt: one packet, newlines folded, long messages cut", () => {
    expect(dec.decode(errPkt("no\nway"))).toBe("000fERR no way\n");
    const long = errPkt("x".repeat(70_000));
    expect(long.length).toBeLessThan(65520);
    expect(parseInt(dec.decode(long.subarray(0, 4)), 16)).toBe(long.length);
  });

  test("advertiseError: the smart-HTTP preamble over HTTP, the bare ERR over SSH", () => {
    expect(dec.decode(advertiseError("git-receive-pack", "denied", { http: true }))).toBe("001f# service=git-receive-pack\n0000000fERR denied\n");
    expect(dec.decode(advertiseError("git-receive-pack", "denied", { http: false }))).toBe("000fERR denied\n");
    expect(dec.decode(serviceHeader("git-upload-pack"))).toBe("001e# service=git-upload-pack\n0000");
  });
});
