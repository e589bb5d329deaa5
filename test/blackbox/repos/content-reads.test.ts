// Content reads (DECISIONS §3): trees, raw blobs, history and single commits, compared with what
// the git client says about the same repository.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { clone, importHistory, initRepo, repoUrl } from "../../helpers/git.ts";
import { commitOk, del, lines, newRepo, put, putB64, repoApi, startWorld, type TestRepo, type World } from "../../helpers/content.ts";

setDefaultTimeout(60_000);

let w: World;
let repo: TestRepo;
let dir: string; // a clone of `repo` with every ref fetched
const shas: string[] = []; // main's commits, oldest first
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...randomBytes(300)]);
const BINARY = new Uint8Array([0, 1, 2, 3, 0xff, 0xfe, 0, 0x0a, ...randomBytes(1000)]);

/** `git` in the clone (paths printed unquoted); trimmed stdout. */
const git = (...args: string[]) => w.g.ok(["-c", "core.quotePath=false", ...args], { cwd: dir });
/** The bytes of `git show <rev>` in the clone. */
const gitBytes = async (rev: string) => new Uint8Array(await w.g.bytes(["show", rev], { cwd: dir }));

beforeAll(async () => {
  w = await startWorld("acme");
  repo = await newRepo(w, "reads");
  const first = await commitOk(repo.api, {
    message: "initial import",
    operations: [
      put("README.md", "# Reads\n"),
      put("docs/guide.md", "guide v1\n"),
      put("docs/api/endpoints.md", "endpoints\n"),
      put("data.json", '{"a":1}\n'),
      putB64("image.png", PNG),
      putB64("blob", BINARY),
      put("page.html", "<script>alert(1)</script>\n"),
      put("logo.svg", '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>\n'),
      put("notes.txt", "0123456789"),
      put("src/a.ts", "export const a = 1;\n"),
      put("odd/ünï cødé.md", "unicode name\n"),
      put("odd/100%.txt", "percent\n"),
    ],
  });
  shas.push(first.commit);
  const steps: unknown[][] = [
    [put("README.md", "# Reads\n\nmore\n")],
    [put("src/b.ts", "export const b = 2;\n")],
    [put("docs/guide.md", "guide v2\n")],
    [del("notes.txt")],
    [put("src/a.ts", "export const a = 10;\n"), put("docs/api/endpoints.md", "endpoints v2\n")],
  ];
  for (let i = 0; i < 7; i++) steps.push([put(`counter/${i % 3}.txt`, `${i}\n`)]);
  steps.push([put("README.md", "# Reads\n\nlast\n")]);
  for (const [i, ops] of steps.entries()) {
    const c = await commitOk(repo.api, { message: `step ${i + 1}\n\nbody of step ${i + 1}`, operations: ops });
    shas.push(c.commit);
  }
  // A lightweight tag at the second commit (ref API) and an annotated one at the fourth (git).
  expect((await repo.api.putRef("refs/tags/light", { target: shas[1], expected: null })).status).toBe(200);
  // Branch names with a slash and with a percent sign (both valid in git).
  expect((await repo.api.putRef("refs/heads/feature/deep", { target: shas[2], expected: null })).status).toBe(200);
  expect((await repo.api.putRef("refs/heads/pct%2541", { target: shas[3], expected: null })).status).toBe(200);
  dir = await clone(w.g, repo.url);
  await git("tag", "-a", "-m", "annotated", "v1", shas[3]!);
  await git("push", "-q", "origin", "v1");
  await git("fetch", "-q", "--tags", "origin");
}, 90_000);

afterAll(async () => {
  await w?.close();
}, 30_000);

/** The tree listing git gives for `rev:path`, in the API's shape. */
async function gitTree(rev: string, path: string) {
  const spec = path ? `${rev}:${path}` : `${rev}^{tree}`;
  const out = lines(await git("ls-tree", "--format=%(objectmode) %(objecttype) %(objectname) %(objectsize)\t%(path)", spec));
  return out.map((l) => {
    const [meta, name] = l.split("\t") as [string, string];
    const [mode, type, oid, size] = meta.split(" ") as [string, string, string, string];
    return { name, path: path ? `${path}/${name}` : name, type, mode, oid, size: type === "blob" ? Number(size) : null };
  });
}

/** Every sha of `r`'s history on main, walking the pages of `limit`. */
async function allPages(r: TestRepo, limit: number, path?: string): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 200; pages++) {
    const res = await r.api.log({ limit, cursor, path });
    expect(res.status).toBe(200);
    seen.push(...res.body.commits.map((c: { sha: string }) => c.sha));
    cursor = res.body.next_cursor ?? undefined;
    if (!cursor) return seen;
  }
  throw new Error("pagination did not end");
}

/** API entries with the mode written the way git prints it (040000 for trees). */
function normalized(entries: { mode: string }[]) {
  return entries.map((e) => ({ ...e, mode: e.mode.padStart(6, "0") }));
}

describe("tree", () => {
  test("the root and nested directories list what git lists, with blob sizes", async () => {
    for (const path of ["", "docs", "docs/api", "src"]) {
      const r = await repo.api.tree("main", path || undefined);
      expect(r.status).toBe(200);
      expect({ ...r.body, entries: normalized(r.body.entries) }).toEqual({ ref: "main", commit: shas.at(-1), path, entries: await gitTree("main", path) });
    }
    // Sizes are the blob sizes in bytes.
    const root = (await repo.api.tree("main")).body.entries as { name: string; size: number | null; type: string }[];
    expect(root.find((e) => e.name === "image.png")).toMatchObject({ type: "blob", size: PNG.length });
    expect(root.find((e) => e.name === "docs")).toMatchObject({ type: "tree", size: null });
  });

  test("a trailing slash on the path is the same directory", async () => {
    const r = await repo.api.tree("main", "docs/");
    expect(r.status).toBe(200);
    expect(normalized(r.body.entries)).toEqual(await gitTree("main", "docs"));
  });

  test("by tag (lightweight and annotated), by full ref name and by commit sha", async () => {
    for (const [ref, commit] of [
      ["light", shas[1]],
      ["v1", shas[3]],
      ["refs/tags/v1", shas[3]],
      ["refs/heads/main", shas.at(-1)],
      [shas[0]!, shas[0]],
      [shas[4]!, shas[4]],
    ] as [string, string][]) {
      const r = await repo.api.tree(ref, "docs");
      expect(r.status).toBe(200);
      expect({ ...r.body, entries: normalized(r.body.entries) }).toEqual({ ref, commit, path: "docs", entries: await gitTree(commit, "docs") });
    }
    // notes.txt exists at the first commit but not at main.
    const names = async (ref: string) => ((await repo.api.tree(ref)).body.entries as { name: string }[]).map((e) => e.name);
    expect(await names(shas[0]!)).toContain("notes.txt");
    expect(await names("main")).not.toContain("notes.txt");
  });

  test("a file path, a missing path, an unknown ref or sha answer 404", async () => {
    for (const [ref, path] of [
      ["main", "README.md"],
      ["main", "docs/guide.md"],
      ["main", "nope"],
      ["main", "docs/nope"],
      ["main", "README.md/inner"],
      ["no-such-branch", undefined],
      ["refs/heads/nope", undefined],
      ["0123456789abcdef0123456789abcdef01234567", undefined],
    ] as [string, string | undefined][]) {
      const r = await repo.api.tree(ref, path);
      expect({ ref, path, status: r.status, error: typeof r.body?.error }).toEqual({ ref, path, status: 404, error: "string" });
    }
  });

  test("a blob id given as the ref is 404, not a listing", async () => {
    const blobId = await git("rev-parse", "main:README.md");
    expect((await repo.api.tree(blobId)).status).toBe(404);
  });
});

describe("odd names", () => {
  test("branch names with a slash (raw or encoded) or a percent sign resolve", async () => {
    const at = async (url: string) => {
      const r = await repo.api.c.get(`${repo.api.base}/${url}`);
      return { url, status: r.status, commit: r.body?.commit };
    };
    expect(await at("tree/feature/deep")).toEqual({ url: "tree/feature/deep", status: 200, commit: shas[2] });
    expect(await at("tree/feature%2Fdeep")).toEqual({ url: "tree/feature%2Fdeep", status: 200, commit: shas[2] });
    expect(await at("tree/pct%2541")).toEqual({ url: "tree/pct%2541", status: 200, commit: shas[3] });
    expect((await repo.api.refs()).body.refs.map((r: { name: string }) => r.name)).toContain("refs/heads/pct%41");
  });

  test("a malformed percent-escape in the ref is a client error, not a 500", async () => {
    const got: Record<string, number> = {};
    for (const url of ["tree/100%", "tree/%E0%A4%A", "blob/50%?path=README.md", "tree/main%"])
      got[`GET ${url}`] = (await repo.api.c.get(`${repo.api.base}/${url}`)).status;
    for (const name of ["refs/heads/q%", "refs/heads/%zz"]) {
      got[`PUT ${name}`] = (await repo.api.putRef(name, { target: shas[0], expected: null })).status;
      got[`DELETE ${name}`] = (await repo.api.deleteRef(name)).status;
    }
    expect(got).toEqual(Object.fromEntries(Object.keys(got).map((k) => [k, 400])));
  });

  test("file names with non-ASCII characters, spaces and percent signs", async () => {
    const tree = await repo.api.tree("main", "odd");
    expect(normalized(tree.body.entries)).toEqual(await gitTree("main", "odd"));
    for (const path of ["odd/ünï cødé.md", "odd/100%.txt"]) {
      const res = await repo.api.blob("main", path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(await gitBytes(`main:${path}`));
      const log = await repo.api.log({ path });
      expect(log.body.commits.map((c: { sha: string }) => c.sha)).toEqual([shas[0]]);
    }
  });
});

describe("blob", () => {
  const files: [string, string][] = [
    ["README.md", "text/markdown"],
    ["docs/guide.md", "text/markdown"],
    ["data.json", "application/json"],
    ["image.png", "image/png"],
    ["blob", "application/octet-stream"],
    ["page.html", "text/plain"],
    ["logo.svg", "text/plain"],
    ["src/a.ts", null as unknown as string],
  ];

  test("raw bytes equal git's, with a Content-Type that is never active content", async () => {
    for (const [path, type] of files) {
      const res = await repo.api.blob("main", path);
      expect(res.status).toBe(200);
      const body = new Uint8Array(await res.arrayBuffer());
      expect(body).toEqual(await gitBytes(`main:${path}`));
      const ct = res.headers.get("content-type") ?? "";
      if (type) expect({ path, type: ct.split(";")[0]!.trim() }).toEqual({ path, type });
      expect(ct).not.toMatch(/html|svg|xml|javascript/);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });

  test("ETag is the quoted blob id; If-None-Match answers 304 with no body", async () => {
    for (const path of ["README.md", "image.png", "docs/api/endpoints.md"]) {
      const res = await repo.api.blob("main", path);
      await res.arrayBuffer();
      const etag = `"${await git("rev-parse", `main:${path}`)}"`;
      expect(res.headers.get("etag")).toBe(etag);
      const again = await repo.api.blob("main", path, { "if-none-match": etag });
      expect(again.status).toBe(304);
      expect((await again.arrayBuffer()).byteLength).toBe(0);
      expect(again.headers.get("etag")).toBe(etag);
      const other = await repo.api.blob("main", path, { "if-none-match": '"0000000000000000000000000000000000000000"' });
      expect(other.status).toBe(200);
      await other.arrayBuffer();
    }
    // The same file at an older commit has another blob, so another ETag.
    const old = await repo.api.blob(shas[0]!, "README.md");
    await old.arrayBuffer();
    expect(old.headers.get("etag")).toBe(`"${await git("rev-parse", `${shas[0]}:README.md`)}"`);
    expect(old.headers.get("etag")).not.toBe(`"${await git("rev-parse", "main:README.md")}"`);
  });

  test("Range: a prefix, a suffix, an open end, and unsatisfiable ranges", async () => {
    const full = await gitBytes("main:image.png");
    const size = full.length;
    const ranged = async (range: string) => {
      const res = await repo.api.blob("main", "image.png", { range });
      return { status: res.status, range: res.headers.get("content-range"), body: new Uint8Array(await res.arrayBuffer()) };
    };
    expect(await ranged("bytes=0-3")).toEqual({ status: 206, range: `bytes 0-3/${size}`, body: full.subarray(0, 4) });
    expect(await ranged("bytes=-2")).toEqual({ status: 206, range: `bytes ${size - 2}-${size - 1}/${size}`, body: full.subarray(size - 2) });
    expect(await ranged(`bytes=${size - 5}-`)).toEqual({ status: 206, range: `bytes ${size - 5}-${size - 1}/${size}`, body: full.subarray(size - 5) });
    expect(await ranged(`bytes=10-${size + 100}`)).toEqual({ status: 206, range: `bytes 10-${size - 1}/${size}`, body: full.subarray(10) });
    for (const bad of [`bytes=${size}-`, `bytes=${size + 10}-${size + 20}`, "bytes=5-2"]) {
      const r = await ranged(bad);
      expect({ bad, status: r.status, range: r.range }).toEqual({ bad, status: 416, range: `bytes */${size}` });
    }
  });

  test("If-None-Match uses weak comparison and accepts a list or * (RFC 9110 §13.1.2)", async () => {
    const etag = `"${await git("rev-parse", "main:README.md")}"`;
    const got: Record<string, number> = {};
    for (const inm of [`W/${etag}`, `"0000000000000000000000000000000000000000", ${etag}`, "*"]) {
      const res = await repo.api.blob("main", "README.md", { "if-none-match": inm });
      await res.arrayBuffer();
      got[inm] = res.status;
    }
    expect(got).toEqual(Object.fromEntries(Object.keys(got).map((k) => [k, 304])));
  });

  test("a Range in an unknown unit is ignored; satisfiable multiple ranges are not 416 (RFC 9110 §14.2)", async () => {
    const full = await gitBytes("main:image.png");
    const unknown = await repo.api.blob("main", "image.png", { range: "items=0-3" });
    const body = new Uint8Array(await unknown.arrayBuffer());
    const multi = await repo.api.blob("main", "image.png", { range: "bytes=0-1,4-5" });
    await multi.arrayBuffer();
    expect({ unknownUnit: unknown.status, fullBody: body.length === full.length, multiRangeIs416: multi.status === 416 }).toEqual({
      unknownUnit: 200,
      fullBody: true,
      multiRangeIs416: false,
    });
  });

  test("by tag and by sha: the content of that commit", async () => {
    for (const ref of ["light", "v1", shas[0]!, shas[4]!]) {
      const res = await repo.api.blob(ref, "README.md");
      expect(res.status).toBe(200);
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(await gitBytes(`${ref}:README.md`));
    }
    const notes = await repo.api.blob(shas[0]!, "notes.txt");
    expect(await notes.text()).toBe("0123456789");
  });

  test("a directory, a missing file, an unknown ref are 404; no path is 400", async () => {
    for (const [ref, path] of [
      ["main", "docs"],
      ["main", "nope.txt"],
      ["main", "notes.txt"],
      ["nope", "README.md"],
    ]) {
      const res = await repo.api.blob(ref!, path!);
      expect({ ref, path, status: res.status }).toEqual({ ref, path, status: 404 });
    }
    const res = await fetch(`${w.server.url}${repo.api.base}/blob/main`, { headers: { authorization: `Bearer ${w.owner.token}` } });
    expect(res.status).toBe(400);
  });
});

describe("history", () => {
  test("newest first, the same list as git rev-list", async () => {
    const r = await repo.api.log({ limit: 100 });
    expect(r.status).toBe(200);
    expect(r.body.next_cursor).toBeNull();
    expect(r.body.commits.map((c: { sha: string }) => c.sha)).toEqual(lines(await git("rev-list", "main")));
    expect(r.body.commits.map((c: { sha: string }) => c.sha)).toEqual([...shas].reverse());
  });

  test("limit and cursor pages cover every commit exactly once", async () => {
    for (const limit of [1, 3, 5, 13, 14]) {
      const r = await repo.api.log({ limit });
      expect(r.body.commits.length).toBe(Math.min(limit, shas.length));
      expect({ limit, seen: await allPages(repo, limit) }).toEqual({ limit, seen: [...shas].reverse() });
    }
    // The last page says so.
    expect((await repo.api.log({ limit: shas.length })).body.next_cursor).toBeNull();
  });

  test("the default limit is 30 and limits outside 1..100 are 400", async () => {
    expect((await repo.api.log()).body.commits.length).toBe(shas.length);
    for (const limit of ["0", "101", "-1", "abc", "2.5"]) {
      const r = await repo.api.c.get(`${repo.api.base}/commits?limit=${limit}`);
      expect({ limit, status: r.status }).toEqual({ limit, status: 400 });
    }
    expect((await repo.api.c.get(`${repo.api.base}/commits?cursor=not-a-cursor`)).status).toBe(400);
  });

  test("a cursor is a position this service made: other shapes are 400", async () => {
    const encode = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const tip = shas[shas.length - 1]!;
    for (const cursor of [
      encode(tip),
      encode([tip]),
      encode([tip, -1]),
      encode([tip, 1.5]),
      encode(["main", 1]),
      encode({ s: tip, k: 1 }),
      encode([tip, 1, 2]),
    ]) {
      const r = await repo.api.c.get(`${repo.api.base}/commits?cursor=${cursor}`);
      expect({ cursor, status: r.status }).toEqual({ cursor, status: 400 });
    }
    // The cursor pins where the walk started: the second page continues that history.
    const first = await repo.api.log({ limit: 2 });
    const second = await repo.api.log({ limit: 2, cursor: first.body.next_cursor });
    expect(second.body.commits.map((c: { sha: string }) => c.sha)).toEqual([...shas].reverse().slice(2, 4));
  });

  test("a path filter returns exactly the commits git log -- path returns", async () => {
    for (const path of ["README.md", "docs", "docs/api", "docs/api/endpoints.md", "src/b.ts", "notes.txt", "counter/1.txt", "never-existed"]) {
      const r = await repo.api.log({ path, limit: 100 });
      expect(r.status).toBe(200);
      expect({ path, shas: r.body.commits.map((c: { sha: string }) => c.sha) }).toEqual({
        path,
        shas: lines(await git("log", "--format=%H", "main", "--", path)),
      });
    }
    // Paged with a path filter: still every match exactly once.
    expect(await allPages(repo, 1, "README.md")).toEqual(lines(await git("log", "--format=%H", "main", "--", "README.md")));
  });

  test("ref selects where history starts: a tag, a sha; an unknown ref is 404", async () => {
    expect((await repo.api.log({ ref: "v1" })).body.commits.map((c: { sha: string }) => c.sha)).toEqual(lines(await git("rev-list", "v1")));
    expect((await repo.api.log({ ref: shas[2] })).body.commits.map((c: { sha: string }) => c.sha)).toEqual(shas.slice(0, 3).reverse());
    expect((await repo.api.log({ ref: "nope" })).status).toBe(404);
  });

  test("summaries carry message, author, committer (ms dates) and parents as git records them", async () => {
    const r = await repo.api.log({ limit: 3 });
    for (const c of r.body.commits as Record<string, any>[]) {
      const [an, ae, at, cn, ce, ct, parents] = (await git("log", "-1", "--format=%an%x00%ae%x00%at%x00%cn%x00%ce%x00%ct%x00%P", c.sha)).split("\0");
      expect(c).toEqual({
        sha: c.sha,
        message: expect.any(String),
        author: { name: an, email: ae, date: Number(at) * 1000, timezone: "+0000" },
        committer: { name: cn, email: ce, date: Number(ct) * 1000, timezone: "+0000" },
        parents: parents ? parents.split(" ") : [],
        checks_state: null,
      });
      expect(c.message.trimEnd()).toBe(await git("log", "-1", "--format=%B", c.sha));
    }
  });
});

describe("single commit", () => {
  test("parents, author, committer, message, tree and changed paths match git", async () => {
    for (const sha of shas) {
      const r = await repo.api.show(sha);
      expect(r.status).toBe(200);
      const [an, ae, at, cn, ce, ct, parents, tree] = (await git("log", "-1", "--format=%an%x00%ae%x00%at%x00%cn%x00%ce%x00%ct%x00%P%x00%T", sha)).split("\0");
      const statuses: Record<string, string> = { A: "added", M: "modified", D: "deleted" };
      const diff = lines(await git("diff-tree", "-r", "--root", "--no-commit-id", "--no-renames", "--name-status", sha)).map((l) => {
        const [s, path] = l.split("\t") as [string, string];
        return { path, status: statuses[s]! };
      });
      expect({ ...r.body, message: r.body.message.trimEnd(), changed_paths: [...r.body.changed_paths].sort((a, b) => (a.path < b.path ? -1 : 1)) }).toEqual({
        sha,
        message: await git("log", "-1", "--format=%B", sha),
        author: { name: an, email: ae, date: Number(at) * 1000, timezone: "+0000" },
        committer: { name: cn, email: ce, date: Number(ct) * 1000, timezone: "+0000" },
        parents: parents ? parents.split(" ") : [],
        tree,
        context: null,
        changed_paths: diff.sort((a, b) => (a.path < b.path ? -1 : 1)),
      });
    }
  });

  test("the message is the one sent", async () => {
    const r = await repo.api.show(shas[1]!);
    expect(r.body.message.trimEnd()).toBe("step 1\n\nbody of step 1");
  });

  test("an unknown sha, a non-commit object, or a malformed id answer 404", async () => {
    const blobId = await git("rev-parse", "main:README.md");
    const tagId = await git("rev-parse", "v1");
    for (const sha of ["0123456789abcdef0123456789abcdef01234567", blobId, await git("rev-parse", "main^{tree}"), tagId, "xyz", "main"]) {
      expect({ sha, status: (await repo.api.show(sha)).status }).toEqual({ sha, status: 404 });
    }
  });
});

describe("an empty repository", () => {
  test("history is empty, a tree is 404, refs are empty", async () => {
    const empty = await newRepo(w, "empty");
    expect(await empty.api.log()).toMatchObject({ status: 200, body: { commits: [], next_cursor: null } });
    expect((await empty.api.log({ ref: "main" })).status).toBe(404);
    expect((await empty.api.tree("main")).status).toBe(404);
    expect((await empty.api.blob("main", "README.md")).status).toBe(404);
    expect(await empty.api.refs()).toMatchObject({ status: 200, body: { refs: [] } });
    // A commit of another repository is not visible through this one.
    expect((await empty.api.show(shas[0]!)).status).toBe(404);
    expect((await empty.api.tree(shas[0]!)).status).toBe(404);
  });
});

describe("history pushed with git, with a merge", () => {
  let pushed: TestRepo;
  let work: string;
  let base: string;
  let side: string;
  let head: string;
  const gitw = (...args: string[]) => w.g.ok(args, { cwd: work });

  beforeAll(async () => {
    pushed = await newRepo(w, "merged");
    work = await initRepo(w.g);
    const T = 1_700_000_000;
    base = await importHistory(w.g, work, { ref: "refs/heads/main", count: 6, start: T, step: 100, label: "main" });
    side = await importHistory(w.g, work, { ref: "refs/heads/side", count: 4, from: `${base}~3`, start: T + 250, step: 100, label: "side" });
    // A merge made with fast-import: main's tree (the side's edits discarded) plus a file of its own.
    const merge = [
      "commit refs/heads/main",
      `committer Svc Test <test@example.com> ${T + 10_000} +0000`,
      "data 6",
      "merge",
      `from ${base}`,
      `merge ${side}`,
      "M 644 inline merged.txt",
      "data 7",
      "merged",
      "",
      "done",
      "",
    ].join("\n");
    await w.g.ok(["fast-import", "--quiet", "--done"], { cwd: work, input: merge });
    await w.g.ok(["push", "-q", pushed.url, "main", "side"], { cwd: work });
    head = await gitw("rev-parse", "main");
  });

  test("log order across both parents is git's (newest committer date first)", async () => {
    const all = (await pushed.api.log({ limit: 100 })).body.commits.map((c: { sha: string }) => c.sha);
    expect(all).toEqual(lines(await gitw("log", "--format=%H", "main")));
  });

  test("a merge's parents and changed paths (against the first parent)", async () => {
    const shown = await pushed.api.show(head);
    expect(shown.body.parents).toEqual([base, side]);
    const diff = lines(await gitw("diff", "--name-only", "--no-renames", base, head));
    expect(shown.body.changed_paths.map((p: { path: string }) => p.path).sort()).toEqual(diff.sort());
  });

  test("pages of a merged history cover every commit exactly once", async () => {
    const expected = lines(await gitw("log", "--format=%H", "main"));
    for (const limit of [1, 2, 3]) expect({ limit, seen: await allPages(pushed, limit) }).toEqual({ limit, seen: expected });
  });

  test("pages cover every commit exactly once when a side branch's dates are older than its parent's", async () => {
    // Clock skew is common in real histories (a committer's clock, rebases). Here s1 claims to be
    // older than its own parent c1, so a date-ordered walk reaches c1 before s1.
    const skewed = await newRepo(w, "skewed");
    const T = 1_700_000_000;
    const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}`;
    const stream = [
      "commit refs/heads/main",
      "mark :1",
      `committer A <a@example.com> ${T} +0000`,
      data("c1"),
      "M 644 inline c1.txt",
      data("1"),
      "commit refs/heads/main",
      "mark :2",
      `committer A <a@example.com> ${T + 100} +0000`,
      data("c2"),
      "from :1",
      "M 644 inline c2.txt",
      data("2"),
      "commit refs/heads/side",
      "mark :3",
      `committer A <a@example.com> ${T - 1000} +0000`,
      data("s1"),
      "from :1",
      "M 644 inline s1.txt",
      data("3"),
      "commit refs/heads/main",
      "mark :4",
      `committer A <a@example.com> ${T + 200} +0000`,
      data("merge"),
      "from :2",
      "merge :3",
      "M 644 inline m.txt",
      data("4"),
      "done",
      "",
    ].join("\n");
    const skewWork = await initRepo(w.g);
    await w.g.ok(["fast-import", "--quiet", "--done"], { cwd: skewWork, input: stream });
    await w.g.ok(["push", "-q", skewed.url, "main"], { cwd: skewWork });
    const expected = lines(await w.g.ok(["rev-list", "main"], { cwd: skewWork })).sort();
    expect(expected.length).toBe(4);
    expect([...(await allPages(skewed, 100))].sort()).toEqual(expected);
    for (const limit of [1, 2, 3]) {
      const seen = await allPages(skewed, limit);
      expect({ limit, seen: [...seen].sort() }).toEqual({ limit, seen: expected });
    }
  });

  test("a path filter through a merge returns what git log -- path returns", async () => {
    // dir0 is changed on the side branch, but the merge kept main's dir0: git simplifies the
    // side branch away (the merge is TREESAME to its first parent for dir0).
    for (const path of ["merged.txt", "dir1/file1.txt", "dir3", "dir0"]) {
      const r = await pushed.api.log({ path, limit: 100 });
      expect({ path, shas: r.body.commits.map((c: { sha: string }) => c.sha) }).toEqual({
        path,
        shas: lines(await gitw("log", "--format=%H", "main", "--", path)),
      });
    }
  });
});

describe("read access", () => {
  let pub: TestRepo;
  beforeAll(async () => {
    pub = await newRepo(w, "open", true);
    await commitOk(pub.api, { operations: [put("README.md", "public\n")] });
  });

  /** Every read route of a repository, called as `token`. */
  async function reads(name: string, token?: string) {
    const api = repoApi(w.server, "acme", name, token);
    const head = (await repoApi(w.server, "acme", name, w.owner.token).refs()).body.refs.find((r: { name: string }) => r.name === "refs/heads/main").target;
    const blob = await api.blob("main", "README.md");
    await blob.arrayBuffer();
    return {
      tree: (await api.tree("main")).status,
      blob: blob.status,
      log: (await api.log()).status,
      show: (await api.show(head)).status,
      refs: (await api.refs()).status,
    };
  }

  const all = (status: number) => ({ tree: status, blob: status, log: status, show: status, refs: status });

  test("a public repository is readable anonymously and by an outsider", async () => {
    const outsider = w.outsider;
    expect(await reads(pub.name)).toEqual(all(200));
    expect(await reads(pub.name, outsider.token)).toEqual(all(200));
    const res = await repoApi(w.server, "acme", pub.name).blob("main", "README.md");
    expect(await res.text()).toBe("public\n");
  });

  test("a private repository: anonymous 401, outsider 404, viewer 200", async () => {
    const { outsider, viewer } = w;
    expect(await reads(repo.name)).toEqual(all(401));
    expect(await reads(repo.name, outsider.token)).toEqual(all(404));
    expect(await reads(repo.name, viewer.token)).toEqual(all(200));
    // A missing repository looks the same as a hidden one.
    const missing = repoApi(w.server, "acme", "does-not-exist", outsider.token);
    expect((await missing.tree("main")).status).toBe(404);
    expect((await repoApi(w.server, "acme", "does-not-exist").tree("main")).status).toBe(401);
  });

  test("git clone of the public repository works anonymously", async () => {
    const d = await clone(w.g, repoUrl(w.server, "acme", pub.name));
    expect(await w.g.ok(["show", "HEAD:README.md"], { cwd: d })).toBe("public");
  });
});
