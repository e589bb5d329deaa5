// Issue 25, the web rows of the hostile-input probe, each as it was found: an open redirect
// through `next` (row 9), a 500 for a `next` holding a newline or U+3000 (row 10), and pages that
// read whole big blobs before deciding how to show them (row 4, the web half).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { commitFiles, gitSandbox, initRepo, repoUrl } from "../../helpers/git.ts";
import { caller, person, type Person } from "../../helpers/api.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";
import { getPage, postForm } from "../../helpers/web.ts";

let server: RunningServer;
let ada: Person;

beforeAll(async () => {
  server = await startServer();
  ada = await person(server, "acme", "ada@example.com", "owner", { handle: "ada" });
}, 60_000);
afterAll(() => server?.[Symbol.asyncDispose]());

/** Signs in through the form with `next`; answers the redirect's status and Location. */
async function signInWith(next: string): Promise<{ status: number; location: string | null }> {
  // Signed out there is no form token: the sign-in form is guarded by its Origin alone.
  const r = await postForm(server, "/login", { email: ada.email, password: ada.password, next });
  return { status: r.status, location: r.headers.get("location") };
}

/** Where a browser goes from a page at the server's URL for a Location header. */
const target = (location: string) => new URL(location, server.url);

describe("rows 9-10: `next` is a path on this site or nothing", () => {
  const hostile = [
    "/\t/evil.example/",
    "/\\evil.example/",
    "/\\\\evil.example",
    "/.//evil.example/",
    "/\n/evil.example",
    "//evil.example",
    "http://evil.example/",
    "/a/../..//evil.example/",
  ];

  test("signing in with a next that a browser would read as another site lands on this site", async () => {
    for (const next of hostile) {
      const r = await signInWith(next);
      expect({ next, status: r.status, origin: target(r.location!).origin }).toEqual({ next, status: 303, origin: new URL(server.url).origin });
      expect(r.location!.startsWith("//")).toBe(false);
    }
  });

  test("GET /login signed in, with next=/%09/evil.example/: a redirect on this site", async () => {
    const res = await fetch(`${server.url}/login?next=/%09/evil.example/`, { headers: { cookie: ada.cookie }, redirect: "manual" });
    expect(res.status).toBe(303);
    expect(target(res.headers.get("location")!).origin).toBe(new URL(server.url).origin);
  });

  test("a newline, U+3000 or a NUL in next is never a 500: the path arrives percent-encoded", async () => {
    expect(await signInWith("/acme\n")).toEqual({ status: 303, location: "/acme" });
    expect(await signInWith("/acme?q=\u3000")).toEqual({ status: 303, location: "/acme?q=%E3%80%80" });
    expect(await signInWith("/a\u0000b")).toEqual({ status: 303, location: "/a%00b" });
    const res = await fetch(`${server.url}/login?next=${encodeURIComponent("/x\u3000y")}`, { headers: { cookie: ada.cookie }, redirect: "manual" });
    expect({ status: res.status, location: res.headers.get("location") }).toEqual({ status: 303, location: `${server.url}/x%E3%80%80y` });
  });

  test("ordinary paths come back as they were", async () => {
    expect(await signInWith("/settings/emails/verify?token=svce_x#top")).toEqual({ status: 303, location: "/settings/emails/verify?token=svce_x#top" });
    expect(await signInWith("")).toEqual({ status: 303, location: "/" });
  });
});

describe("row 4 (web half): pages read a blob's size first", () => {
  test("a big file whose stored bytes cannot be read: its page, the tree and a revalidated raw answer from the size alone", async () => {
    await using g = gitSandbox();
    const dataDir = g.path("data");
    const first = await startServer({ dataDir });
    const owner = await person(first, "acme", "owner@acme.example", "owner");
    const api = caller(first, owner);
    expect((await api.post("/v1/orgs/acme/repos", { name: "big", public: true })).status).toBe(201);
    const lines = Array.from({ length: 120_000 }, (_, i) => `line ${i} ${(i * 2654435761) % 1000003}`).join("\n");
    const made = await api.post("/v1/orgs/acme/repos/big/commits", {
      message: "big",
      operations: [
        { op: "put", path: "big.txt", content: lines },
        { op: "put", path: "README.md", content: "# Big\n" },
      ],
    });
    expect(made.status).toBe(201);
    const oid = (await api.get("/v1/orgs/acme/repos/big/tree/main")).body.entries.find((e: any) => e.name === "big.txt").oid;
    await first.stop();
    // Break the file's stored bytes (its entry header stays): reading it now fails, its size does not.
    const found = await findEntry(dataDir, oid);
    const fd = openSync(found.pack, "r+");
    try {
      writeSync(fd, new Uint8Array(64).fill(0xa5), 0, 64, found.offset + Math.floor(found.stored / 2));
    } finally {
      closeSync(fd);
    }
    await using second = await startServer({ dataDir });
    const page = await getPage(second, "/acme/big/blob/main/big.txt");
    expect(page.status).toBe(200);
    expect(page.text).toContain("This file is too large to show here");
    expect(page.text).toContain('href="/acme/big/raw/main/big.txt?download=1"');
    expect((await getPage(second, "/acme/big")).status).toBe(200);
    const raw = await fetch(`${second.url}/acme/big/raw/main/big.txt`, { headers: { "if-none-match": `"${oid}"` } });
    expect(raw.status).toBe(304);
  }, 120_000);

  test("files read off the event loop come back whole: a 3 MiB file, and a file at the end of a 40-deep delta chain", async () => {
    await using g = gitSandbox();
    const owner = await person(server, "deep", "owner@deep.example", "owner");
    const api = caller(server, owner);
    expect((await api.post("/v1/orgs/deep/repos", { name: "d", public: true })).status).toBe(201);
    const bigText = Array.from({ length: 150_000 }, (_, i) => `row ${i}`).join("\n");
    expect((await api.post("/v1/orgs/deep/repos/d/commits", { message: "big", operations: [{ op: "put", path: "big.txt", content: bigText }] })).status).toBe(
      201,
    );
    const raw = await fetch(`${server.url}/deep/d/raw/main/big.txt`);
    expect(raw.status).toBe(200);
    expect(await raw.text()).toBe(bigText);

    const token = (await api.post("/v1/orgs/deep/tokens", { scopes: ["repo:write"], label: "push" })).body.token;
    const dir = await initRepo(g);
    await g.ok(["fetch", "-q", repoUrl(server, "deep", "d", token), "main"], { cwd: dir });
    await g.ok(["reset", "-q", "--hard", "FETCH_HEAD"], { cwd: dir });
    let text = Array.from({ length: 2000 }, (_, i) => `base line ${i}`).join("\n");
    const versions: { commit: string; text: string }[] = [];
    for (let i = 0; i < 40; i++) {
      text = text.replace(`base line ${i * 7}`, `changed ${i}`);
      versions.push({ commit: await commitFiles(g, dir, { "chain.txt": text }, `step ${i}`), text });
    }
    await g.ok(["repack", "-a", "-d", "-f", "--depth=50", "--window=50"], { cwd: dir });
    await g.ok(["push", "-q", repoUrl(server, "deep", "d", token), "HEAD:refs/heads/main"], { cwd: dir });
    // The version stored deepest in the server's pack (git verify-pack: the chain length column).
    const depths = await storedDepths(server.dataDir);
    let deepest = versions[0]!;
    let depth = -1;
    for (const v of versions) {
      const blob = await g.ok(["rev-parse", `${v.commit}:chain.txt`], { cwd: dir });
      if ((depths.get(blob) ?? 0) > depth) [deepest, depth] = [v, depths.get(blob) ?? 0];
    }
    expect(depth).toBeGreaterThan(16);
    const got = await fetch(`${server.url}/deep/d/raw/${deepest.commit}/chain.txt`);
    expect(await got.text()).toBe(deepest.text);
    const blobPage = await getPage(server, `/deep/d/blob/${deepest.commit}/chain.txt`);
    expect(blobPage.status).toBe(200);
    expect(blobPage.text).toContain(deepest.text.split("\n")[1]!);
  }, 120_000);

  test("a big README is rendered on a worker thread; the page shows it", async () => {
    const owner = await person(server, "docs", "owner@docs.example", "owner");
    const api = caller(server, owner);
    expect((await api.post("/v1/orgs/docs/repos", { name: "r", public: true })).status).toBe(201);
    const readme = `# Title\n\n${Array.from({ length: 3000 }, (_, i) => `* item **${i}** [link](docs/${i}.md)`).join("\n")}\n`;
    expect(readme.length).toBeGreaterThan(16 * 1024);
    expect(
      (await api.post("/v1/orgs/docs/repos/r/commits", { message: "readme", operations: [{ op: "put", path: "README.md", content: readme }] })).status,
    ).toBe(201);
    const page = await getPage(server, "/docs/r");
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<h1 id="user-content-title">Title</h1>`);
    expect(page.text).toContain('<a href="/docs/r/blob/main/docs/2999.md">link</a>');
  }, 60_000);
});

/** The stored pack holding `oid` under a data dir, its entry's offset and stored size (git verify-pack). */
async function findEntry(dataDir: string, oid: string): Promise<{ pack: string; offset: number; stored: number }> {
  const packs = [...new Bun.Glob("objects/repos/*/packs/*.idx").scanSync({ cwd: dataDir })];
  for (const idx of packs) {
    const out = Bun.spawnSync(["git", "verify-pack", "-v", join(dataDir, idx)]).stdout.toString();
    const line = out.split("\n").find((l) => l.startsWith(oid));
    if (!line) continue;
    const [, , , stored, offset] = line.trim().split(/\s+/);
    return { pack: join(dataDir, idx.replace(/\.idx$/, ".pack")), offset: Number(offset), stored: Number(stored) };
  }
  throw new Error(`no stored pack holds ${oid}`);
}

/** The delta depth of every deltified object in the stored packs under a data dir (git verify-pack). */
async function storedDepths(dataDir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const idx of new Bun.Glob("objects/repos/*/packs/*.idx").scanSync({ cwd: dataDir })) {
    for (const line of Bun.spawnSync(["git", "verify-pack", "-v", join(dataDir, idx)])
      .stdout.toString()
      .split("\n")) {
      const f = line.trim().split(/\s+/);
      if (/^[0-9a-f]{40}$/.test(f[0] ?? "") && f.length >= 7) out.set(f[0]!, Number(f[5]));
    }
  }
  return out;
}
