// Hand-made receive-pack requests the server must refuse cleanly: a report-status that says why
// (`unpack <reason>` or `ng <ref> <reason>`), nothing visible afterwards, and a server that
// still serves a normal clone.
import { afterAll, beforeAll, beforeEach, expect, test, setDefaultTimeout } from "bun:test";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  basicAuth,
  clone,
  createRepo,
  emptyPack,
  FLUSH,
  fsck,
  gitSandbox,
  importHistory,
  initRepo,
  lsRemote,
  packObjects,
  packRevs,
  pkt,
  postReceivePack,
  receivePackBody,
  repoUrl,
  setupOwner,
  ZERO_OID,
  type GitSandbox,
  type OrgOwner,
  type PushReport,
} from "../../helpers/git.ts";
import { client, startServer, type RunningServer } from "../../helpers/server.ts";

// Real git against a real server: seconds per test, more on a busy machine.
setDefaultTimeout(60_000);

let server: RunningServer;
let g: GitSandbox;
let owner: OrgOwner;
let url: string;
let dir: string; // local repository with the server's history and more
let tip: string; // server's main
let before: Record<string, string>;

const REPO = "target";
const CAPS = ["report-status", "ofs-delta", "agent=svc-test/1"];

beforeAll(async () => {
  server = await startServer();
  g = gitSandbox();
  owner = await setupOwner(server, "acme");
  await createRepo(server, owner, REPO);
  url = repoUrl(server, "acme", REPO, owner.token);
  dir = await initRepo(g);
  tip = await importHistory(g, dir, { ref: "refs/heads/main", count: 10 });
  await g.ok(["push", "-q", url, "main"], { cwd: dir });
  before = await lsRemote(g, url);
}, 60_000);

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
}, 30_000);

beforeEach(async () => {
  expect(await lsRemote(g, url)).toEqual(before);
});

/** Pushes a body and checks the aftermath: nothing visible, API fine, a clone still works. */
async function push(body: Uint8Array): Promise<PushReport> {
  const r = await postReceivePack(server, "acme", REPO, body, basicAuth(owner.token));
  expect(r.status).not.toBe(500);
  expect(server.proc.exitCode).toBeNull();
  return r;
}

async function expectUnchanged() {
  expect(await lsRemote(g, url)).toEqual(before);
  const api = await client(server, { token: owner.token }).get(`/v1/orgs/acme/repos/${REPO}`);
  expect(api.status).toBe(200);
  expect(api.body.name).toBe(REPO);
  const c = await clone(g, url);
  expect(await g.ok(["rev-parse", "HEAD"], { cwd: c })).toBe(tip);
  expect(await fsck(g, c)).toMatchObject({ code: 0 });
}

/** The report refuses `ref` with a reason: `unpack <not ok>` or `ng <ref> <reason>`, never `ok <ref>`. */
function expectRefused(r: PushReport, ref: string) {
  expect(r.status).toBe(200);
  expect(r.refs[ref]).not.toBe("ok");
  const unpackFailed = r.unpack !== null && r.unpack !== "ok" && r.unpack.trim().length > 0;
  const refFailed = /^ng \S/.test(r.refs[ref] ?? "");
  expect({ unpackFailed, refFailed, raw: r.raw }).toMatchObject(unpackFailed || refFailed ? {} : { unpackFailed: true });
}

/** A new commit on top of `tip` (not on the server) and a pack of what the server lacks. */
async function nextCommit(label: string): Promise<{ oid: string; pack: Uint8Array }> {
  const oid = await importHistory(g, dir, { ref: `refs/heads/${label}`, count: 1, from: tip, label });
  return { oid, pack: await packRevs(g, dir, [oid, `^${tip}`]) };
}

test("a malformed pkt-line is refused without a server error", async () => {
  const body = new TextEncoder().encode("zzzz this is not a pkt-line at all\n");
  const r = await push(body);
  // No commands could be read, so no report-status is owed; a 4xx or an ERR/unpack error will do.
  const clear = (r.status >= 400 && r.status < 500) || /ERR |unpack (?!ok)/.test(r.raw);
  expect({ clear, status: r.status, raw: r.raw }).toMatchObject({ clear: true });
  await expectUnchanged();
});

test("a pkt-line length running past the end of the body is refused", async () => {
  const body = Buffer.concat([Buffer.from("00ff"), Buffer.from(`${tip} ${tip} refs/heads/main`)]);
  const r = await push(body);
  const clear = (r.status >= 400 && r.status < 500) || /ERR |unpack (?!ok)/.test(r.raw);
  expect({ clear, status: r.status, raw: r.raw }).toMatchObject({ clear: true });
  await expectUnchanged();
});

test("a truncated pack: unpack error, nothing visible", async () => {
  const { oid, pack } = await nextCommit("trunc");
  const cut = pack.subarray(0, Math.floor(pack.length / 2));
  const r = await push(receivePackBody([{ old: ZERO_OID, new: oid, ref: "refs/heads/trunc" }], CAPS, cut));
  expectRefused(r, "refs/heads/trunc");
  expect(r.unpack).not.toBe("ok");
  await expectUnchanged();
});

test("a pack cut right after its header: unpack error", async () => {
  const { oid, pack } = await nextCommit("header-only");
  const r = await push(receivePackBody([{ old: tip, new: oid, ref: "refs/heads/main" }], CAPS, pack.subarray(0, 12)));
  expectRefused(r, "refs/heads/main");
  expect(r.unpack).not.toBe("ok");
  await expectUnchanged();
});

test("a corrupt pack (bytes flipped in the middle): unpack error", async () => {
  // A big random blob dominates the pack, so the flip lands inside object data.
  const oid = await importHistory(g, dir, { ref: "refs/heads/corrupt", count: 1, from: tip, label: "corrupt" });
  writeFileSync(join(dir, "big.txt"), randomBytes(256 * 1024));
  const blob = await g.ok(["hash-object", "-w", "big.txt"], { cwd: dir });
  const tree = await g.ok(["mktree"], { cwd: dir, input: `100644 blob ${blob}\tbig.txt\n` });
  const commit = await g.ok(["commit-tree", tree, "-p", oid, "-m", "big"], { cwd: dir });
  const pack = Buffer.from(await packRevs(g, dir, [commit, `^${tip}`]));
  const mid = Math.floor(pack.length / 2);
  for (let i = mid; i < mid + 8; i++) pack[i] = pack[i]! ^ 0xff;
  const r = await push(receivePackBody([{ old: tip, new: commit, ref: "refs/heads/main" }], CAPS, pack));
  expectRefused(r, "refs/heads/main");
  expect(r.unpack).not.toBe("ok");
  await expectUnchanged();
});

test("a pack whose trailing checksum is wrong: unpack error", async () => {
  const { oid, pack } = await nextCommit("badsum");
  const bad = Buffer.from(pack);
  bad[bad.length - 1] = bad[bad.length - 1]! ^ 0x01;
  const r = await push(receivePackBody([{ old: ZERO_OID, new: oid, ref: "refs/heads/badsum" }], CAPS, bad));
  expectRefused(r, "refs/heads/badsum");
  expect(r.unpack).not.toBe("ok");
  await expectUnchanged();
});

test("an object that fails to parse (a commit with a bad header) is refused", async () => {
  const bogus = await g.ok(["hash-object", "-t", "commit", "--literally", "-w", "--stdin"], {
    cwd: dir,
    input: `tree not-a-tree-id\nparent ${tip}\nauthor nobody\n\nbroken\n`,
  });
  const pack = await packObjects(g, dir, [bogus]);
  const r = await push(receivePackBody([{ old: ZERO_OID, new: bogus, ref: "refs/heads/bogus" }], CAPS, pack));
  expectRefused(r, "refs/heads/bogus");
  await expectUnchanged();
});

test("a tree entry with a bad mode and a truncated id is refused", async () => {
  // Raw tree bytes: mode "99999", name, then only 10 bytes of the 20-byte id.
  const raw = Buffer.concat([Buffer.from("99999 f\0"), Buffer.alloc(10, 0xab)]);
  const tree = await g.ok(["hash-object", "-t", "tree", "--literally", "-w", "--stdin"], { cwd: dir, input: raw });
  const commit = await g.ok(["commit-tree", tree, "-p", tip, "-m", "bad tree"], { cwd: dir }).catch(async () => {
    // commit-tree may refuse to read the tree; write the commit by hand then.
    const body = `tree ${tree}\nparent ${tip}\nauthor A <a@b> 1600000000 +0000\ncommitter A <a@b> 1600000000 +0000\n\nbad tree\n`;
    return g.ok(["hash-object", "-t", "commit", "-w", "--stdin"], { cwd: dir, input: body });
  });
  const pack = await packObjects(g, dir, [commit, tree]);
  const r = await push(receivePackBody([{ old: tip, new: commit, ref: "refs/heads/main" }], CAPS, pack));
  expectRefused(r, "refs/heads/main");
  await expectUnchanged();
});

for (const ref of ["refs/heads/a..b", "refs/heads/x.lock", "refs/heads/sp ace", "refs/heads/", "HEAD", "refs/heads/ctrl\x01"]) {
  test(`a ref name git refuses (${JSON.stringify(ref)}) is refused`, async () => {
    const { oid, pack } = await nextCommit(`ref-${ref.length}`);
    const r = await push(receivePackBody([{ old: ZERO_OID, new: oid, ref }], CAPS, pack));
    expect(r.status).toBe(200);
    expect(r.raw).not.toMatch(/\bok refs\//);
    expect(r.raw).toMatch(/unpack (?!ok)|ng /);
    await expectUnchanged();
  });
}

test("a commit whose parent was never sent is refused (missing object)", async () => {
  // parentOnly exists only here; the pack carries the child but not the parent.
  const parentOnly = await importHistory(g, dir, { ref: "refs/heads/local-only", count: 1, from: tip, label: "local-only" });
  const child = await importHistory(g, dir, { ref: "refs/heads/local-only", count: 1, from: parentOnly, label: "child" });
  const pack = await packRevs(g, dir, [child, `^${parentOnly}`]);
  const r = await push(receivePackBody([{ old: tip, new: child, ref: "refs/heads/main" }], CAPS, pack));
  expectRefused(r, "refs/heads/main");
  await expectUnchanged();
});

test("a command naming an object that exists nowhere (empty pack) is refused", async () => {
  const ghost = "1234567890abcdef1234567890abcdef12345678";
  const r = await push(receivePackBody([{ old: ZERO_OID, new: ghost, ref: "refs/heads/ghost" }], CAPS, emptyPack()));
  expectRefused(r, "refs/heads/ghost");
  await expectUnchanged();
});

test("a tag pointing at a missing object is refused", async () => {
  const tagBody = `object ${"ab".repeat(20)}\ntype commit\ntag dangling\ntagger A <a@b> 1600000000 +0000\n\ndangling\n`;
  const tag = await g.ok(["hash-object", "-t", "tag", "-w", "--stdin"], { cwd: dir, input: tagBody });
  const pack = await packObjects(g, dir, [tag]);
  const r = await push(receivePackBody([{ old: ZERO_OID, new: tag, ref: "refs/tags/dangling" }], CAPS, pack));
  expectRefused(r, "refs/tags/dangling");
  await expectUnchanged();
});

test("commands with a flush but no pack at all are refused", async () => {
  const { oid } = await nextCommit("nopack");
  const r = await push(receivePackBody([{ old: ZERO_OID, new: oid, ref: "refs/heads/nopack" }], CAPS));
  const clear = (r.status >= 400 && r.status < 500) || /unpack (?!ok)|ng refs\/heads\/nopack/.test(r.raw);
  expect({ clear, status: r.status, raw: r.raw }).toMatchObject({ clear: true });
  await expectUnchanged();
});

test("garbage after a valid command list instead of a pack is refused", async () => {
  const { oid } = await nextCommit("garbage");
  const body = Buffer.concat([
    pkt(`${ZERO_OID} ${oid} refs/heads/garbage\0${CAPS.join(" ")}\n`),
    FLUSH,
    Buffer.from("this is not a pack file, not even close"),
  ]);
  const r = await push(body);
  expectRefused(r, "refs/heads/garbage");
  await expectUnchanged();
});

test("after all of it, a normal push still works", async () => {
  const c = await clone(g, url);
  const next = await importHistory(g, c, { ref: "refs/heads/main", count: 3, from: tip, label: "after" });
  await g.ok(["push", "-q", "origin", "main"], { cwd: c });
  expect(await lsRemote(g, url)).toEqual({ ...before, "refs/heads/main": next });
  before = await lsRemote(g, url);
  tip = next;
});
