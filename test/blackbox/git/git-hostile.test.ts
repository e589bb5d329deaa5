// Issue 11, the git findings of the hostile-input probe: an RPC with no body was held until the
// idle timeout, a body that is not gzip got an empty 200 (and a stack on stderr), and objects git
// refuses under `receive.fsckObjects` (a .gitmodules naming `../../modules/evil`, `.git` spelled
// the ways checkouts on macOS and Windows read it, zero-padded modes) were accepted by push and
// by the commit API, so that clients with `transfer.fsckObjects` could no longer clone.
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { basicAuth, clone, createRepo, gitSandbox, initRepo, lsRemote, repoUrl, setupOwner, type GitSandbox, type OrgOwner } from "../../helpers/git.ts";
import { client, startServer, type RunningServer } from "../../helpers/server.ts";

setDefaultTimeout(60_000);

let server: RunningServer;
let g: GitSandbox;
let owner: OrgOwner;
let url: string;

beforeAll(async () => {
  server = await startServer({ env: { SVC_LOG: "info" } });
  g = gitSandbox();
  owner = await setupOwner(server, "acme");
  await createRepo(server, owner, "app");
  url = repoUrl(server, "acme", "app", owner.token);
  const dir = await initRepo(g);
  writeFileSync(join(dir, "README"), "hello\n");
  await g.ok(["add", "README"], { cwd: dir });
  await g.ok(["commit", "-qm", "first"], { cwd: dir });
  await g.ok(["push", "-q", url, "HEAD:refs/heads/main"], { cwd: dir });
}, 60_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
});

/** A git RPC POST; a hung request fails the test through the abort (well before the server's 120 s idle timeout). */
async function rpc(service: "git-upload-pack" | "git-receive-pack", body: Uint8Array | undefined, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/acme/app.git/${service}`, {
    method: "POST",
    headers: { authorization: basicAuth(owner.token), "content-type": `application/x-${service}-request`, ...headers },
    body: body as Uint8Array<ArrayBuffer> | undefined,
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

/** Waits until the server has logged `count` access lines for `path` (stderr arrives through a pipe); returns them. */
async function waitForAccessLines(path: string, count: number): Promise<{ status: number }[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const lines = accessLines(path);
    if (lines.length >= count || Date.now() > deadline) return lines;
    await Bun.sleep(20);
  }
}

/** The access-log lines (JSON) of requests to `path`. */
function accessLines(path: string): { status: number }[] {
  return server
    .stderr()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === "request" && l.path === path);
}

describe("RPC bodies the engine cannot read", () => {
  test("no body: 400 at once with a plain-text protocol error, and an access-log line (finding: held 120 s, unlogged)", async () => {
    for (const service of ["git-upload-pack", "git-receive-pack"] as const) {
      const before = accessLines(`/acme/app.git/${service}`).length;
      for (const body of [undefined, new Uint8Array(0)]) {
        const r = await rpc(service, body);
        expect({ service, status: r.status, type: r.type, text: r.text }).toEqual({
          service,
          status: 400,
          type: "text/plain; charset=utf-8",
          text: "protocol error: empty request body\n",
        });
      }
      const lines = await waitForAccessLines(`/acme/app.git/${service}`, before + 2);
      expect(lines.length).toBe(before + 2);
      expect(lines.slice(-2).map((l) => l.status)).toEqual([400, 400]);
    }
  });

  test("a body that is not gzip: 400 naming it, no 200, no stack on stderr (finding: empty 200 and a stack)", async () => {
    for (const service of ["git-upload-pack", "git-receive-pack"] as const) {
      for (const body of [new Uint8Array([1, 2, 3, 4, 5]), new TextEncoder().encode("0032want 0000000000000000000000000000000000000000\n0000")]) {
        const r = await rpc(service, body, { "content-encoding": "gzip" });
        expect({ service, status: r.status, text: r.text }).toEqual({
          service,
          status: 400,
          text: "protocol error: the request body is not valid gzip data\n",
        });
      }
    }
    // Gzip that breaks off after its first bytes decoded: the engine has begun, so the error is
    // told in band, as git expects it (an ERR packet, which git prints as "remote error: …").
    const gz = Bun.gzipSync(new TextEncoder().encode("0032want 0000000000000000000000000000000000000000\n00000009done\n"));
    const r = await rpc("git-upload-pack", gz.subarray(0, 12), { "content-encoding": "gzip" });
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/^[0-9a-f]{4}ERR protocol error: the request body is not valid gzip data/);
    expect(server.stderr()).not.toMatch(/zlib|incorrect header check|\n\s+at /);
  });

  test("a well-formed gzip body is still served (git sends one for large negotiations)", async () => {
    const refs = await lsRemote(g, url);
    const want = `0032want ${refs["refs/heads/main"]}\n`;
    const r = await fetch(`${server.url}/acme/app.git/git-upload-pack`, {
      method: "POST",
      headers: { authorization: basicAuth(owner.token), "content-type": "application/x-git-upload-pack-request", "content-encoding": "gzip" },
      body: Bun.gzipSync(new TextEncoder().encode(`${want}00000009done\n`)),
    });
    expect(r.status).toBe(200);
    expect(new TextDecoder().decode(await r.arrayBuffer())).toStartWith("0008NAK\n");
  });
});

/** A commit on main whose root tree is made by hand (git itself would never write it). */
async function craftedPush(entries: { mode: string; name: string; content?: string }[], ref = "refs/heads/main"): Promise<{ code: number; stderr: string }> {
  const dir = await clone(g, url);
  const lines: string[] = [];
  for (const e of entries) {
    // A directory entry gets a subtree holding one file with the content.
    const blob = await g.ok(["hash-object", "-w", "--stdin"], { cwd: dir, input: e.content ?? "x\n" });
    const oid = e.mode.endsWith("40000") ? await g.ok(["mktree"], { cwd: dir, input: `100644 blob ${blob}\tf\n` }) : blob;
    lines.push(`${e.mode} ${e.mode.endsWith("40000") ? "tree" : "blob"} ${oid}\t${e.name}`);
  }
  // mktree writes what it is given, sorted; --literally keeps a mode it would otherwise normalise.
  const tree = await rawTree(dir, entries, lines);
  const head = await g.ok(["rev-parse", "HEAD"], { cwd: dir });
  const commit = await g.ok(["commit-tree", tree, "-p", head, "-m", "crafted"], { cwd: dir });
  return g.run(["push", url, `${commit}:${ref}`], { cwd: dir });
}

/** Writes a tree object from entries, byte for byte, with `hash-object --literally`. */
async function rawTree(dir: string, entries: { mode: string; name: string }[], lines: string[]): Promise<string> {
  const parts: Uint8Array[] = [];
  for (let i = 0; i < entries.length; i++) {
    const oid = lines[i]!.split(/\s+/)[2]!;
    parts.push(new TextEncoder().encode(`${entries[i]!.mode} ${entries[i]!.name}\0`), Buffer.from(oid, "hex"));
  }
  return g.ok(["hash-object", "-t", "tree", "--literally", "-w", "--stdin"], { cwd: dir, input: Buffer.concat(parts) });
}

describe("object checks on push (git's receive.fsckObjects)", () => {
  const EVIL = '[submodule "../../modules/evil"]\n\tpath = evil\n\turl = https://example.com/evil.git\n';

  test("a .gitmodules naming ../../modules/evil is refused with gitmodulesName; nothing moves (finding: accepted)", async () => {
    const before = await lsRemote(g, url);
    const r = await craftedPush([
      { mode: "100644", name: ".gitmodules", content: EVIL },
      { mode: "100644", name: "README", content: "hello\n" },
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/gitmodulesName: disallowed submodule name: \.\.\/\.\.\/modules\/evil/);
    expect(await lsRemote(g, url)).toEqual(before);
  });

  test("a .gitmodules whose URL is an option (gitmodulesUrl), and git's other refusals, each by its id", async () => {
    const cases: [string, { mode: string; name: string; content?: string }[], RegExp][] = [
      ["url", [{ mode: "100644", name: ".gitmodules", content: '[submodule "x"]\n\tpath = x\n\turl = -upload-pack=touch /tmp/pwned\n' }], /gitmodulesUrl/],
      [".GIT", [{ mode: "100644", name: ".GIT", content: "[core]\n" }], /hasDotgit: contains '.git'/],
      ["git~1", [{ mode: "100644", name: "git~1", content: "x\n" }], /hasDotgit/],
      [".git. (NTFS)", [{ mode: "100644", name: ".git.", content: "x\n" }], /hasDotgit/],
      ["HFS+ .g\u200cit", [{ mode: "100644", name: ".g\u200cit", content: "x\n" }], /hasDotgit/],
      [
        "duplicate entries",
        [
          { mode: "100644", name: "a", content: "1\n" },
          { mode: "100644", name: "a", content: "2\n" },
        ],
        /duplicateEntries/,
      ],
      [".gitmodules symlink", [{ mode: "120000", name: ".gitmodules", content: "/etc/passwd" }], /gitmodulesSymlink/],
    ];
    const before = await lsRemote(g, url);
    for (const [name, entries, expected] of cases) {
      const r = await craftedPush(entries);
      expect({ name, refused: r.code !== 0, id: expected.exec(r.stderr)?.[0] ?? r.stderr }).toEqual({
        name,
        refused: true,
        id: expected.exec(r.stderr)?.[0] ?? "(missing)",
      });
    }
    expect(await lsRemote(g, url)).toEqual(before);
  });

  test("a zero-padded mode (040000) is accepted, as C git does, with a zeroPaddedFilemode warning", async () => {
    // On a branch of its own, deleted after: the sandbox's clients (transfer.fsckObjects) refuse such objects.
    const r = await craftedPush([{ mode: "040000", name: "d" }], "refs/heads/padded");
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/remote: warning: object [0-9a-f]{40}: zeroPaddedFilemode/);
    expect((await lsRemote(g, url))["refs/heads/padded"]).toBeDefined();
    await g.ok(["push", url, ":refs/heads/padded"], { cwd: await initRepo(g, "padded-deleter") });
  });

  test("a harmless .gitmodules is accepted, and a client with transfer.fsckObjects still clones", async () => {
    const r = await craftedPush([
      { mode: "100644", name: ".gitmodules", content: '[submodule "lib"]\n\tpath = lib\n\turl = https://example.com/lib.git\n' },
      { mode: "100644", name: "README", content: "hello\n" },
    ]);
    expect({ code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, stderr: "" });
    const dir = await clone(g, url, ["-c", "transfer.fsckObjects=true"]);
    expect(await g.ok(["fsck", "--strict"], { cwd: dir })).toBe("");
  });
});

describe("object checks on the commit API", () => {
  test("a .gitmodules naming ../../modules/evil is 400 gitmodulesName; the branch does not move (finding: accepted)", async () => {
    const api = client(server, { token: owner.token });
    const before = (await api.get("/v1/orgs/acme/repos/app/refs")).body;
    const r = await api.post("/v1/orgs/acme/repos/app/commits", {
      message: "evil",
      operations: [{ op: "put", path: ".gitmodules", content: '[submodule "../../modules/evil"]\n\tpath = evil\n\turl = ./evil\n' }],
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/gitmodulesName: disallowed submodule name: \.\.\/\.\.\/modules\/evil/);
    expect((await api.get("/v1/orgs/acme/repos/app/refs")).body).toEqual(before);
    const url2 = await api.post("/v1/orgs/acme/repos/app/commits", {
      message: "u",
      operations: [{ op: "put", path: ".gitmodules", content: '[submodule "x"]\n\turl = -oProxyCommand=evil\n' }],
    });
    expect(url2.status).toBe(400);
    expect(url2.body.error).toMatch(/gitmodulesUrl/);
  });

  test("a fine .gitmodules goes through", async () => {
    const r = await client(server, { token: owner.token }).post("/v1/orgs/acme/repos/app/commits", {
      message: "submodule",
      operations: [{ op: "put", path: ".gitmodules", content: '[submodule "lib"]\n\tpath = lib\n\turl = ../lib.git\n' }],
    });
    expect(r.status).toBe(201);
  });
});
