// The fetch client against C git's own server (`git http-backend`, v2 and v0): refs, HEAD and
// peeled tags as git lists them; a clone-sized pack and an incremental thin pack that the
// indexer completes into exactly what the origin has; have negotiation in few rounds; auth,
// missing repositories and dumb servers refused with their own failure kinds.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FetchError, openRemote, type FetchStats, type RemoteOptions } from "../../../src/git/fetch-client.ts";
import { HaveWalker } from "../../../src/git/fetch-negotiator.ts";
import { indexPack, type IndexedPack } from "../../../src/git/pack-indexer.ts";
import { openIndexedPack } from "../../../src/git/pack-overlay.ts";
import { PackSet } from "../../../src/git/pack-set.ts";
import { CommitCache } from "../../../src/git/revision.ts";
import { startHttpBackend, type HttpBackend } from "../../helpers/git-http-backend.ts";
import { plainTransport } from "../../helpers/http-transport.ts";
import { FLUSH, pkt } from "../../helpers/git.ts";
import { git, gitAsync, makeFixtureRepo, removeDir } from "../../unit/git/repo-fixture.ts";

let root: string;
let origin: string;
let backend: HttpBackend;
let v0: HttpBackend;
let work: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "svc-fetch-client-"));
  work = join(root, "work");
  await mkdir(join(root, "served"));
  await mkdir(work);
  origin = join(root, "served", "origin.git");
  await rename(await makeFixtureRepo(300, 11), origin);
  git(origin, ["symbolic-ref", "HEAD", "refs/heads/main"]);
  backend = startHttpBackend({ root: join(root, "served") });
  v0 = startHttpBackend({ root: join(root, "served"), v0Only: true });
}, 60_000);

afterAll(async () => {
  backend?.stop();
  v0?.stop();
  await removeDir(root);
});

const opts = (extra: Partial<RemoteOptions> = {}): RemoteOptions => ({ transport: plainTransport(), ...extra });
const T = 60_000;
const freshStats = (): FetchStats => ({ rounds: 0, havesSent: 0, acks: 0, packBytes: 0 });

/** `{ ref: oid }` of the origin's heads and tags, as git lists them. */
function originRefs(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of git(dir, ["for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags"]).split("\n")) {
    const [name, oid] = line.split(" ");
    out[name!] = oid!;
  }
  return out;
}

/** The objects a set of packs holds, verified by C git: write them into a bare repository and fsck it with the refs. */
async function verifyWithGit(packs: IndexedPack[], refs: Record<string, string>): Promise<string> {
  const dir = join(work, `check-${Math.random().toString(36).slice(2)}`);
  await gitAsync(root, ["init", "-q", "--bare", dir]);
  for (const p of packs) {
    await writeFile(join(dir, "objects", "pack", `pack-${p.name}.pack`), await Bun.file(p.packPath).bytes());
    await writeFile(join(dir, "objects", "pack", `pack-${p.name}.idx`), await Bun.file(p.idxPath).bytes());
  }
  for (const [name, oid] of Object.entries(refs)) await gitAsync(dir, ["update-ref", name, oid]);
  await gitAsync(dir, ["fsck", "--full", "--strict", "--no-progress", "--no-dangling"]);
  return dir;
}

for (const [label, server] of [
  ["v2", () => backend],
  ["v0", () => v0],
] as const) {
  describe(`fetch client against git http-backend (${label})`, () => {
    test(
      "lists heads and tags with their peeled values, and HEAD's branch",
      async () => {
        const remote = await openRemote(`${server().url}/origin.git`, opts());
        expect(remote.protocol).toBe(label === "v2" ? 2 : 0);
        expect(Object.fromEntries(remote.refs.map((r) => [r.name, r.oid]))).toEqual(originRefs(origin));
        expect(remote.head).toBe("refs/heads/main");
        const v250 = remote.refs.find((r) => r.name === "refs/tags/v250")!;
        expect(v250.peeled).toBe(git(origin, ["rev-parse", "v250^{}"]));
        expect(remote.refs.find((r) => r.name === "refs/heads/main")!.peeled).toBeNull();
      },
      T,
    );

    test(
      "a clone, then an incremental fetch with haves: a thin pack the indexer completes",
      async () => {
        const url = `${server().url}/origin.git`;
        const remote = await openRemote(url, opts());
        const stats = freshStats();
        const wants = [...new Set(remote.refs.map((r) => r.oid))];
        const first = await indexPack(await remote.fetchPack(wants, null, stats), { tmpDir: work });
        expect(stats.havesSent).toBe(0);
        expect(stats.packBytes).toBe(first.size);
        const before = originRefs(origin);
        await verifyWithGit([first], before);

        // The origin moves on: a clone of it gets ten commits on main and a new branch.
        const clone = join(work, `clone-${label}`);
        await gitAsync(root, ["clone", "-q", origin, clone]);
        for (let i = 0; i < 10; i++) {
          await writeFile(join(clone, "d0", "more.txt"), `line ${i}\n`.repeat(50 + i));
          await gitAsync(clone, ["add", "-A"]);
          await gitAsync(clone, ["-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", `more ${i}`]);
        }
        await gitAsync(clone, ["push", "-q", origin, "main:main", "main:refs/heads/topic"]);

        const local = await openIndexedPack(first);
        try {
          const objects = new PackSet([local.pack]);
          const again = await openRemote(url, opts());
          const want2 = [...new Set(again.refs.map((r) => r.oid))].filter((oid) => !objects.locate(oid));
          expect(want2).toEqual([git(origin, ["rev-parse", "main"])]);
          const walker = new HaveWalker(new CommitCache(objects));
          for (const oid of Object.values(before)) await walker.addTip(oid);
          const s2 = freshStats();
          const second = await indexPack(await again.fetchPack(want2, walker, s2), { tmpDir: work, thinBaseReader: objects });
          // The origin recognized our tips at once: one negotiation round and the pack.
          expect(s2.acks).toBeGreaterThan(0);
          expect(s2.rounds).toBeLessThanOrEqual(2);
          expect(second.objectCount).toBeLessThan(60);
          await verifyWithGit([first, second], originRefs(origin));
        } finally {
          await local.close();
          await gitAsync(origin, ["update-ref", "-d", "refs/heads/topic"]);
          await gitAsync(origin, ["update-ref", "refs/heads/main", before["refs/heads/main"]!]);
        }
      },
      T,
    );

    test(
      "unrelated local history: haves the origin does not know cost rounds, not correctness",
      async () => {
        const url = `${server().url}/origin.git`;
        const other = await makeFixtureRepo(300, 7);
        try {
          const { openRepoPacks } = await import("../../unit/git/repo-fixture.ts");
          const mine = await openRepoPacks(other);
          try {
            const walker = new HaveWalker(new CommitCache(mine.set));
            for (const line of git(other, ["for-each-ref", "--format=%(objectname)"]).split("\n")) await walker.addTip(line);
            const remote = await openRemote(url, opts());
            const stats = freshStats();
            const pack = await indexPack(await remote.fetchPack([...new Set(remote.refs.map((r) => r.oid))], walker, stats), {
              tmpDir: work,
              thinBaseReader: mine.set,
            });
            expect(stats.acks).toBe(0);
            expect(stats.havesSent).toBeGreaterThan(0);
            await verifyWithGit([pack], originRefs(origin));
          } finally {
            await mine.close();
          }
        } finally {
          await removeDir(other);
        }
      },
      T,
    );
  });
}

describe("fetch client refusals", () => {
  test(
    "credentials: none is 'auth', wrong is 'auth', right lists the refs",
    async () => {
      using locked = startHttpBackend({ root: join(root, "served"), auth: { username: "mirror", password: "s3cret" } });
      const url = `${locked.url}/origin.git`;
      const none = await openRemote(url, opts()).catch((e) => e);
      expect(none).toBeInstanceOf(FetchError);
      expect({ kind: none.kind, message: none.message }).toEqual({
        kind: "auth",
        message:
          "origin answered HTTP 401 without credentials: the repository may not exist (check the URL), or it is private and the mirror needs credentials",
      });
      const wrong = await openRemote(url, opts({ auth: { kind: "basic", username: "mirror", password: "nope" } })).catch((e) => e);
      expect({ kind: wrong.kind, message: wrong.message }).toEqual({
        kind: "auth",
        message: "origin refused the credentials (HTTP 401): they may be wrong or lack access, or the repository may not exist; check the URL",
      });
      const ok = await openRemote(url, opts({ auth: { kind: "basic", username: "mirror", password: "s3cret" } }));
      expect(ok.refs.length).toBe(Object.keys(originRefs(origin)).length);
    },
    T,
  );

  test(
    "a missing repository is 'not-found'; a dumb or non-git server is 'not-smart'; a redirect is not followed",
    async () => {
      const missing = await openRemote(`${backend.url}/nope.git`, opts()).catch((e) => e);
      expect(missing.kind).toBe("not-found");
      using plain = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch: (req) =>
          new URL(req.url).pathname.startsWith("/moved")
            ? Response.redirect(`${backend.url}/origin.git/info/refs?service=git-upload-pack`, 301)
            : new Response("<html>login</html>", { headers: { "content-type": "text/html" } }),
      });
      const dumb = await openRemote(`http://127.0.0.1:${plain.port}/x.git`, opts()).catch((e) => e);
      expect({ kind: dumb.kind, message: dumb.message }).toEqual({
        kind: "not-smart",
        message: 'origin is not a smart-HTTP git server (content type "text/html")',
      });
      const moved = await openRemote(`http://127.0.0.1:${plain.port}/moved.git`, opts()).catch((e) => e);
      expect(moved.kind).toBe("http");
      expect(moved.message).toContain("redirects are not followed");
    },
    T,
  );

  test(
    "a bearer token goes in the Authorization header of every request",
    async () => {
      const seen: (string | undefined)[] = [];
      const base = plainTransport();
      const remote = await openRemote(`${backend.url}/origin.git`, {
        transport: (r) => {
          seen.push(r.headers.authorization);
          return base(r);
        },
        auth: { kind: "bearer", token: "t0ken" },
      });
      const pack = await indexPack(await remote.fetchPack([remote.refs[0]!.oid], null, freshStats()), { tmpDir: work });
      expect(pack.objectCount).toBeGreaterThan(0);
      expect(seen.length).toBe(3);
      expect(new Set(seen)).toEqual(new Set(["Bearer t0ken"]));
    },
    T,
  );

  test(
    "refs outside the asked prefixes and malformed names are left out",
    async () => {
      await gitAsync(origin, ["update-ref", "refs/pull/1/head", "main"]);
      try {
        const remote = await openRemote(`${backend.url}/origin.git`, opts());
        expect(remote.refs.some((r) => r.name.startsWith("refs/pull/"))).toBe(false);
        const all = await openRemote(`${backend.url}/origin.git`, opts({ refPrefixes: ["refs/"] }));
        expect(all.refs.some((r) => r.name === "refs/pull/1/head")).toBe(true);
      } finally {
        await gitAsync(origin, ["update-ref", "-d", "refs/pull/1/head"]);
      }
    },
    T,
  );
});

describe("a hostile or broken origin (protocol v2)", () => {
  const OID = "a".repeat(40);
  /** A fake v2 server: capabilities, then `lsRefs` and `fetch` bodies as given. */
  function fake(answer: { lsRefs: Uint8Array; fetch: Uint8Array }) {
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        if (req.method === "GET") {
          return new Response(Buffer.concat([pkt("version 2\n"), pkt("agent=fake\n"), pkt("ls-refs\n"), pkt("fetch\n"), FLUSH]), {
            headers: { "content-type": "application/x-git-upload-pack-advertisement" },
          });
        }
        const body = await req.text();
        return new Response((body.includes("command=ls-refs") ? answer.lsRefs : answer.fetch) as Uint8Array<ArrayBuffer>, {
          headers: { "content-type": "application/x-git-upload-pack-result" },
        });
      },
    });
    return { url: `http://127.0.0.1:${server.port}/x.git`, [Symbol.dispose]: () => server.stop(true) };
  }
  const lsRefs = (...lines: string[]) => Buffer.concat([...lines.map((l) => pkt(`${l}\n`)), FLUSH]);

  test("ref names git would refuse are left out", async () => {
    using f = fake({
      lsRefs: lsRefs(`${OID} refs/heads/ok`, `${OID} refs/heads/../../evil`, `${OID} refs/heads/a..b`, `${OID} refs/heads/x.lock`),
      fetch: FLUSH,
    });
    const remote = await openRemote(f.url, opts());
    expect(remote.refs.map((r) => r.name)).toEqual(["refs/heads/ok"]);
  });

  test("a side-band error inside the pack is the origin's message", async () => {
    using f = fake({
      lsRefs: lsRefs(`${OID} refs/heads/main`),
      fetch: Buffer.concat([
        pkt("packfile\n"),
        pkt(Buffer.concat([Buffer.from([1]), Buffer.from("PACK")])),
        pkt(Buffer.concat([Buffer.from([3]), Buffer.from("upload-pack: out of memory")])),
        FLUSH,
      ]),
    });
    const remote = await openRemote(f.url, opts());
    const e = await indexPack(await remote.fetchPack([OID], null, freshStats()), { tmpDir: work }).catch((x) => x);
    expect({ kind: e.kind, message: e.message }).toEqual({ kind: "remote", message: "origin: upload-pack: out of memory" });
  });

  test("more acknowledgments than haves offered is a protocol error", async () => {
    const acks = Array.from({ length: 40 }, (_, i) => pkt(`ACK ${i.toString(16).padStart(40, "0")}\n`));
    using f = fake({ lsRefs: lsRefs(`${OID} refs/heads/main`), fetch: Buffer.concat([pkt("acknowledgments\n"), ...acks, FLUSH]) });
    const remote = await openRemote(f.url, opts());
    const e = await remote.fetchPack([OID], null, freshStats(), ["b".repeat(40)]).catch((x) => x);
    expect({ kind: e.kind, message: e.message }).toEqual({ kind: "protocol", message: "origin acknowledged more than it was offered" });
  });
});
