// Archives (DECISIONS §5): GET …/archive/{ref}?format=tar.gz|zip and the web address
// /{org}/{repo}/archive/{ref}.tar.gz|.zip, checked against `git archive` on the same commit: both
// extracted with the system tar and unzip and the trees compared (paths, types, executable bits,
// symlink targets, bytes); the tar is also byte-for-byte git's. Plus names, caching, caps and the
// masked 404.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { commitFiles, initRepo } from "../../helpers/git.ts";
import { newRepo, startWorld, type TestRepo, type World } from "../../helpers/content.ts";

setDefaultTimeout(120_000);

let w: World;
let repo: TestRepo;
let work: string;
/** The first commit: no submodule (git writes a gitlink as an empty directory; we leave it out). */
let plain: string;
/** The tip: plain plus a submodule. */
let tip: string;

const LONG_DIR = `${"d".repeat(60)}/${"e".repeat(60)}`;
const LONGER = `${"x".repeat(120)}/${"y".repeat(150)}.txt`;
/** A branch named like markup, with a quote and non-ASCII: a valid ref name. */
const HOSTILE = `"><é/x`;

beforeAll(async () => {
  // Caps small enough to reach in a test: 5 MiB of files, 60 entries.
  w = await startWorld("arch", { env: { SVC_ARCHIVE_MAX: "5m", SVC_ARCHIVE_MAX_ENTRIES: "60" } });
  repo = await newRepo(w, "widgets");
  work = await initRepo(w.g, "widgets");
  const big = new Uint8Array(2 * 1024 * 1024 + 3);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7919) % 251;
  await commitFiles(w.g, work, {
    "README.md": "# widgets\n",
    "empty.txt": "",
    "src/app.ts": "export const x = 1;\n",
    "bin/run.sh": "#!/bin/sh\necho hi\n",
    "big.bin": big,
    "quote\"and'<b>.txt": "hostile name\n",
    "ünïcödé/файл.txt": "utf-8 names\n",
    [`${LONG_DIR}/split-into-prefix.txt`]: "ustar prefix\n",
    [LONGER]: "pax path\n",
  });
  chmodSync(join(work, "bin/run.sh"), 0o755);
  symlinkSync("src/app.ts", join(work, "link"));
  symlinkSync(`${"../".repeat(3)}${"t".repeat(120)}`, join(work, "long-link"));
  await w.g.ok(["add", "-A"], { cwd: work });
  await w.g.ok(["commit", "-q", "-m", "links and modes"], { cwd: work });
  plain = await w.g.ok(["rev-parse", "HEAD"], { cwd: work });
  await w.g.ok(["update-index", "--add", "--cacheinfo", `160000,${plain},vendor/sub`], { cwd: work });
  await w.g.ok(["commit", "-q", "-m", "a submodule"], { cwd: work });
  tip = await w.g.ok(["rev-parse", "HEAD"], { cwd: work });
  await w.g.ok(["branch", "release/1.0", plain], { cwd: work });
  await w.g.ok(["branch", HOSTILE, plain], { cwd: work });
  await w.g.ok(["tag", "-a", "-m", "one", "v1.0", plain], { cwd: work });
  await w.g.ok(["push", "-q", repo.url, "main", "release/1.0", HOSTILE, "v1.0"], { cwd: work });
}, 120_000);

afterAll(async () => {
  await w?.close();
}, 30_000);

/** GET with the owner's token (or `token`), raw. */
function get(path: string, headers: Record<string, string> = {}, token: string | null = w.owner.token): Promise<Response> {
  return fetch(`${w.server.url}${path}`, { headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
}

/** Every path under `dir`: type, executable bit for files, target for links, bytes for files. */
function listing(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (rel: string) => {
    const full = join(dir, rel);
    const st = lstatSync(full);
    if (st.isSymbolicLink()) out[rel] = `link -> ${readlinkSync(full)}`;
    else if (st.isDirectory()) {
      if (rel) out[rel] = "dir";
      for (const name of readdirSync(full)) visit(rel ? `${rel}/${name}` : name);
    } else out[rel] = `file ${st.mode & 0o100 ? "x" : "-"} ${Bun.hash(readFileSync(full)).toString(16)} ${st.size}`;
  };
  visit("");
  return out;
}

/** Extracts `bytes` (a tar or zip) into a new directory with the system tools. */
async function extract(bytes: Uint8Array, kind: "tar" | "zip"): Promise<string> {
  const dir = w.g.path(`x-${kind}`);
  mkdirSync(dir);
  const file = `${dir}.${kind}`;
  writeFileSync(file, bytes);
  const cmd = kind === "tar" ? ["tar", "-xf", file, "-C", dir] : ["unzip", "-q", file, "-d", dir];
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [code, err] = [await p.exited, await new Response(p.stderr).text()];
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}: ${err}`);
  return dir;
}

/** `git archive` of `rev` with the same prefix. */
function gitArchive(format: "tar" | "zip", rev: string, prefix: string): Promise<Uint8Array> {
  return w.g.bytes(["archive", `--format=${format}`, `--prefix=${prefix}/`, rev], { cwd: work });
}

describe("archives against git archive", () => {
  test("tar.gz at a commit: the same bytes as git archive --format=tar once gunzipped", async () => {
    const r = await get(`/v1/orgs/arch/repos/widgets/archive/${plain}?format=tar.gz`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/gzip");
    const tar = gunzipSync(new Uint8Array(await r.arrayBuffer()));
    const theirs = await gitArchive("tar", plain, `widgets-${plain}`);
    expect(tar.length).toBe(theirs.length);
    expect(Buffer.compare(tar, theirs)).toBe(0);
  });

  test("tar.gz of a branch with a submodule: the same tree as git archive, the submodule left out", async () => {
    const r = await get("/v1/orgs/arch/repos/widgets/archive/main");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-disposition")).toBe(`attachment; filename="widgets-main.tar.gz"; filename*=UTF-8''widgets-main.tar.gz`);
    const ours = listing(await extract(gunzipSync(new Uint8Array(await r.arrayBuffer())), "tar"));
    const theirs = listing(await extract(await gitArchive("tar", tip, "widgets-main"), "tar"));
    expect(theirs["widgets-main/vendor/sub"]).toBe("dir");
    delete theirs["widgets-main/vendor/sub"];
    expect(ours).toEqual(theirs);
    expect(ours["widgets-main/bin/run.sh"]).toStartWith("file x ");
    expect(ours["widgets-main/src/app.ts"]).toStartWith("file - ");
    expect(ours["widgets-main/link"]).toBe("link -> src/app.ts");
    expect(ours[`widgets-main/${LONGER}`]).toStartWith("file - ");
  });

  test("zip: the same tree as git archive --format=zip (types, executable bits, symlinks, bytes)", async () => {
    const r = await get("/v1/orgs/arch/repos/widgets/archive/main?format=zip");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/zip");
    const ours = listing(await extract(new Uint8Array(await r.arrayBuffer()), "zip"));
    const theirs = listing(await extract(await gitArchive("zip", tip, "widgets-main"), "zip"));
    delete theirs["widgets-main/vendor/sub"];
    expect(ours).toEqual(theirs);
    expect(ours["widgets-main/bin/run.sh"]).toStartWith("file x ");
    expect(ours["widgets-main/long-link"]).toBe(`link -> ${"../".repeat(3)}${"t".repeat(120)}`);
  });

  test("a ref with a slash: prefix and file name with - for /; the web address names the format by suffix", async () => {
    const r = await get("/arch/widgets/archive/release/1.0.zip", {}, null);
    // The repository is private: anonymous is asked to sign in, as on every page; with a session it is there.
    expect(r.status).toBe(401);
    const web = await fetch(`${w.server.url}/arch/widgets/archive/release/1.0.zip`, { headers: { cookie: w.owner.cookie } });
    expect(web.status).toBe(200);
    expect(web.headers.get("content-disposition")).toContain(`filename="widgets-release-1.0.zip"`);
    const ours = listing(await extract(new Uint8Array(await web.arrayBuffer()), "zip"));
    expect(Object.keys(ours)).toContain("widgets-release-1.0/README.md");
    const tag = await fetch(`${w.server.url}/arch/widgets/archive/v1.0.tar.gz`, { headers: { cookie: w.owner.cookie } });
    expect(tag.status).toBe(200);
    expect(gunzipSync(new Uint8Array(await tag.arrayBuffer())).length).toBeGreaterThan(0);
  });
});

describe("names and streams", () => {
  test("a branch named with quotes, markup and non-ASCII: a safe Content-Disposition, the name in filename*", async () => {
    const web = await fetch(`${w.server.url}/arch/widgets/archive/${encodeURIComponent('"><é')}/x.zip`, { headers: { cookie: w.owner.cookie } });
    expect(web.status).toBe(200);
    expect(web.headers.get("content-disposition")).toBe(
      `attachment; filename="widgets-_><_-x.zip"; filename*=UTF-8''${encodeURIComponent('widgets-"><é-x.zip')}`,
    );
    const ours = listing(await extract(new Uint8Array(await web.arrayBuffer()), "zip"));
    expect(Object.keys(ours)).toContain('widgets-"><é-x/README.md');
  });

  test("a download cancelled after its first bytes leaves the server serving the same archive whole", async () => {
    const whole = new Uint8Array(await (await get(`/v1/orgs/arch/repos/widgets/archive/${plain}?format=zip`)).arrayBuffer());
    for (let i = 0; i < 3; i++) {
      const r = await get(`/v1/orgs/arch/repos/widgets/archive/${plain}?format=zip`);
      const reader = r.body!.getReader();
      await reader.read();
      await reader.cancel();
    }
    expect((await fetch(`${w.server.url}/healthz`)).status).toBe(200);
    const again = new Uint8Array(await (await get(`/v1/orgs/arch/repos/widgets/archive/${plain}?format=zip`)).arrayBuffer());
    expect(Buffer.compare(again, whole)).toBe(0);
  });
});

describe("caching", () => {
  test("at a full commit id: immutable; at a branch: revalidated, 304 while it has not moved", async () => {
    const atSha = await get(`/v1/orgs/arch/repos/widgets/archive/${plain}?format=zip`);
    expect(atSha.headers.get("cache-control")).toBe("private, max-age=31536000, immutable");
    await atSha.arrayBuffer();
    const atBranch = await get("/v1/orgs/arch/repos/widgets/archive/main?format=zip");
    expect(atBranch.headers.get("cache-control")).toBe("private, no-cache");
    const etag = atBranch.headers.get("etag")!;
    expect(etag).toStartWith(`"${tip}.zip.`);
    await atBranch.arrayBuffer();
    const again = await get("/v1/orgs/arch/repos/widgets/archive/main?format=zip", { "if-none-match": etag });
    expect(again.status).toBe(304);
  });
});

describe("refusals", () => {
  test("an unknown format is 400; an unknown ref is 404", async () => {
    expect((await get("/v1/orgs/arch/repos/widgets/archive/main?format=rar")).status).toBe(400);
    expect((await get("/v1/orgs/arch/repos/widgets/archive/nope?format=zip")).status).toBe(404);
    expect((await fetch(`${w.server.url}/arch/widgets/archive/main.rar`, { headers: { cookie: w.owner.cookie } })).status).toBe(404);
  });

  test("a private repository: an outsider and anonymous get the same answer as a missing repository", async () => {
    const missing = await get("/v1/orgs/arch/repos/nothing-here/archive/main", {}, w.outsider.token);
    const hidden = await get("/v1/orgs/arch/repos/widgets/archive/main", {}, w.outsider.token);
    expect(hidden.status).toBe(404);
    expect(await hidden.json()).toEqual(await missing.json());
    const web = await fetch(`${w.server.url}/arch/widgets/archive/main.zip`, { headers: { cookie: w.outsider.cookie } });
    expect(web.status).toBe(404);
  });

  test("over the caps: 413 with a reason, before any byte", async () => {
    const many = await newRepo(w, "many");
    const dir = await initRepo(w.g, "many");
    const files: Record<string, string> = {};
    for (let i = 0; i < 70; i++) files[`f${i}.txt`] = `${i}\n`;
    await commitFiles(w.g, dir, files);
    await w.g.ok(["push", "-q", many.url, "main"], { cwd: dir });
    const r = await get("/v1/orgs/arch/repos/many/archive/main");
    expect(r.status).toBe(413);
    expect((await r.json()).error).toContain("more than 60 entries");

    const heavy = await newRepo(w, "heavy");
    const hdir = await initRepo(w.g, "heavy");
    const blob = (seed: number) => Uint8Array.from({ length: 2 * 1024 * 1024 }, (_, i) => (i * seed) % 256);
    await commitFiles(w.g, hdir, { "a.bin": blob(3), "b.bin": blob(5), "c.bin": blob(7) });
    await w.g.ok(["push", "-q", heavy.url, "main"], { cwd: hdir });
    const h = await get("/v1/orgs/arch/repos/heavy/archive/main?format=zip");
    expect(h.status).toBe(413);
    expect((await h.json()).error).toContain("MiB");
  });
});
