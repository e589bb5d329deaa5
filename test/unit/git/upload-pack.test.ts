import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { advertiseRefs } from "../../../src/git/advertise.ts";
import { concatBytes, FLUSH_PKT, PktLineReader, pktLine, pktText } from "../../../src/git/pkt-line.ts";
import { serveUploadPack } from "../../../src/git/upload-pack.ts";
import { MemoryRepo, serveHttp, serveSsh } from "./harness.ts";
import { git, gitAsync, gitLines, makeFixtureRepo, removeDir, runGit } from "./repo-fixture.ts";

let fixture: string;
let repo: MemoryRepo;
let work: string;
let http: { url: string; stop(): void };
let ssh: { url: string; env: Record<string, string>; stop(): void };
let seq = 0;

beforeAll(async () => {
  fixture = await makeFixtureRepo(400, 7);
  repo = await MemoryRepo.create();
  await repo.importFrom(fixture);
  work = await mkdtemp(join(tmpdir(), "svc-upload-pack-"));
  http = serveHttp(repo, work);
  ssh = await serveSsh(repo, work);
});
afterAll(async () => {
  http.stop();
  ssh.stop();
  await repo.close();
  await Promise.all([fixture, work].map(removeDir));
});

const newDir = (name: string): string => join(work, `${name}-${++seq}`);
const shallowOf = (gitDir: string): string[] =>
  existsSync(join(gitDir, "shallow")) ? readFileSync(join(gitDir, "shallow"), "utf8").trim().split("\n").sort() : [];
const refsOf = (gitDir: string, pattern = "refs/"): string[] => gitLines(gitDir, ["for-each-ref", "--format=%(objectname) %(refname)", pattern]);
const fsck = (gitDir: string): string => git(gitDir, ["fsck", "--full", "--no-dangling"]);

const transports = [
  { name: "http v0", url: () => http.url, env: () => ({}), version: 0 },
  { name: "http v2", url: () => http.url, env: () => ({}), version: 2 },
  { name: "ssh v0", url: () => ssh.url, env: () => ssh.env, version: 0 },
  { name: "ssh v2", url: () => ssh.url, env: () => ssh.env, version: 2 },
];

for (const t of transports) {
  describe(`git client over ${t.name}`, () => {
    const run = (cwd: string, args: string[]) => gitAsync(cwd, ["-c", `protocol.version=${t.version}`, ...args], t.env());

    test("ls-remote shows what git would advertise", async () => {
      const ours = await run(work, ["ls-remote", t.url()]);
      const theirs = git(work, ["ls-remote", `file://${fixture}`]);
      expect(ours).toBe(theirs);
    });

    test("mirror clone gets every ref and object, and passes fsck", async () => {
      const dir = newDir("mirror");
      await run(work, ["clone", "-q", "--mirror", t.url(), dir]);
      expect(refsOf(dir)).toEqual(refsOf(fixture));
      expect(gitLines(dir, ["rev-list", "--all", "--objects"]).length).toBe(gitLines(fixture, ["rev-list", "--all", "--objects"]).length);
      fsck(dir);
      expect(git(dir, ["symbolic-ref", "HEAD"])).toBe("refs/heads/main");
    });

    test("shallow clone, deepen and unshallow match a real git server", async () => {
      const ours = newDir("shallow");
      const oracle = newDir("oracle");
      await run(work, ["clone", "-q", "--bare", "--depth", "2", t.url(), ours]);
      git(work, ["clone", "-q", "--bare", "--depth", "2", `file://${fixture}`, oracle]);
      expect(shallowOf(ours)).toEqual(shallowOf(oracle));
      expect(refsOf(ours)).toEqual(refsOf(oracle));
      fsck(ours);

      await run(ours, ["fetch", "-q", "--deepen=5", "origin"]);
      git(oracle, ["fetch", "-q", "--deepen=5", "origin"]);
      expect(shallowOf(ours)).toEqual(shallowOf(oracle));
      fsck(ours);

      await run(ours, ["fetch", "-q", "--unshallow", "origin"]);
      expect(shallowOf(ours)).toEqual([]);
      fsck(ours);
    });

    test("shallow-since and shallow-exclude clones match a real git server", async () => {
      for (const arg of ["--shallow-since=1601000000", "--shallow-exclude=old"]) {
        const ours = newDir("since");
        const oracle = newDir("oracle");
        await run(work, ["clone", "-q", "--bare", arg, t.url(), ours]);
        git(work, ["clone", "-q", "--bare", arg, `file://${fixture}`, oracle]);
        expect(shallowOf(ours)).toEqual(shallowOf(oracle));
        fsck(ours);
      }
    });

    test("partial clone with blob:none fetches blobs lazily on checkout", async () => {
      const dir = newDir("partial");
      await run(work, ["clone", "-q", "--filter=blob:none", "--no-checkout", t.url(), dir]);
      const gitDir = join(dir, ".git");
      const missing = gitLines(dir, ["rev-list", "--objects", "--missing=print", "HEAD"]).filter((l) => l.startsWith("?"));
      expect(missing.length).toBeGreaterThan(0);
      await run(dir, ["checkout", "-q", "main"]);
      expect(readFileSync(join(dir, "d0", "s0", "f0.txt"), "utf8")).toBe(git(fixture, ["show", "main:d0/s0/f0.txt"]) + "\n");
      git(gitDir, ["fsck", "--no-dangling"]);
    });

    test("blob:limit clone leaves out exactly the large blobs", async () => {
      const dir = newDir("limit");
      await run(work, ["clone", "-q", "--bare", "--filter=blob:limit=1000", t.url(), dir]);
      const missing = gitLines(dir, ["rev-list", "--objects", "--missing=print", "--all"])
        .filter((l) => l.startsWith("?"))
        .map((l) => l.slice(1))
        .sort();
      const large = gitLines(fixture, ["rev-list", "--objects", "--filter=blob:limit=1000", "--filter-print-omitted", "--all"])
        .filter((l) => l.startsWith("~"))
        .map((l) => l.slice(1))
        .sort();
      expect(missing).toEqual(large);
      expect(large.length).toBeGreaterThan(0);
    });

    test("include-tag brings annotated tags along with a single branch", async () => {
      const dir = newDir("single");
      const oracle = newDir("oracle");
      await run(work, ["clone", "-q", "--bare", "--single-branch", "--branch", "old", t.url(), dir]);
      git(work, ["clone", "-q", "--bare", "--single-branch", "--branch", "old", `file://${fixture}`, oracle]);
      expect(refsOf(dir, "refs/tags/")).toEqual(refsOf(oracle, "refs/tags/"));
      expect(refsOf(dir, "refs/tags/").length).toBeGreaterThan(0);
      fsck(dir);
    });

    test("incremental fetch negotiates from local history the server does not have", async () => {
      const dir = newDir("incr");
      await run(work, ["clone", "-q", "--bare", "--single-branch", "--branch", "old", t.url(), dir]);
      // Local-only commits: the first haves are unknown to the server.
      git(dir, ["update-ref", "refs/heads/local", "old"]);
      for (let i = 0; i < 40; i++) {
        const tree = git(dir, ["rev-parse", "refs/heads/local^{tree}"]);
        const commit = git(dir, ["commit-tree", tree, "-p", "refs/heads/local", "-m", `local ${i}`]);
        git(dir, ["update-ref", "refs/heads/local", commit]);
      }
      await run(dir, ["fetch", "-q", "origin", "+refs/heads/*:refs/remotes/origin/*"]);
      expect(git(dir, ["rev-parse", "refs/remotes/origin/main"])).toBe(git(fixture, ["rev-parse", "main"]));
      fsck(dir);
      const last = repo.fetches[repo.fetches.length - 1]!;
      expect(last.kind).toBe("fetch");
      expect(last.haves).toBeGreaterThan(0);
    });

    test("a reachable commit can be fetched by id, an unreachable one cannot", async () => {
      const dir = newDir("byid");
      git(work, ["init", "-q", "--bare", dir]);
      const reachable = git(fixture, ["rev-parse", "main~5"]);
      await run(dir, ["fetch", "-q", t.url(), reachable]);
      expect(git(dir, ["cat-file", "-t", reachable])).toBe("commit");
      const orphan = repo.refs.get("refs/heads/orphan")!;
      repo.refs.delete("refs/heads/orphan");
      try {
        await expect(run(dir, ["fetch", "-q", t.url(), orphan])).rejects.toThrow(/not our ref/);
      } finally {
        repo.refs.set("refs/heads/orphan", orphan);
      }
    });
  });
}

describe("edge cases", () => {
  test("an empty repository clones with a warning over v0 and v2", async () => {
    const empty = await MemoryRepo.create();
    const server = serveHttp(empty, work);
    try {
      for (const v of [0, 2]) {
        const dir = newDir("empty");
        const r = await runGit(work, ["-c", `protocol.version=${v}`, "clone", server.url, dir]);
        expect(r.exitCode).toBe(0);
        expect(r.stderr).toContain("empty repository");
      }
      const adv = new TextDecoder().decode(await advertiseRefs(empty.snapshot(), "git-upload-pack", { protocol: 0, http: false }));
      expect(adv).toContain(`${"0".repeat(40)} capabilities^{}\0multi_ack `);
    } finally {
      server.stop();
      await empty.close();
    }
  });

  async function converse(request: Uint8Array, opts: { protocol: 0 | 2; statelessRpc: boolean }) {
    const out: Uint8Array[] = [];
    const metrics = await serveUploadPack(
      repo.snapshot(),
      {
        input: (async function* () {
          yield request;
        })(),
        write: (c) => {
          out.push(c);
        },
      },
      opts,
    );
    const lines: string[] = [];
    const reader = new PktLineReader(
      (async function* () {
        yield concatBytes(out);
      })(),
    );
    for (let p = await reader.read(); p.type !== "eof"; p = await reader.read()) {
      lines.push(p.type === "data" ? pktText(p.data) : p.type);
    }
    return { lines, metrics };
  }

  test("v0 refuses a want of a missing object with ERR", async () => {
    const missing = "12".repeat(20);
    const { lines, metrics } = await converse(concatBytes([pktLine(`want ${missing} side-band-64k`), FLUSH_PKT, pktLine("done")]), {
      protocol: 0,
      statelessRpc: true,
    });
    expect(lines).toEqual([`ERR upload-pack: not our ref ${missing}`]);
    expect(metrics.error).toContain("not our ref");
  });

  test("v0 stateless negotiation: ACK common, ready on an unknown have, NAK, then the end of the response", async () => {
    const main = git(fixture, ["rev-parse", "main"]);
    const base = git(fixture, ["rev-parse", "main~3"]);
    const unknown = "34".repeat(20);
    const { lines } = await converse(
      concatBytes([
        pktLine(`want ${main} multi_ack_detailed side-band-64k ofs-delta`),
        FLUSH_PKT,
        pktLine(`have ${base}`),
        pktLine(`have ${unknown}`),
        FLUSH_PKT,
      ]),
      { protocol: 0, statelessRpc: true },
    );
    expect(lines).toEqual([`ACK ${base} common`, `ACK ${unknown} ready`, "NAK"]);
  });

  test("v0 with no-done sends the pack right after ready", async () => {
    const main = git(fixture, ["rev-parse", "main"]);
    const base = git(fixture, ["rev-parse", "main~3"]);
    const { lines, metrics } = await converse(
      concatBytes([pktLine(`want ${main} multi_ack_detailed no-done side-band-64k ofs-delta no-progress`), FLUSH_PKT, pktLine(`have ${base}`), FLUSH_PKT]),
      { protocol: 0, statelessRpc: true },
    );
    expect(lines.slice(0, 4)).toEqual([`ACK ${base} common`, `ACK ${base} ready`, "NAK", `ACK ${base}`]);
    expect(lines[lines.length - 1]).toBe("flush");
    expect(metrics).toMatchObject({ wants: 1, haves: 1, kind: "fetch" });
    expect(metrics.objects).toBeGreaterThan(3);
  });

  test("v2 object-info and unknown commands", async () => {
    const blob = git(fixture, ["rev-parse", "main:d0/s0/f0.txt"]);
    const size = git(fixture, ["cat-file", "-s", blob]);
    const { lines } = await converse(
      concatBytes([
        pktLine("command=object-info"),
        pktLine("object-format=sha1"),
        new TextEncoder().encode("0001"),
        pktLine("size"),
        pktLine(`oid ${blob}`),
        FLUSH_PKT,
      ]),
      { protocol: 2, statelessRpc: true },
    );
    expect(lines).toEqual(["size", `${blob} ${size}`, "flush"]);
    const bad = await converse(concatBytes([pktLine("command=frobnicate"), FLUSH_PKT]), { protocol: 2, statelessRpc: true });
    expect(bad.lines).toEqual(["ERR invalid command 'frobnicate'"]);
  });

  test("v2 ls-refs with prefixes, peel, symrefs and unborn HEAD", async () => {
    const saved = repo.head;
    try {
      repo.head = "refs/heads/unborn";
      const { lines } = await converse(
        concatBytes([
          pktLine("command=ls-refs"),
          new TextEncoder().encode("0001"),
          pktLine("symrefs"),
          pktLine("peel"),
          pktLine("unborn"),
          pktLine("ref-prefix HEAD"),
          pktLine("ref-prefix refs/tags/v2"),
          FLUSH_PKT,
        ]),
        { protocol: 2, statelessRpc: true },
      );
      const v250 = git(fixture, ["rev-parse", "v250"]);
      const peeled = git(fixture, ["rev-parse", "v250^{}"]);
      expect(lines).toEqual(["unborn HEAD symref-target:refs/heads/unborn", `${v250} refs/tags/v250 peeled:${peeled}`, "flush"]);
    } finally {
      repo.head = saved;
    }
  });
});
