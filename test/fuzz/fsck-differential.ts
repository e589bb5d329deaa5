// The fsck differential: generated trees, commits and tags judged by svc's fsck.ts and by C
// git's `fsck --strict` (the oracle). Shared by test/unit/git/fsck.test.ts and bench/fuzz.ts.
import { FSCK_RULES, FsckError, fsckObject, type FsckMsgId, FsckWarnings } from "../../src/git/fsck.ts";
import { hashObject } from "../../src/git/oid.ts";
import type { ObjectType, Oid } from "../../src/git/types.ts";
import { prng } from "../unit/git/fixture.ts";
import type { FsckOracle } from "../unit/git/fsck-oracle.ts";

const enc = (s: string) => new TextEncoder().encode(s);

/** Raw tree bytes from entries exactly as given (no sorting). */
export function tree(entries: [mode: string, name: string | Uint8Array, oid: Oid][]): Uint8Array {
  const parts: number[] = [];
  for (const [mode, name, oid] of entries) parts.push(...enc(`${mode} `), ...(typeof name === "string" ? enc(name) : name), 0, ...Buffer.from(oid, "hex"));
  return new Uint8Array(parts);
}

/** Our verdict on one object: the message id it is refused with, or null when accepted. */
export function ours(type: ObjectType, data: Uint8Array): FsckMsgId | null {
  return judge(type, data).refused;
}

/** Our verdict on one object: the id it is refused with (or null), and the ids accepted with a warning. */
export function judge(type: ObjectType, data: Uint8Array): { refused: FsckMsgId | null; warned: Set<FsckMsgId> } {
  const warnings = new FsckWarnings();
  try {
    fsckObject(type, data, null, warnings);
    return { refused: null, warned: new Set(warnings.counts.keys()) };
  } catch (e) {
    if (e instanceof FsckError) return { refused: e.problem.id, warned: new Set(warnings.counts.keys()) };
    throw e;
  }
}

/** Message ids git 2.39 (the oracle here) does not know yet: svc may refuse where it accepts. */
const NEWER_THAN_ORACLE = new Set<FsckMsgId>(["largePathname", "badHeaderContinuation", "badGpgsig"]);

/**
 * git's severities set to svc's verdicts (FSCK_RULES): refused ids are errors, accepted ones
 * warnings; the infos svc does not check (a symlinked .gitignore or .mailmap) are ignored.
 */
export const SVC_LEVELS: Record<string, "error" | "warn" | "ignore"> = {
  ...Object.fromEntries(
    Object.entries(FSCK_RULES)
      .filter(([id]) => !NEWER_THAN_ORACLE.has(id as FsckMsgId))
      .map(([id, v]) => [id, v === "refuse" ? "error" : "warn"]),
  ),
  gitignoreSymlink: "ignore",
  mailmapSymlink: "ignore",
  gitmodulesParse: "ignore",
};

/** Whether svc refuses an object git reports with message id `id` (`unparsable`: git's parser refused it). */
export function refusedId(id: string): boolean {
  return id === "unparsable" || (FSCK_RULES as Record<string, string>)[id] !== "warn";
}

// Objects every case may point at, so that git sees no broken links.
export const BLOB = enc("hello\n");
export const BLOB_OID = hashObject("blob", BLOB);
export const SUBTREE = tree([["100644", "f", BLOB_OID]]);
export const SUBTREE_OID = hashObject("tree", SUBTREE);
export const COMMIT = enc(`tree ${SUBTREE_OID}\nauthor A U Thor <a@example.com> 1700000000 +0100\ncommitter C <c@example.com> 1700000000 -0530\n\nmessage\n`);
export const COMMIT_OID = hashObject("commit", COMMIT);
// ---------------------------------------------------------------------------------------------
// Differential fuzzing: generated objects, git as the oracle.

const NAMES = [
  "a",
  "b",
  "a.b",
  "a-b",
  "A",
  "z",
  ".git",
  ".GIT",
  ".Git",
  ".git.",
  ".git ",
  "git~1",
  "GIT~1",
  "git~2",
  ".gitmodules",
  ".GITMODULES",
  "gitmod~1",
  "gi7eba~1",
  ".gitmodules.",
  ".gitattributes",
  ".gitignore",
  ".",
  "..",
  "...",
  "a/b",
  "\\",
  "a\\.git",
  "x\\gitmod~1",
  ".g\u200cit",
  ".\u200fgit",
  "\ufeff.git",
  ".gi\u200dt",
  "ü",
  "a b",
  ".git::$DATA",
  "git~1:stream",
  ".mailmap",
];
const MODES = ["100644", "100755", "120000", "40000", "160000", "040000", "100664", "100600", "0100644", "644", "10644", "1"];
const IDENTS = [
  "A U Thor <a@example.com> 1700000000 +0100",
  "A <a@b> 0 -0000",
  "<a@b> 1 +0000",
  "A a@b> 1 +0000",
  "A> <a@b> 1 +0000",
  "A<a@b> 1 +0000",
  "A <a<b> 1 +0000",
  "A <a@b 1 +0000",
  "A <a@b>1 +0000",
  "A <a@b> +0000",
  "A <a@b> 01 +0000",
  "A <a@b> 1 +00",
  "A <a@b> 1 0000",
  "A <a@b> 1 +0000 x",
  "A <a@b>  \t 1 +0000",
  "A <a@b> 99999999999999999999999 +0000",
  "A <a@b> 9223372036854775808 +0000",
  " <> 1 +0000",
  "A <a@b> 1 +1a00",
  "A <a@b> 1 -9999",
];

/** One generated object from a seeded source of randomness. */
function generate(rand: () => number): { type: ObjectType; data: Uint8Array } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const kind = rand();
  if (kind < 0.45) {
    const n = 1 + Math.floor(rand() * 4);
    const entries: [string, string, Oid][] = [];
    for (let i = 0; i < n; i++) {
      const mode = pick(MODES);
      const dir = mode === "40000" || mode === "040000";
      const oid = rand() < 0.05 ? "0".repeat(40) : mode === "160000" ? COMMIT_OID : dir ? SUBTREE_OID : BLOB_OID;
      entries.push([mode, pick(NAMES), oid]);
    }
    // Mostly in git's order (a directory sorts as name + "/"), sometimes as generated.
    if (rand() < 0.8)
      entries.sort((x, y) => Buffer.compare(Buffer.from(x[1] + (x[0].endsWith("40000") ? "/" : "")), Buffer.from(y[1] + (y[0].endsWith("40000") ? "/" : ""))));
    return { type: "tree", data: tree(entries) };
  }
  if (kind < 0.85) {
    const lines = [`tree ${rand() < 0.05 ? SUBTREE_OID.slice(2) : SUBTREE_OID}`];
    if (rand() < 0.5) lines.push(`parent ${rand() < 0.05 ? "x" : COMMIT_OID}`);
    const authors = rand() < 0.05 ? 0 : rand() < 0.05 ? 2 : 1;
    for (let i = 0; i < authors; i++) lines.push(`author ${rand() < 0.7 ? IDENTS[0] : pick(IDENTS)}`);
    if (rand() < 0.95) lines.push(`committer ${rand() < 0.7 ? IDENTS[1] : pick(IDENTS)}`);
    if (rand() < 0.2) lines.push("encoding UTF-8");
    let text = `${lines.join("\n")}\n\n${rand() < 0.05 ? "m\0" : "msg"}\n`;
    if (rand() < 0.05) text = text.replace("\n\n", "\n");
    return { type: "commit", data: mutate(enc(text), rand) };
  }
  const lines = [`object ${COMMIT_OID}`, `type ${rand() < 0.9 ? "commit" : "commitx"}`, `tag ${rand() < 0.9 ? "v1" : "v..1"}`];
  if (rand() < 0.8) lines.push(`tagger ${rand() < 0.7 ? IDENTS[0] : pick(IDENTS)}`);
  if (rand() < 0.1) lines.splice(Math.floor(rand() * lines.length), 1);
  return { type: "tag", data: mutate(enc(`${lines.join("\n")}\n\nmsg\n`), rand) };
}

/** Sometimes one byte of the headers flipped, dropped or doubled. */
function mutate(data: Uint8Array, rand: () => number): Uint8Array {
  if (rand() > 0.15) return data;
  const at = Math.floor(rand() * Math.min(data.length, 120));
  const bytes = [...data];
  const r = rand();
  if (r < 0.33) bytes[at] = Math.floor(rand() * 128);
  else if (r < 0.66) bytes.splice(at, 1);
  else bytes.splice(at, 0, bytes[at]!);
  return new Uint8Array(bytes);
}

/** Cases in the unit suite; bench/fuzz.ts runs many more. */
export const DIFFERENTIAL_CASES = 1500;

/** Runs `count` generated objects through svc and git; returns the disagreements. */
export function differential(o: FsckOracle, seed: number, count: number): string[] {
  o.write("blob", BLOB);
  o.write("tree", SUBTREE);
  o.write("commit", COMMIT);
  const rand = prng(seed);
  const cases = new Map<Oid, { type: ObjectType; data: Uint8Array }>();
  for (let i = 0; i < count; i++) {
    const c = generate(rand);
    cases.set(o.write(c.type, c.data), c);
  }
  // git with svc's severities: it refuses what svc refuses and, like svc, goes on past a warning.
  const verdicts = o.fsck(SVC_LEVELS);
  const problems: string[] = [];
  for (const [oid, { type, data }] of cases) {
    const { refused: mine, warned } = judge(type, data);
    const v = verdicts.get(oid);
    const errors = v?.errors ?? new Set<string>();
    const warnings = v?.warnings ?? new Set<string>();
    const show = JSON.stringify(new TextDecoder().decode(data));
    if (mine === null && errors.size > 0) problems.push(`${type} ${show}: svc accepts, git refuses (${[...errors].join(", ")})`);
    else if (mine !== null && errors.size === 0 && !NEWER_THAN_ORACLE.has(mine)) problems.push(`${type} ${show}: svc refuses (${mine}), git accepts`);
    else if (mine !== null && errors.size > 0 && !errors.has(mine) && !errors.has("unparsable"))
      problems.push(`${type} ${show}: svc says ${mine}, git says ${[...errors].join(", ")}`);
    else if (mine === null) {
      const a = [...warned].filter((w) => !NEWER_THAN_ORACLE.has(w)).sort();
      const b = [...warnings].sort();
      if (a.join() !== b.join()) problems.push(`${type} ${show}: svc warns ${a.join(", ") || "nothing"}, git warns ${b.join(", ") || "nothing"}`);
    }
  }
  return problems;
}
