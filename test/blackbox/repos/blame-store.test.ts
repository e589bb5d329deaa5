// Stored blames (services/git/blame-store.ts) on the real server: a finished blame lands in the
// object store; the blame of a newer commit takes an ancestor's stored blame (seen through a
// commit summary edited in storage); a restarted server answers from storage; a corrupt or
// oversized stored entry is ignored, recomputed and replaced. Every answer is checked line by
// line against `git blame --porcelain`.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { Glob } from "bun";
import { newRepo, repoApi, startWorld, type TestRepo, type World } from "../../helpers/content.ts";
import { commitFiles, initRepo } from "../../helpers/git.ts";
import { type RunningServer, startServer } from "../../helpers/server.ts";

setDefaultTimeout(90_000);

let w: World;
let repo: TestRepo;
let dir: string;
let server: RunningServer;
const started: RunningServer[] = [];

const git = (...args: string[]) => w.g.ok(args, { cwd: dir });
const lines = (...xs: string[]) => xs.map((x) => `${x}\n`).join("");
const blame = (ref: string, path: string) => {
  const api = repoApi(server, w.owner.org, repo.name, w.owner.token);
  return api.c.get(`${api.base}/blame/${encodeURIComponent(ref)}?path=${encodeURIComponent(path)}`);
};

async function gitBlame(rev: string, path: string): Promise<string[]> {
  const out = await git("blame", "--porcelain", rev, "--", path);
  const shas: string[] = [];
  for (const line of out.split("\n")) {
    const m = /^([0-9a-f]{40}) \d+ (\d+)/.exec(line);
    if (m) shas[Number(m[2]) - 1] = m[1]!;
  }
  return shas;
}

type Body = { lines: number; ranges: { start: number; count: number; commit: { sha: string; summary: string } }[] };
const perLine = (body: Body) => body.ranges.flatMap((r) => Array.from({ length: r.count }, () => r.commit.sha));
const summaries = (body: Body) => Object.fromEntries(body.ranges.map((r) => [r.commit.sha, r.commit.summary]));

/** The stored blame file of `commit` (exactly one). */
function storedFile(commit: string): string {
  const found = [...new Glob(`objects/repos/*/blame/v1/*/${commit}`).scanSync(server.dataDir)];
  expect(found).toHaveLength(1);
  return join(server.dataDir, found[0]!);
}
const readStored = (commit: string) => JSON.parse(gunzipSync(readFileSync(storedFile(commit))).toString("utf8"));

async function restart(): Promise<void> {
  await server.stop();
  server = await startServer({ dataDir: server.dataDir, env: server.env });
  started.push(server);
}

let first: string;
let a: string;
let b: string;

beforeAll(async () => {
  w = await startWorld("blamestore");
  server = w.server;
  repo = await newRepo(w, "story");
  dir = await initRepo(w.g, "story");
  let text = Array.from({ length: 30 }, (_, i) => `line ${i}`);
  await commitFiles(w.g, dir, { "f.txt": lines(...text) }, "start");
  first = await git("rev-parse", "HEAD");
  for (let i = 0; i < 4; i++) {
    text = text.map((l, j) => (j % 5 === i ? `${l} edited ${i}` : l));
    await commitFiles(w.g, dir, { "f.txt": lines(...text) }, `edit ${i}`);
  }
  a = await git("rev-parse", "HEAD");
  await git("push", "-q", repo.url, "HEAD:refs/heads/main");
  text = [...text.slice(0, 10), "inserted", ...text.slice(10)];
  await commitFiles(w.g, dir, { "f.txt": lines(...text) }, "insert");
  b = await git("rev-parse", "HEAD");
}, 90_000);

afterAll(async () => {
  for (const s of started) await s.stop();
  await w?.close();
  if (server) rmSync(server.dataDir, { recursive: true, force: true });
}, 30_000);

describe("stored blames", () => {
  test("a blame is stored; a pushed commit's blame takes its parent's stored blame", async () => {
    const r = await blame("main", "f.txt");
    expect(r.status).toBe(200);
    expect(perLine(r.body)).toEqual(await gitBlame(a, "f.txt"));
    const stored = readStored(a);
    expect({ path: stored.path, lines: stored.lines }).toEqual({ path: "f.txt", lines: 30 });

    // Edit the first commit's summary in the stored blame of `a`: an answer that shows it came from there.
    const i = stored.commits.findIndex((c: { sha: string }) => c.sha === first);
    stored.commits[i].summary = "from storage";
    writeFileSync(storedFile(a), gzipSync(JSON.stringify(stored)));

    await git("push", "-q", repo.url, "HEAD:refs/heads/main");
    const next = await blame("main", "f.txt");
    expect(next.status).toBe(200);
    expect(perLine(next.body)).toEqual(await gitBlame(b, "f.txt"));
    expect(summaries(next.body)[first]).toBe("from storage");
    expect(summaries(next.body)[b]).toBe("insert");
    expect(readStored(b).lines).toBe(31);
  });

  test("a restarted server answers from storage", async () => {
    await restart();
    const r = await blame(b, "f.txt");
    expect(r.status).toBe(200);
    expect(perLine(r.body)).toEqual(await gitBlame(b, "f.txt"));
    expect(summaries(r.body)[first]).toBe("from storage");
  });

  test("a corrupt or oversized stored entry is ignored, recomputed and replaced", async () => {
    writeFileSync(storedFile(b), "not gzip at all");
    writeFileSync(storedFile(a), new Uint8Array(3 * 1024 * 1024));
    await restart();
    const ra = await blame(a, "f.txt");
    expect(ra.status).toBe(200);
    expect(perLine(ra.body)).toEqual(await gitBlame(a, "f.txt"));
    expect(summaries(ra.body)[first]).toBe("start");
    expect(readStored(a).lines).toBe(30);
    const rb = await blame(b, "f.txt");
    expect(rb.status).toBe(200);
    expect(perLine(rb.body)).toEqual(await gitBlame(b, "f.txt"));
    expect(summaries(rb.body)[first]).toBe("start");
    expect(readStored(b).lines).toBe(31);
  });
});
