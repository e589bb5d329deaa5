// The SSH keys API (SPEC §4.6 ssh-keys rows, §5.6; DECISIONS §2 SSH key record): accepted and
// refused key types, OpenSSH fingerprints, duplicates, who sees and revokes which keys, deploy keys.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { person, type Person } from "../../helpers/api.ts";
import { mintTokenWithId } from "../../helpers/git.ts";
import { as, postKey, registerKey, sshWorkspace, startSshServer, type SshKey, type SshRunningServer, type SshWorkspace } from "../../helpers/ssh.ts";

setDefaultTimeout(30_000);

let server: SshRunningServer;
let ws: SshWorkspace;
/** keys: owner, admin, member, second member; elsewhere: its owner (an outsider to keys). */
let owner: Person, admin: Person, member: Person, member2: Person, outsider: Person;
/** Accepted kinds, one key each, registered by the member in the first test. */
const ACCEPTED: [string, string, number?][] = [
  ["ed25519", "ed25519"],
  ["ecdsa-256", "ecdsa", 256],
  ["ecdsa-384", "ecdsa", 384],
  ["ecdsa-521", "ecdsa", 521],
  ["rsa-2048", "rsa", 2048],
  ["rsa-4096", "rsa", 4096],
];
const keys: Record<string, SshKey> = {};
let rsa1024: SshKey;
let dsaLine: string;

/** Status and the keys of an error body: `{ error }` and nothing else. */
function errorShape(r: { status: number; body: any }) {
  return { status: r.status, keys: Object.keys(r.body ?? {}), error: typeof r.body?.error };
}

beforeAll(async () => {
  ws = sshWorkspace();
  const made = await Promise.all([
    ...ACCEPTED.map(([name, type, bits]) => ws.keygen(name, type, bits)),
    ws.keygen("rsa-1024", "rsa", 1024),
    ws.keygen("dup", "ed25519"),
    ws.keygen("admin-key", "ed25519"),
    ws.keygen("member2-key", "ed25519"),
    ws.keygen("deploy-key", "ed25519"),
    ws.keygen("spare", "ed25519"),
  ]);
  for (const k of made) keys[k.name] = k;
  rsa1024 = keys["rsa-1024"]!;
  // OpenSSH may be built without DSA; then a hand-made `ssh-dss` blob stands in.
  try {
    dsaLine = (await ws.keygen("dsa", "dsa")).publicKey;
  } catch {
    const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, b.length >> 8, b.length & 0xff]), b]);
    const mp = (n: number) => str(Buffer.concat([Buffer.from([0x00, 0xc1]), Buffer.alloc(n - 2, 0x5a)]));
    dsaLine = `ssh-dss ${Buffer.concat([str(Buffer.from("ssh-dss")), mp(129), mp(21), mp(129), mp(129)]).toString("base64")} handmade`;
  }
  server = await startSshServer();
  owner = await person(server, "keys", "kora@example.com", "owner");
  [admin, member, member2, outsider] = await Promise.all([
    person(server, "keys", "adam@example.com", "admin"),
    person(server, "keys", "mona@example.com", "member"),
    person(server, "keys", "milo@example.com", "member"),
    person(server, "elsewhere", "otto@example.com", "owner"),
  ]);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  ws?.[Symbol.dispose]();
}, 30_000);

describe("accepted key types", () => {
  test("ed25519, ECDSA P-256/384/521 and RSA 2048/4096 register with the fingerprint ssh-keygen -lf prints", async () => {
    for (const [name] of ACCEPTED) {
      const key = keys[name]!;
      const r = await postKey(server, member, "keys", { public_key: key.publicKey, label: name });
      expect({ name, status: r.status, body: r.body }).toEqual({
        name,
        status: 201,
        body: { id: expect.any(String), kind: "personal", label: name, fingerprint: key.fingerprint, token_id: null, created_at: expect.any(Number) },
      });
      expect(r.body.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    }
  });

  test("the listing carries the same fingerprints", async () => {
    const r = await as(server, member).get("/v1/orgs/keys/ssh-keys");
    expect(r.status).toBe(200);
    const listed = Object.fromEntries(r.body.keys.map((k: any) => [k.label, k.fingerprint]));
    expect(listed).toEqual(Object.fromEntries(ACCEPTED.map(([name]) => [name, keys[name]!.fingerprint])));
  });

  test("a key line with no comment, or with extra whitespace, registers", async () => {
    const [type, b64] = keys.spare!.publicKey.split(" ");
    const r = await postKey(server, member2, "keys", { public_key: `  ${type}   ${b64}  \n`, label: "bare" });
    expect({ status: r.status, fingerprint: r.body.fingerprint }).toEqual({ status: 201, fingerprint: keys.spare!.fingerprint });
  });
});

describe("refused keys", () => {
  test("RSA of 1024 bits is refused with 400", async () => {
    const r = await postKey(server, member, "keys", { public_key: rsa1024.publicKey, label: "weak" });
    expect(errorShape(r)).toEqual({ status: 400, keys: ["error"], error: "string" });
    expect(r.body.error).toMatch(/2048/);
  });

  test("DSA is refused with 400", async () => {
    const r = await postKey(server, member, "keys", { public_key: dsaLine, label: "dsa" });
    expect(errorShape(r)).toEqual({ status: 400, keys: ["error"], error: "string" });
  });

  test("malformed lines are refused with 400: garbage, truncated blobs, type/blob mismatch, empty, a private key", async () => {
    const blobOf = (k: SshKey) => k.publicKey.split(" ")[1]!;
    const cases: Record<string, string> = {
      "not base64": "ssh-ed25519 !!!not-base64!!!",
      "base64 of junk": `ssh-ed25519 ${Buffer.from("hello, this is not a key").toString("base64")}`,
      "tiny blob": "ssh-ed25519 AAAA",
      "truncated blob": `ssh-ed25519 ${Buffer.from(blobOf(keys.ed25519!), "base64").subarray(0, 30).toString("base64")}`,
      "rsa prefix, ed25519 blob": `ssh-rsa ${blobOf(keys.ed25519!)}`,
      "ed25519 prefix, rsa blob": `ssh-ed25519 ${blobOf(keys["rsa-2048"]!)}`,
      "p256 prefix, p384 blob": `ecdsa-sha2-nistp256 ${blobOf(keys["ecdsa-384"]!)}`,
      "unknown type": `ssh-foo ${blobOf(keys.ed25519!)}`,
      "type only": "ssh-ed25519",
      empty: "",
      blank: "   \n",
      "private key": await Bun.file(keys.spare!.path).text(),
    };
    const got: Record<string, unknown> = {};
    for (const [name, line] of Object.entries(cases)) got[name] = errorShape(await postKey(server, member, "keys", { public_key: line, label: name }));
    const want = Object.fromEntries(Object.keys(cases).map((n) => [n, { status: 400, keys: ["error"], error: "string" }]));
    expect(got).toEqual(want);
  });

  test("well-framed blobs that cannot be keys are 400: short or wrong-curve ECDSA points, an RSA key without exponent", async () => {
    // Posted in another org, so that if they are wrongly accepted the listings below stay exact.
    const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, b.length >> 8, b.length & 0xff]), b]);
    const blob = (parts: Buffer[]) => Buffer.concat(parts.map(str)).toString("base64");
    const p256Point = Buffer.from(keys["ecdsa-256"]!.publicKey.split(" ")[1]!, "base64").subarray(4 + 19 + 4 + 8 + 4);
    expect(p256Point.length).toBe(65);
    const modulus = Buffer.from(keys["rsa-2048"]!.publicKey.split(" ")[1]!, "base64").subarray(4 + 7 + 4 + 3 + 4);
    const cases: Record<string, string> = {
      "P-256 point of 11 bytes": `ecdsa-sha2-nistp256 ${blob([Buffer.from("ecdsa-sha2-nistp256"), Buffer.from("nistp256"), Buffer.concat([Buffer.from([4]), Buffer.alloc(10, 7)])])}`,
      "P-384 label, P-256 point": `ecdsa-sha2-nistp384 ${blob([Buffer.from("ecdsa-sha2-nistp384"), Buffer.from("nistp384"), p256Point])}`,
      "RSA with an empty exponent": `ssh-rsa ${blob([Buffer.from("ssh-rsa"), Buffer.alloc(0), modulus])}`,
    };
    const got: Record<string, number> = {};
    for (const [name, line] of Object.entries(cases)) got[name] = (await postKey(server, outsider, "elsewhere", { public_key: line, label: name })).status;
    expect(got).toEqual(Object.fromEntries(Object.keys(cases).map((n) => [n, 400])));
  });

  test("a missing public_key or label, or an empty label, is 400", async () => {
    const line = keys.dup!.publicKey;
    const got = [
      errorShape(await postKey(server, member, "keys", { label: "no key" })),
      errorShape(await postKey(server, member, "keys", { public_key: line })),
      errorShape(await postKey(server, member, "keys", { public_key: line, label: "" })),
    ];
    expect(got).toEqual(Array(3).fill({ status: 400, keys: ["error"], error: "string" }));
  });

  test("the same key twice is 409, whatever its comment, whoever asks, in whichever org", async () => {
    const first = await registerKey(server, member, "keys", keys.dup!);
    expect(first.fingerprint).toBe(keys.dup!.fingerprint);
    const [type, b64] = keys.dup!.publicKey.split(" ");
    const again = await postKey(server, member, "keys", { public_key: keys.dup!.publicKey, label: "again" });
    const otherComment = await postKey(server, member2, "keys", { public_key: `${type} ${b64} someone-else@laptop`, label: "theirs" });
    const otherOrg = await postKey(server, outsider, "elsewhere", { public_key: keys.dup!.publicKey, label: "mine now" });
    expect([errorShape(again), errorShape(otherComment), errorShape(otherOrg)]).toEqual(Array(3).fill({ status: 409, keys: ["error"], error: "string" }));
  });
});

describe("who sees and revokes what", () => {
  let adminKeyId: string;
  let member2KeyId: string;

  beforeAll(async () => {
    adminKeyId = (await registerKey(server, admin, "keys", keys["admin-key"]!)).id;
    member2KeyId = (await registerKey(server, member2, "keys", keys["member2-key"]!)).id;
  });

  test("a member lists only their own keys; an admin lists every key of the org", async () => {
    const mine = await as(server, member2).get("/v1/orgs/keys/ssh-keys");
    expect({ status: mine.status, labels: mine.body.keys.map((k: any) => k.label).sort() }).toEqual({ status: 200, labels: ["bare", "member2-key"] });
    const all = await as(server, admin).get("/v1/orgs/keys/ssh-keys");
    expect(all.status).toBe(200);
    const labels = all.body.keys.map((k: any) => k.label).sort();
    expect(labels).toEqual([...ACCEPTED.map(([n]) => n), "admin-key", "bare", "dup", "member2-key"].sort());
    for (const k of all.body.keys) expect(Object.keys(k).sort()).toEqual(["created_at", "fingerprint", "id", "kind", "label", "token_id"]);
  });

  test("keys registered in another org are not listed here", async () => {
    const spare = await ws.keygen("outsider-key", "ed25519");
    await registerKey(server, outsider, "elsewhere", spare);
    const all = await as(server, owner).get("/v1/orgs/keys/ssh-keys");
    expect(all.body.keys.map((k: any) => k.fingerprint)).not.toContain(spare.fingerprint);
  });

  test("a member deleting someone else's key gets 404 and the key stays", async () => {
    const r = await as(server, member).delete(`/v1/orgs/keys/ssh-keys/${adminKeyId}`);
    expect(errorShape(r)).toEqual({ status: 404, keys: ["error"], error: "string" });
    const all = await as(server, admin).get("/v1/orgs/keys/ssh-keys");
    expect(all.body.keys.map((k: any) => k.id)).toContain(adminKeyId);
  });

  test("an unknown key id is 404", async () => {
    const r = await as(server, admin).delete("/v1/orgs/keys/ssh-keys/nope");
    expect(r.status).toBe(404);
  });

  test("a member deletes their own key (204, then 404), and it can be registered again", async () => {
    const first = await as(server, member2).delete(`/v1/orgs/keys/ssh-keys/${member2KeyId}`);
    expect(first.status).toBe(204);
    const again = await as(server, member2).delete(`/v1/orgs/keys/ssh-keys/${member2KeyId}`);
    expect(again.status).toBe(404);
    const mine = await as(server, member2).get("/v1/orgs/keys/ssh-keys");
    expect(mine.body.keys.map((k: any) => k.id)).not.toContain(member2KeyId);
    const back = await registerKey(server, member2, "keys", keys["member2-key"]!);
    expect(back.fingerprint).toBe(keys["member2-key"]!.fingerprint);
    member2KeyId = back.id;
  });

  test("an admin may delete a member's key", async () => {
    const r = await as(server, admin).delete(`/v1/orgs/keys/ssh-keys/${member2KeyId}`);
    expect(r.status).toBe(204);
  });

  test("another org's owner cannot delete or list this org's keys", async () => {
    const del = await as(server, outsider).delete(`/v1/orgs/keys/ssh-keys/${adminKeyId}`);
    expect(del.status).toBe(404);
    const list = await as(server, outsider).get("/v1/orgs/keys/ssh-keys");
    expect(list.status).toBe(404);
    const intoForeign = await postKey(server, outsider, "keys", { public_key: (await ws.keygen("foreign", "ed25519")).publicKey, label: "foreign" });
    expect([403, 404]).toContain(intoForeign.status);
  });

  test("anonymous callers get 401 for create, list and delete", async () => {
    const got = [
      (await postKey(server, undefined, "keys", { public_key: keys.spare!.publicKey, label: "anon" })).status,
      (await as(server, undefined).get("/v1/orgs/keys/ssh-keys")).status,
      (await as(server, undefined).delete(`/v1/orgs/keys/ssh-keys/${adminKeyId}`)).status,
    ];
    expect(got).toEqual([401, 401, 401]);
  });
});

describe("deploy keys", () => {
  let serviceTokenId: string;

  beforeAll(async () => {
    serviceTokenId = (await mintTokenWithId(server, owner.cookie, "keys", { scopes: ["repo:read"], label: "ci reader", kind: "service" })).id;
  });

  test("a member cannot create a deploy key (403 or 404)", async () => {
    const r = await postKey(server, member, "keys", { public_key: keys["deploy-key"]!.publicKey, label: "sneaky", token_id: serviceTokenId });
    expect([403, 404]).toContain(r.status);
    expect(Object.keys(r.body)).toEqual(["error"]);
  });

  test("an unknown token_id, or another org's token, is 404", async () => {
    const foreign = (await mintTokenWithId(server, outsider.cookie, "elsewhere", { scopes: ["repo:read"], label: "theirs", kind: "service" })).id;
    const unknown = await postKey(server, admin, "keys", { public_key: keys["deploy-key"]!.publicKey, label: "deploy", token_id: "tok_does_not_exist" });
    const cross = await postKey(server, admin, "keys", { public_key: keys["deploy-key"]!.publicKey, label: "deploy", token_id: foreign });
    expect([errorShape(unknown), errorShape(cross)]).toEqual(Array(2).fill({ status: 404, keys: ["error"], error: "string" }));
  });

  test("an admin creates one: kind deploy, naming the token", async () => {
    const r = await postKey(server, admin, "keys", { public_key: keys["deploy-key"]!.publicKey, label: "deploy", token_id: serviceTokenId });
    expect({ status: r.status, body: r.body }).toEqual({
      status: 201,
      body: {
        id: expect.any(String),
        kind: "deploy",
        label: "deploy",
        fingerprint: keys["deploy-key"]!.fingerprint,
        token_id: serviceTokenId,
        created_at: expect.any(Number),
      },
    });
    const all = await as(server, admin).get("/v1/orgs/keys/ssh-keys");
    expect(all.body.keys.find((k: any) => k.id === r.body.id)).toEqual(r.body);
    const mine = await as(server, member).get("/v1/orgs/keys/ssh-keys");
    expect(mine.body.keys.map((k: any) => k.id)).not.toContain(r.body.id);
  });
});

describe("paging the key list (DECISIONS §1)", () => {
  test("limit and cursor walk every key once, by creation; a member's pages hold only their own; 400 for a bad limit or cursor", async () => {
    const pager = await person(server, "keypages", "kip@example.com", "owner");
    const pagee = await person(server, "keypages", "kim@example.com", "member");
    const made = await Promise.all([0, 1, 2, 3].map((i) => ws.keygen(`page-${i}`, "ed25519")));
    const ids: string[] = [];
    for (const k of made.slice(0, 3)) ids.push((await registerKey(server, pager, "keypages", k)).id);
    const theirs = (await registerKey(server, pagee, "keypages", made[3]!)).id;

    const walk = async (who: Person, limit: number) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const r = await as(server, who).get(`/v1/orgs/keypages/ssh-keys?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        expect(r.status).toBe(200);
        expect(r.body.keys.length).toBeLessThanOrEqual(limit);
        seen.push(...r.body.keys.map((k: any) => k.id));
        cursor = r.body.next_cursor;
        pages++;
      } while (cursor !== null && pages < 20);
      return { seen, pages };
    };
    const all = await as(server, pager).get("/v1/orgs/keypages/ssh-keys");
    expect({ ids: all.body.keys.map((k: any) => k.id), next_cursor: all.body.next_cursor }).toEqual({ ids: [...ids, theirs], next_cursor: null });
    expect(await walk(pager, 1)).toEqual({ seen: [...ids, theirs], pages: 4 });
    expect(await walk(pager, 3)).toEqual({ seen: [...ids, theirs], pages: 2 });
    expect(await walk(pagee, 1)).toEqual({ seen: [theirs], pages: 1 });

    for (const q of ["limit=0", "limit=101", "limit=many", "cursor=%%%", `cursor=${Buffer.from(JSON.stringify({ after: 1 })).toString("base64url")}`]) {
      const r = await as(server, pager).get(`/v1/orgs/keypages/ssh-keys?${q}`);
      expect({ q, shape: errorShape(r) }).toEqual({ q, shape: { status: 400, keys: ["error"], error: "string" } });
    }
  });
});
