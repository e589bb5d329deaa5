// Negotiation lines per request are bounded (issue 25 row 6), with a refusal git prints, and the
// per-line work stays cheap: ref prefixes looked up by length in a set, "ok to give up" not walked again for
// the same question, deepen-not names resolved through one map.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { prefixMatcher } from "../../../src/git/ls-refs.ts";
import { CommonCommits } from "../../../src/git/negotiation.ts";
import { concatBytes, FLUSH_PKT, PktLineReader, pktLine, pktText } from "../../../src/git/pkt-line.ts";
import { CommitCache } from "../../../src/git/revision.ts";
import { serveUploadPack } from "../../../src/git/upload-pack.ts";
import { MemoryRepo } from "./harness.ts";
import { git, gitLines, makeFixtureRepo, removeDir, rng } from "./repo-fixture.ts";

let fixture: string;
let repo: MemoryRepo;

beforeAll(async () => {
  fixture = await makeFixtureRepo(300, 3);
  repo = await MemoryRepo.create();
  await repo.importFrom(fixture);
});
afterAll(async () => {
  await repo.close();
  await removeDir(fixture);
});

const DELIM = new TextEncoder().encode("0001");

async function converse(request: Uint8Array, protocol: 0 | 2, maxLines: number) {
  const out: Uint8Array[] = [];
  const metrics = await serveUploadPack(
    repo.snapshot(),
    {
      input: (async function* () {
        yield request;
      })(),
      write: (c) => void out.push(c),
    },
    { protocol, statelessRpc: true, limits: { maxLines, setting: "SVC_GIT_MAX_NEGOTIATION" } },
  );
  const lines: string[] = [];
  const reader = new PktLineReader(
    (async function* () {
      yield concatBytes(out);
    })(),
  );
  for (let p = await reader.read(); p.type !== "eof"; p = await reader.read()) lines.push(p.type === "data" ? pktText(p.data) : p.type);
  return { lines, metrics };
}

const oid = (i: number) => i.toString(16).padStart(40, "0");

describe("lines per request are bounded", () => {
  test("v0: one 'have' or 'want' or 'shallow' line past the limit is refused with a message git prints", async () => {
    const main = git(fixture, ["rev-parse", "main"]);
    const haves = Array.from({ length: 101 }, (_, i) => pktLine(`have ${oid(i + 1)}`));
    const tooManyHaves = await converse(concatBytes([pktLine(`want ${main} multi_ack_detailed side-band-64k`), FLUSH_PKT, ...haves, pktLine("done")]), 0, 100);
    expect(tooManyHaves.lines).toEqual(["ERR upload-pack: more than 100 'have' lines in one request; the server's SVC_GIT_MAX_NEGOTIATION sets it"]);
    expect(tooManyHaves.metrics.error).toContain("more than 100 'have' lines");

    const shallow = Array.from({ length: 101 }, (_, i) => pktLine(`shallow ${oid(i + 1)}`));
    const tooManyShallow = await converse(concatBytes([pktLine(`want ${main} side-band-64k`), ...shallow, FLUSH_PKT, pktLine("done")]), 0, 100);
    expect(tooManyShallow.lines).toEqual(["ERR upload-pack: more than 100 'shallow' lines in one request; the server's SVC_GIT_MAX_NEGOTIATION sets it"]);

    // At the limit it is served.
    const ok = await converse(
      concatBytes([pktLine(`want ${main} multi_ack_detailed side-band-64k no-progress`), FLUSH_PKT, ...haves.slice(0, 100), pktLine("done")]),
      0,
      100,
    );
    expect(ok.lines[ok.lines.length - 1]).toBe("flush");
    expect(ok.metrics).toMatchObject({ haves: 100, objects: expect.any(Number) });
  });

  test("v2: fetch and ls-refs arguments past the limit are refused", async () => {
    const main = git(fixture, ["rev-parse", "main"]);
    const haves = Array.from({ length: 51 }, (_, i) => pktLine(`have ${oid(i + 1)}`));
    const fetch = await converse(concatBytes([pktLine("command=fetch"), DELIM, pktLine(`want ${main}`), ...haves, pktLine("done"), FLUSH_PKT]), 2, 50);
    expect(fetch.lines).toEqual(["ERR upload-pack: more than 50 'have' lines in one request; the server's SVC_GIT_MAX_NEGOTIATION sets it"]);
    const prefixes = Array.from({ length: 51 }, (_, i) => pktLine(`ref-prefix refs/heads/x${i}`));
    const ls = await converse(concatBytes([pktLine("command=ls-refs"), DELIM, ...prefixes, FLUSH_PKT]), 2, 50);
    expect(ls.lines).toEqual(["ERR upload-pack: more than 50 'ref-prefix' lines in one request; the server's SVC_GIT_MAX_NEGOTIATION sets it"]);
  });

  test("ls-refs with 65,536 prefixes or more lists every ref, as git does", async () => {
    const prefixes = Array.from({ length: 65536 }, (_, i) => pktLine(`ref-prefix refs/nothing/${i}`));
    const { lines } = await converse(concatBytes([pktLine("command=ls-refs"), DELIM, ...prefixes, FLUSH_PKT]), 2, 100_000);
    // Every ref and HEAD, then the flush.
    expect(lines.length).toBe(gitLines(fixture, ["for-each-ref"]).length + 2);
    const fewer = await converse(
      concatBytes([pktLine("command=ls-refs"), DELIM, ...prefixes.slice(2), pktLine("ref-prefix refs/heads/main"), FLUSH_PKT]),
      2,
      100_000,
    );
    expect(fewer.lines).toEqual([`${git(fixture, ["rev-parse", "main"])} refs/heads/main`, "flush"]);
  });
});

describe("per-line work", () => {
  test("the prefix matcher answers as a scan of every prefix does", async () => {
    const rand = rng(5);
    const alphabet = ["refs/", "heads/", "tags/", "a", "b", "ab", "/", "x"];
    const word = (n: number) => Array.from({ length: n }, () => alphabet[Math.floor(rand() * alphabet.length)]).join("");
    for (let round = 0; round < 200; round++) {
      const prefixes = Array.from({ length: Math.floor(rand() * 12) }, () => word(1 + Math.floor(rand() * 4)));
      const match = await prefixMatcher(prefixes);
      for (let k = 0; k < 50; k++) {
        const name = word(1 + Math.floor(rand() * 6));
        expect({ prefixes, name, m: match(name) }).toEqual({ prefixes, name, m: prefixes.length === 0 || prefixes.some((p) => name.startsWith(p)) });
      }
    }
  });

  test("okToGiveUp is not walked again while nothing it depends on changed", async () => {
    const snapshot = repo.snapshot();
    let reads = 0;
    const counting = {
      has: (o: string) => snapshot.objects.has(o),
      read: (o: string) => {
        reads++;
        return snapshot.objects.read(o);
      },
      readHeader: (o: string) => snapshot.objects.readHeader(o),
    };
    const common = new CommonCommits(new CommitCache(counting));
    const main = git(fixture, ["rev-parse", "main"]);
    // A have on a branch main does not reach: the walk from main fails.
    const unrelated = git(fixture, ["rev-parse", "orphan"]);
    expect(await common.gotOid(unrelated)).toBe(1);
    expect(await common.okToGiveUp([main])).toBe(false);
    const after = reads;
    for (let i = 0; i < 1000; i++) {
      expect(await common.gotOid(oid(i + 1))).toBe(-1);
      expect(await common.okToGiveUp([main])).toBe(false);
    }
    expect(reads).toBe(after);
    // A have main reaches changes the answer.
    expect(await common.gotOid(git(fixture, ["rev-parse", "main~2"]))).toBe(1);
    expect(await common.okToGiveUp([main])).toBe(true);
  });
});
