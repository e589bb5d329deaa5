// The agent's tree oid of a directory (cli/runner/actions/tree-hash.ts) against real git's
// `write-tree` of the same files: modes, symbolic links, nesting, git's order (a directory sorts as
// its name + "/"), empty directories left out; what git cannot hold answers null.
import { expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { treeOidOfDir } from "../../../cli/runner/actions/tree-hash.ts";

function git(cwd: string, args: string[]): string {
  const p = Bun.spawnSync(["git", ...args], { cwd, env: { PATH: process.env.PATH ?? "", HOME: cwd, GIT_CONFIG_NOSYSTEM: "1" } });
  if (p.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${p.stderr.toString()}`);
  return p.stdout.toString().trim();
}

test("the tree oid of a directory is git's write-tree of it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tree-hash-"));
  try {
    const work = join(dir, "w");
    mkdirSync(join(work, "a", "deep"), { recursive: true });
    mkdirSync(join(work, "a.b"));
    mkdirSync(join(work, "empty", "nested-empty"), { recursive: true });
    writeFileSync(join(work, "a", "deep", "x.js"), "console.log(1)\n");
    writeFileSync(join(work, "a.b", "y"), "");
    writeFileSync(join(work, "a-"), "crlf\r\nkept\r\n");
    writeFileSync(join(work, "run.sh"), "#!/bin/sh\necho hi\n");
    chmodSync(join(work, "run.sh"), 0o755);
    writeFileSync(join(work, "bin"), new Uint8Array([0, 255, 1, 254]));
    symlinkSync("a/deep/x.js", join(work, "link"));
    git(work, ["init", "-q", "."]);
    git(work, ["add", "-A"]);
    const expected = git(work, ["write-tree"]);
    rmSync(join(work, ".git"), { recursive: true });
    expect(await treeOidOfDir(work)).toBe(expected);
    // A changed byte, a changed mode, an added file: each another tree.
    chmodSync(join(work, "run.sh"), 0o644);
    expect(await treeOidOfDir(work)).not.toBe(expected);
    chmodSync(join(work, "run.sh"), 0o755);
    expect(await treeOidOfDir(work)).toBe(expected);
    writeFileSync(join(work, "a", "new"), "");
    expect(await treeOidOfDir(work)).not.toBe(expected);
    rmSync(join(work, "a", "new"));
    writeFileSync(join(work, "a", "deep", "x.js"), "console.log(2)\n");
    expect(await treeOidOfDir(work)).not.toBe(expected);
    // A name no tree holds (.git) is no tree at all.
    mkdirSync(join(work, ".git"));
    writeFileSync(join(work, ".git", "HEAD"), "x");
    expect(await treeOidOfDir(work)).toBeNull();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
