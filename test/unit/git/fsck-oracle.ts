// Test-only: C git's fsck as the oracle for src/git/fsck.ts. Objects are written as loose
// objects into a throwaway repository (any bytes, as `hash-object --literally` would) and
// `git fsck --strict` reports what it finds per object.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { hashObject } from "../../../src/git/oid.ts";
import type { ObjectType } from "../../../src/git/types.ts";
import { git, gitStatus } from "./fixture.ts";

/** What git said about one object: message ids at error level (strict) and at warning level. */
export interface GitVerdict {
  errors: Set<string>;
  warnings: Set<string>;
}

/** A repository to write raw objects into and fsck. */
export class FsckOracle {
  private constructor(readonly dir: string) {}

  static create(dir: string): FsckOracle {
    git(dir, ["init", "-q", "--bare", "."]);
    return new FsckOracle(dir);
  }

  /** Writes any bytes as a loose object of `type`; returns its oid. */
  write(type: ObjectType, data: Uint8Array): string {
    const oid = hashObject(type, data);
    const header = new TextEncoder().encode(`${type} ${data.length}\0`);
    const raw = new Uint8Array(header.length + data.length);
    raw.set(header);
    raw.set(data, header.length);
    const dir = join(this.dir, "objects", oid.slice(0, 2));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, oid.slice(2)), deflateSync(raw));
    return oid;
  }

  /**
   * Runs `git fsck` over everything written; the verdict per object id. With `levels`, git's
   * severities are set per message id (`fsck.<id>=error|warn|ignore`, not strict): git then
   * goes on past a warning as svc does. Without, `--strict` (every problem is an error).
   */
  fsck(levels?: Record<string, "error" | "warn" | "ignore">): Map<string, GitVerdict> {
    const config = Object.entries(levels ?? {}).flatMap(([id, level]) => ["-c", `fsck.${id}=${level}`]);
    const r = gitStatus(this.dir, [...config, "fsck", ...(levels ? [] : ["--strict"]), "--no-dangling", "--no-progress", "--no-reflogs"]);
    const out = new Map<string, GitVerdict>();
    const verdict = (oid: string) => {
      let v = out.get(oid);
      if (!v) out.set(oid, (v = { errors: new Set(), warnings: new Set() }));
      return v;
    };
    for (const line of r.stderr.split("\n")) {
      // "error in tree <oid>: hasDotgit: contains '.git'", "warning in blob <oid>: gitmodulesParse: …"
      // (lines about links between objects, such as "broken links", carry no message id).
      const m = /^(error|warning) in \w+ ([0-9a-f]{40}): ([a-z][A-Za-z0-9]+): /.exec(line);
      if (m) (m[1] === "error" ? verdict(m[2]!).errors : verdict(m[2]!).warnings).add(m[3]!);
      // An object git cannot parse at all (e.g. a tag of an unknown type).
      const n = /^error: ([0-9a-f]{40}): object could not be parsed/.exec(line);
      if (n) verdict(n[1]!).errors.add("unparsable");
    }
    return out;
  }
}
