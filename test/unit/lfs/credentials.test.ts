// The short-lived LFS credentials (services/lfs/credentials.ts): good for their grant until they
// expire, worthless once altered, signed under another key, or past their time.
import { describe, expect, test } from "bun:test";
import type { Ctx } from "../../../src/services/context.ts";
import { credentialOf, mintCredential, readCredential, type ActionGrant } from "../../../src/services/lfs/credentials.ts";

const ctxWith = (key: number) => ({ config: { secretsKey: new Uint8Array(32).fill(key), storage: { kind: "fs" } } }) as unknown as Ctx;
const grant: ActionGrant = { kind: "action", op: "download", networkId: "n1", repoId: "r1", orgId: "o1", oid: "a".repeat(64), size: 10, exp: 2_000 };

describe("LFS credentials", () => {
  test("read back as minted until they expire", () => {
    const c = mintCredential(ctxWith(1), grant);
    expect(c.startsWith("svclfs_")).toBe(true);
    expect(readCredential(ctxWith(1), c, 1_999)).toEqual(grant);
    expect(readCredential(ctxWith(1), c, 2_000)).toBeNull();
  });

  test("altered, truncated, or signed under another key: nothing", () => {
    const c = mintCredential(ctxWith(1), grant);
    const [payload, mac] = c.slice("svclfs_".length).split(".") as [string, string];
    const other = Buffer.from(JSON.stringify({ ...grant, op: "upload" })).toString("base64url");
    expect(readCredential(ctxWith(1), `svclfs_${other}.${mac}`, 0)).toBeNull();
    expect(readCredential(ctxWith(1), `svclfs_${payload}.${mac.slice(0, -2)}`, 0)).toBeNull();
    expect(readCredential(ctxWith(1), `svclfs_${payload}`, 0)).toBeNull();
    expect(readCredential(ctxWith(2), c, 0)).toBeNull();
    expect(readCredential(ctxWith(1), `svc_${c.slice(7)}`, 0)).toBeNull();
    expect(readCredential(ctxWith(1), `${c}${"x".repeat(2000)}`, 0)).toBeNull();
  });

  test("found in RemoteAuth or Bearer headers only", () => {
    expect(credentialOf("RemoteAuth svclfs_abc.def")).toBe("svclfs_abc.def");
    expect(credentialOf("Bearer svclfs_abc.def")).toBe("svclfs_abc.def");
    expect(credentialOf("Basic svclfs_abc.def")).toBeNull();
    expect(credentialOf("Bearer svc_pat_x")).toBeNull();
    expect(credentialOf(null)).toBeNull();
  });
});
