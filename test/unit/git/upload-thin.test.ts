// Thin packs (issue 24 item 10): an incremental fetch sends new versions of files as deltas
// against the versions the client has, even when the stored pack keeps the new versions whole
// (git's own repack stores the newest version whole and older ones as deltas against it).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryRepo, serveHttp } from "./harness.ts";
import { git, removeDir, rng, runGit } from "./repo-fixture.ts";

let fixture: string;
let repo: MemoryRepo;
let work: string;
let http: { url: string; stop(): void };
let seq = 0;

/** Text files of a few hundred lines, edited and grown a little in each of 8 commits, repacked by git. */
async function makeEditedRepo(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "svc-thin-fixture-"));
  git(dir, ["init", "-q", "--bare", "-b", "main"]);
  const rand = rng(7);
  const word = () => ["alpha", "beta", "gamma", "delta", "return", "const", "value", "index", "(x)", "{", "}"][Math.floor(rand() * 11)];
  const files = new Map<string, string[]>();
  for (let f = 0; f < 12; f++) {
    files.set(
      `src/m${f}/file${f}.txt`,
      Array.from({ length: 300 + f * 40 }, (_, i) => `${i} ${word()} ${word()} ${word()} ${word()} ${word()}`),
    );
  }
  const lines: string[] = [];
  const enc = new TextEncoder();
  const data = (s: string) => lines.push(`data ${enc.encode(s).length}`, s);
  for (let c = 1; c <= 8; c++) {
    lines.push(
      "commit refs/heads/main",
      `mark :${c}`,
      `author A <a@example.com> ${1_600_000_000 + c * 60} +0000`,
      `committer C <c@example.com> ${1_600_000_000 + c * 60} +0000`,
    );
    data(`commit ${c}\n`);
    if (c > 1) lines.push(`from :${c - 1}`);
    for (const [path, content] of files) {
      if (c > 1 && rand() < 0.5) continue;
      for (let e = 0; e < 3; e++) content[Math.floor(rand() * content.length)] = `edited ${c} ${word()} ${word()}`;
      // Files grow, so git's repack keeps the newest (largest) version whole and deltas the older ones against it.
      for (let e = 0; e < 20; e++) content.push(`added ${c} ${e} ${word()} ${word()} ${word()}`);
      lines.push(`M 100644 inline ${path}`);
      data(`${content.join("\n")}\n`);
    }
    if (c === 2) lines.push("reset refs/heads/old", `from :2`);
  }
  git(dir, ["fast-import", "--quiet"], `${lines.join("\n")}\n`);
  // No bitmap: with one, C git reuses the stored entries as they are and searches no deltas.
  git(dir, ["repack", "-adfq", "--window=50", "--no-write-bitmap-index"]);
  return dir;
}

beforeAll(async () => {
  fixture = await makeEditedRepo();
  repo = await MemoryRepo.create();
  await repo.importFrom(fixture);
  work = await mkdtemp(join(tmpdir(), "svc-upload-thin-"));
  http = serveHttp(repo, work);
});
afterAll(async () => {
  http.stop();
  await repo.close();
  await Promise.all([fixture, work].map(removeDir));
});

/** Fetch main into a clone of `old` from `url`; the size of the pack as it crossed the wire (GIT_TRACE_PACKFILE). */
async function fetchedPackBytes(url: string, version: number): Promise<number> {
  const dir = join(work, `clone-${++seq}`);
  git(work, ["clone", "-q", "--bare", "--single-branch", "--branch", "old", `file://${fixture}`, dir]);
  const trace = join(work, `trace-${seq}.pack`);
  const args = ["-c", `protocol.version=${version}`, "fetch", "-q", url, "+refs/heads/main:refs/heads/main"];
  const r = await runGit(dir, args, { GIT_TRACE_PACKFILE: trace });
  if (r.exitCode !== 0) throw new Error(r.stderr);
  git(dir, ["fsck", "--no-dangling"]);
  expect(git(dir, ["rev-parse", "main"])).toBe(git(fixture, ["rev-parse", "main"]));
  return statSync(trace).size;
}

describe("thin packs", () => {
  for (const version of [0, 2]) {
    test(`v${version}: an incremental fetch is about as small as C git's`, async () => {
      const ours = await fetchedPackBytes(http.url, version);
      const theirs = await fetchedPackBytes(`file://${fixture}`, version);
      expect({ ours, theirs, fits: ours <= Math.ceil(1.5 * theirs) + 2048 }).toEqual({ ours, theirs, fits: true });
    });
  }
});
