// Fuzz targets for the git engine, in process: each feeds hostile input to one parser or service
// and fails on anything but a clean refusal (GitError) or a correct answer. Used by
// engine.fuzz.test.ts (small counts, `npm test`) and bench/fuzz.ts (long runs).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkConnectivity } from "../../src/git/connectivity.ts";
import { applyDelta, createDelta } from "../../src/git/delta.ts";
import { fsckObject, fsckObjects } from "../../src/git/fsck.ts";
import { parseCommit, parseTag, parseTree, serializeCommit, serializeTag, serializeTree, TREE_MODES, validateObject } from "../../src/git/object.ts";
import { hashObject } from "../../src/git/oid.ts";
import { PackIndex } from "../../src/git/pack-index.ts";
import { indexPack } from "../../src/git/pack-indexer.ts";
import { Pack } from "../../src/git/pack-reader.ts";
import { PackSet } from "../../src/git/pack-set.ts";
import { buildPack } from "../../src/git/pack-writer.ts";
import { encodePkt, FLUSH_PKT, DELIM_PKT, LARGE_PACKET_DATA_MAX, PktLineReader } from "../../src/git/pkt-line.ts";
import { serveReceivePack } from "../../src/git/receive-pack.ts";
import { checkRefFormat, isValidPushRefName } from "../../src/git/ref-name.ts";
import { editTree, type TreeOp } from "../../src/git/tree-edit.ts";
import { GitError, ZERO_OID, type ByteSource, type ObjectType, type Oid, type RawObject } from "../../src/git/types.ts";
import { serveUploadPack } from "../../src/git/upload-pack.ts";
import { splitPath } from "../../src/services/repos/commits.ts";
import { MemoryRepo } from "../unit/git/harness.ts";
import { makeFixtureRepo, removeDir } from "../unit/git/repo-fixture.ts";
import { chunked, isRefusal, mutate, type Rand, refusedOrOk, stream, type Target } from "./lib.ts";

const enc = (s: string) => new TextEncoder().encode(s);

/** A byte source over memory. */
function memorySource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.length,
    async read(offset, length) {
      if (offset < 0 || length < 0 || offset + length > bytes.length) throw new GitError("read past the end of the pack");
      return bytes.subarray(offset, offset + length);
    },
  };
}

/** The repository every engine target works on: a small history made by git, served from memory. */
export interface Fixture {
  repo: MemoryRepo;
  gitDir: string;
  tmp: string;
  /** Every object of the fixture, for seeds. */
  objects: { oid: Oid; type: ObjectType; data: Uint8Array }[];
  tips: Oid[];
  packBytes: Uint8Array;
  idxBytes: Uint8Array;
  close(): Promise<void>;
}

/** Builds the fixture (a 260-commit history with merges, tags, a gitlink and a large blob). */
export async function openFixture(): Promise<Fixture> {
  // Fixed dates for the objects git makes outside fast-import: the same fixture, so the same cases, on every run.
  const saved = { c: process.env.GIT_COMMITTER_DATE, a: process.env.GIT_AUTHOR_DATE };
  process.env.GIT_COMMITTER_DATE = process.env.GIT_AUTHOR_DATE = "1700000000 +0000";
  let gitDir: string;
  try {
    gitDir = await makeFixtureRepo(260, 7);
  } finally {
    for (const [k, v] of [
      ["GIT_COMMITTER_DATE", saved.c],
      ["GIT_AUTHOR_DATE", saved.a],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  const repo = await MemoryRepo.create();
  await repo.importFrom(gitDir);
  const tmp = await mkdtemp(join(tmpdir(), "svc-fuzz-"));
  const packDir = join(gitDir, "objects", "pack");
  const [idxName] = await Array.fromAsync(new Bun.Glob("*.idx").scan(packDir));
  const idxBytes = new Uint8Array(await Bun.file(join(packDir, idxName!)).arrayBuffer());
  const packBytes = new Uint8Array(await Bun.file(join(packDir, idxName!.replace(/\.idx$/, ".pack"))).arrayBuffer());
  const snapshot = repo.snapshot();
  const objects: Fixture["objects"] = [];
  const idx = PackIndex.parse(idxBytes);
  const pack = new Pack(idx.packChecksum, idx, memorySource(packBytes));
  for (let i = 0; i < idx.count; i++) {
    const obj = await pack.readAt(idx.offsetAt(i));
    objects.push({ oid: hashObject(obj.type, obj.data), type: obj.type, data: obj.data });
  }
  return {
    repo,
    gitDir,
    tmp,
    objects,
    tips: [...new Set(snapshot.refs.map((r) => r.oid))],
    packBytes,
    idxBytes,
    async close() {
      await repo.close();
      await removeDir(gitDir);
      await rm(tmp, { recursive: true, force: true });
    },
  };
}

/** Every ref of the repository still reaches only objects it has (git's connectivity check over everything). */
async function fullConnectivity(f: Fixture): Promise<void> {
  const snapshot = f.repo.snapshot();
  await checkConnectivity(
    snapshot.objects,
    snapshot.refs.map((r) => r.oid),
    { existing: new PackSet([]) },
  );
}

// ---------------------------------------------------------------------------------------------

/** pkt-line reader: framed streams, mutated and cut at random; unmutated ones read back exactly. */
export function pktLineTarget(): Target {
  return {
    name: "pkt-line reader",
    async run(r) {
      const packets: Uint8Array[] = [];
      const n = 1 + r.int(12);
      for (let i = 0; i < n; i++)
        packets.push(r.chance(0.1) ? FLUSH_PKT : r.chance(0.05) ? DELIM_PKT : encodePkt(r.bytes(r.int(r.chance(0.05) ? LARGE_PACKET_DATA_MAX + 1 : 200))));
      const exact = Buffer.concat(packets);
      const input = r.chance(0.3) ? exact : mutate(exact, r);
      const reader = new PktLineReader(stream(chunked(input, r)));
      let count = 0;
      await refusedOrOk(async () => {
        for (;;) {
          const p = await reader.read();
          if (p.type === "eof") break;
          if (++count > 100_000) throw new Error("reader does not terminate");
        }
      });
      if (input === exact && count !== n) throw new Error(`read ${count} packets of ${n}`);
    },
  };
}

/** upload-pack requests (v0 and v2, stateless): templates of real requests, mutated. */
export function uploadPackTarget(f: Fixture): Target {
  const snapshot = () => f.repo.snapshot();
  const anyOid = (r: Rand) => (r.chance(0.8) ? r.pick(f.objects).oid : r.chance(0.5) ? ZERO_OID : "x".repeat(40));
  return {
    name: "upload-pack requests",
    async run(r) {
      const v2 = r.chance(0.4);
      const lines: Uint8Array[] = [];
      if (v2) {
        const command = r.pick(["fetch", "ls-refs", "object-info", "bundle-uri", "nonsense"]);
        lines.push(encodePkt(`command=${command}\n`), encodePkt("agent=git/2.45\n"), encodePkt("object-format=sha1\n"), DELIM_PKT);
        for (let i = 0; i < 1 + r.int(6); i++) {
          lines.push(
            encodePkt(
              r.pick([
                `want ${r.pick(f.tips)}\n`,
                `have ${anyOid(r)}\n`,
                "done\n",
                "thin-pack\n",
                "ofs-delta\n",
                `deepen ${r.int(5)}\n`,
                "filter blob:none\n",
                `shallow ${anyOid(r)}\n`,
                "symrefs\n",
                `ref-prefix refs/${r.pick(["heads", "tags", ""])}\n`,
                `oid ${anyOid(r)}\n`,
                "size\n",
                `want-ref refs/heads/main\n`,
              ]),
            ),
          );
        }
        lines.push(FLUSH_PKT);
      } else {
        const wants = 1 + r.int(3);
        for (let i = 0; i < wants; i++)
          lines.push(
            encodePkt(
              `want ${r.chance(0.9) ? r.pick(f.tips) : anyOid(r)}${i === 0 ? " multi_ack_detailed side-band-64k thin-pack ofs-delta agent=git/2.45 no-progress" + (r.chance(0.3) ? " shallow" : "") + (r.chance(0.2) ? " filter" : "") : ""}\n`,
            ),
          );
        if (r.chance(0.2)) lines.push(encodePkt(`deepen ${r.int(4)}\n`));
        if (r.chance(0.1)) lines.push(encodePkt("filter blob:limit=100\n"));
        if (r.chance(0.1)) lines.push(encodePkt(`shallow ${anyOid(r)}\n`));
        lines.push(FLUSH_PKT);
        for (let i = 0; i < r.int(5); i++) lines.push(encodePkt(`have ${anyOid(r)}\n`));
        if (r.chance(0.8)) lines.push(encodePkt("done\n"));
      }
      const exact = Buffer.concat(lines);
      const input = r.chance(0.4) ? exact : mutate(exact, r);
      const out: Uint8Array[] = [];
      let bytes = 0;
      await serveUploadPack(
        snapshot(),
        { input: stream(chunked(input, r)), write: (c) => void ((bytes += c.length) < 64 << 20 && out.push(c)) },
        { protocol: v2 ? 2 : 0, statelessRpc: true },
      ).catch((e: unknown) => {
        if (!isRefusal(e)) throw e;
      });
    },
  };
}

/** receive-pack requests: real pushes (new commits made here), their commands and packs mutated; the repository must stay connected. */
export function receivePackTarget(f: Fixture): Target {
  return {
    name: "receive-pack requests",
    every: 1,
    invariant: () => fullConnectivity(f),
    async run(r, n) {
      const snapshot = f.repo.snapshot();
      const base = r.pick(snapshot.refs.filter((x) => x.name.startsWith("refs/heads/")));
      const baseObj = await snapshot.objects.read(base.oid);
      const objects: RawObject[] = [];
      let tip = base.oid;
      if (baseObj?.type === "commit") {
        const blob = { type: "blob" as const, data: r.bytes(r.int(300)) };
        const tree = serializeTree([
          { mode: "100644", name: `f${n}`, oid: hashObject("blob", blob.data) },
          { mode: "40000", name: "keep", oid: parseCommit(baseObj.data).tree },
        ]);
        const commit = enc(
          `tree ${hashObject("tree", tree)}\nparent ${base.oid}\nauthor F <f@x> ${1_700_000_000 + n} +0000\ncommitter F <f@x> ${1_700_000_000 + n} +0000\n\nfuzz ${n}\n`,
        );
        objects.push(blob, { type: "tree", data: tree }, { type: "commit", data: commit });
        tip = hashObject("commit", commit);
      }
      const ref = r.chance(0.7) ? `refs/heads/fuzz-${r.int(20)}` : r.pick(["refs/heads/main", "HEAD", "refs/heads/a..b", "refs/tags/v1", "refs/heads/x.lock"]);
      const old = f.repo.refs.get(ref) ?? ZERO_OID;
      const caps = r.pick(["report-status side-band-64k ofs-delta", "report-status-v2 atomic", "report-status push-options", ""]);
      const commands = [encodePkt(`${old} ${r.chance(0.1) ? ZERO_OID : tip} ${ref}\0${caps}\n`)];
      if (r.chance(0.2)) commands.push(encodePkt(`${ZERO_OID} ${r.pick(f.objects).oid} refs/heads/other-${r.int(5)}\n`));
      commands.push(FLUSH_PKT);
      if (caps.includes("push-options")) commands.push(encodePkt("ci.skip\n"), FLUSH_PKT);
      const pack = buildPack(objects).pack;
      let body = Buffer.concat([...commands, pack]);
      if (r.chance(0.6)) {
        // Mutate the commands, the pack, or both.
        const where = r.int(3);
        const cmd = Buffer.concat(commands);
        body = where === 0 ? Buffer.concat([mutate(cmd, r), pack]) : where === 1 ? Buffer.concat([cmd, mutate(pack, r, 3)]) : Buffer.from(mutate(body, r, 6));
      }
      const written: Uint8Array[] = [];
      await serveReceivePack(
        snapshot,
        { input: stream(chunked(body, r)), write: (c) => void written.push(c) },
        { statelessRpc: true, tmpDir: f.tmp, hooks: f.repo.hooks() },
      ).catch((e: unknown) => {
        if (!isRefusal(e)) throw e;
      });
    },
  };
}

/** Pack and idx readers, and the indexer: the fixture's pack and idx mutated; what indexes must read back whole. */
export function packTarget(f: Fixture): Target {
  return {
    name: "pack, idx and indexer",
    async run(r) {
      if (r.chance(0.5)) {
        // The idx reader on a mutated idx over the real pack: lookups refuse or answer, never crash.
        const idxBytes = mutate(f.idxBytes, r, 3);
        await refusedOrOk(async () => {
          const idx = PackIndex.parse(idxBytes);
          const pack = new Pack(idx.packChecksum, idx, memorySource(f.packBytes));
          for (let k = 0; k < 5; k++) await refusedOrOk(() => pack.read(r.pick(f.objects).oid));
          for (let k = 0; k < 3 && idx.count > 0; k++) await refusedOrOk(() => pack.readAt(idx.offsetAt(r.int(idx.count))));
        });
        return;
      }
      // The indexer on a mutated pack; whatever it accepts reads back object by object.
      const packBytes = mutate(f.packBytes, r, 2);
      const out = await mkdtemp(join(f.tmp, "ix-"));
      try {
        await refusedOrOk(async () => {
          const indexed = await indexPack(stream(chunked(packBytes, r)), {
            tmpDir: out,
            thinBaseReader: f.repo.snapshot().objects,
            memoryBudget: r.pick([1024, 1 << 20, 64 << 20]),
          });
          const idx = PackIndex.parse(new Uint8Array(await Bun.file(indexed.idxPath).arrayBuffer()));
          const pack = new Pack(idx.packChecksum, idx, memorySource(new Uint8Array(await Bun.file(indexed.packPath).arrayBuffer())));
          for (let i = 0; i < idx.count; i++) {
            const obj = await pack.readAt(idx.offsetAt(i));
            if (obj.type !== "blob") validateObject(obj.type, obj.data);
          }
        });
      } finally {
        await rm(out, { recursive: true, force: true });
      }
    },
  };
}

/** Delta application: deltas git's way between random buffers, mutated; unmutated ones rebuild the target. */
export function deltaTarget(): Target {
  return {
    name: "delta application",
    run(r) {
      const base = r.chance(0.5) ? r.bytes(r.int(5000)) : enc("line\n".repeat(r.int(500)));
      const target = r.chance(0.5) ? mutate(base, r, 10) : r.bytes(r.int(3000));
      const delta = createDelta(base, target);
      if (r.chance(0.3)) {
        const out = applyDelta(base, delta);
        if (Buffer.compare(out, target) !== 0) throw new Error("applyDelta(createDelta(b, t)) !== t");
        return;
      }
      const bad = mutate(delta, r);
      try {
        const out = applyDelta(r.chance(0.2) ? mutate(base, r) : base, bad);
        if (!(out instanceof Uint8Array)) throw new Error("not bytes");
      } catch (e) {
        if (!isRefusal(e)) throw e;
      }
    },
  };
}

/** Object parsers and fsck: fixture objects mutated; what validates round-trips byte for byte. */
export function objectTarget(f: Fixture): Target {
  const candidates = () => f.objects.filter((o) => o.type !== "blob");
  return {
    name: "object parsers and fsck",
    run(r) {
      const o = r.pick(candidates());
      const data = r.chance(0.2) ? o.data : mutate(o.data, r);
      let valid = true;
      try {
        validateObject(o.type, data);
      } catch (e) {
        if (!isRefusal(e)) throw e;
        valid = false;
      }
      try {
        fsckObject(o.type, data);
      } catch (e) {
        if (!isRefusal(e)) throw e;
        if (valid) throw new Error("validateObject accepted what fsck refuses");
      }
      if (!valid) return;
      // A tree with a mode git only warns about (zero-padded, 100664; docs/architecture.md "Object
      // checks") is stored as pushed and never written by svc, whose serializer refuses such modes.
      if (o.type === "tree" && parseTree(data).some((e) => !TREE_MODES.has(e.mode))) return;
      const again = o.type === "commit" ? serializeCommit(parseCommit(data)) : o.type === "tag" ? serializeTag(parseTag(data)) : serializeTree(parseTree(data));
      if (Buffer.compare(again, data) !== 0) throw new Error(`${o.type} does not round-trip: ${JSON.stringify(new TextDecoder().decode(data))}`);
    },
  };
}

const NAME_PARTS = [
  "a",
  "b",
  "src",
  "lib",
  ".git",
  ".GIT",
  "git~1",
  ".git.",
  ".gitmodules",
  ".gitattributes",
  "..",
  ".",
  "",
  "x y",
  "ü",
  "\u200c",
  "\\",
  ":",
  "%",
  "\0",
  ".g\u200cit",
  "GIT~1",
  ".git::$INDEX_ALLOCATION",
  "a.",
  "-",
  "~",
  "*",
  "@{",
];

/** Path validation and tree editing: whatever splitPath accepts, editTree writes trees git's fsck accepts. */
export function treeEditTarget(f: Fixture): Target {
  return {
    name: "path validation and tree editing",
    async run(r) {
      const snapshot = f.repo.snapshot();
      const head = f.repo.refs.get("refs/heads/main")!;
      const baseTree = parseCommit((await snapshot.objects.read(head))!.data).tree;
      const ops: TreeOp[] = [];
      const paths = new Set<string>();
      for (let i = 0; i < 1 + r.int(6); i++) {
        const depth = 1 + r.int(4);
        const parts: string[] = [];
        for (let d = 0; d < depth; d++)
          parts.push(r.chance(0.7) ? `${r.pick(NAME_PARTS)}${r.chance(0.5) ? r.int(10) : ""}` : r.pick(NAME_PARTS) + r.pick(NAME_PARTS));
        let raw = parts.join(r.chance(0.95) ? "/" : "//");
        if (r.chance(0.05)) raw = `/${raw}`;
        let split: string[];
        try {
          split = splitPath(raw);
        } catch (e) {
          if (!isRefusal(e)) throw e;
          continue;
        }
        const key = split.join("/");
        if ([...paths].some((p) => p === key || p.startsWith(`${key}/`) || key.startsWith(`${p}/`))) continue;
        paths.add(key);
        ops.push(r.chance(0.8) ? { kind: "put", path: split, data: r.bytes(r.int(64)) } : { kind: "delete", path: split });
      }
      if (ops.length === 0) return;
      let edited: Awaited<ReturnType<typeof editTree>>;
      try {
        edited = await editTree(snapshot.objects, baseTree, ops);
      } catch (e) {
        if (e instanceof GitError && (e.code === "missing" || e.code === "conflict")) return;
        throw e;
      }
      // Everything the API would publish passes git's object checks (a bad name would be caught here).
      await fsckObjects(edited.objects, snapshot.objects);
    },
  };
}

/** Ref-name validation: random names never crash; a push ref name is a valid ref name. */
export function refNameTarget(): Target {
  const pieces = [
    "refs",
    "heads",
    "tags",
    "main",
    "a",
    "..",
    ".",
    ".lock",
    "@{",
    "@",
    "~",
    "^",
    ":",
    "?",
    "*",
    "[",
    "\\",
    " ",
    "\x7f",
    "\x01",
    "/",
    "//",
    "ü",
    "-",
    "x.",
    ".x",
  ];
  return {
    name: "ref-name validation",
    run(r) {
      let name = "";
      for (let i = 0; i < 1 + r.int(8); i++) name += r.pick(pieces);
      if (r.chance(0.5)) name = `refs/heads/${name}`;
      const ok = checkRefFormat(name);
      const pattern = checkRefFormat(name, { refspecPattern: true, allowOnelevel: true });
      if (ok && !pattern) throw new Error(`${JSON.stringify(name)}: valid, but not with the looser options`);
      if (isValidPushRefName(name) && !ok) throw new Error(`${JSON.stringify(name)}: a push ref name that is no valid ref name`);
    },
  };
}

/** fsck on generated objects (the differential against git is in test/unit/git/fsck.test.ts). */
export function fsckTarget(): Target {
  const names = ["a", ".git", ".gitmodules", "GIT~1", ".g\u200cit", "gi7eba~1", ".", "..", "a/b", "\\.git", ""];
  return {
    name: "fsck on generated objects",
    async run(r) {
      const entries: Uint8Array[] = [];
      for (let i = 0; i < r.int(6); i++)
        entries.push(enc(`${r.pick(["100644", "40000", "040000", "120000", "160000", "0", "1006444"])} ${r.pick(names)}\0`), r.bytes(20));
      const tree = mutate(Buffer.concat(entries), r, 2);
      const gitmodules = enc(
        `[submodule "${r.pick(["a", "../../x", "..", "a\\..\\b"])}"]\n\turl = ${r.pick(["./x", "-x", "https://e/%0a", "../../:x"])}\n\tpath = ${r.pick(["x", "-x"])}\n`,
      );
      const blobOid = hashObject("blob", gitmodules);
      const named = enc(`100644 .gitmodules\0`);
      const withModules = Buffer.concat([named, Buffer.from(blobOid, "hex")]);
      await refusedOrOk(() => fsckObject("tree", tree));
      await refusedOrOk(() =>
        fsckObjects(
          [
            { type: "tree", data: withModules },
            { type: "blob", data: mutate(gitmodules, r, 2) },
          ],
          new PackSet([]),
        ),
      );
    },
  };
}

/** Every engine target over one fixture. */
export function engineTargets(f: Fixture): Target[] {
  return [
    pktLineTarget(),
    uploadPackTarget(f),
    receivePackTarget(f),
    packTarget(f),
    deltaTarget(),
    objectTarget(f),
    treeEditTarget(f),
    refNameTarget(),
    fsckTarget(),
  ];
}
