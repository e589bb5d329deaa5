// The agent's pure pieces (issue 29 part D): the masking front of the log (`::add-mask::` lines
// held until whole, at any split), the shell a step runs with, and the working directory check.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MaskedText } from "../../../cli/runner/log.ts";
import { shellOf, workingDirectory } from "../../../cli/runner/steps.ts";
import { Masker } from "../../../src/services/ci/mask.ts";

/** Feeds `text` in pieces cut at `cuts`, then ends the step; answers what was shown. */
function through(text: string, cuts: number[], values: string[] = []): string {
  const front = new MaskedText(new Masker(values));
  let out = "";
  let from = 0;
  for (const c of [...cuts, text.length]) {
    out += front.write(text.slice(from, c));
    from = c;
  }
  return out + front.end();
}

describe("MaskedText", () => {
  const text = "build ok\n::add-mask::sekret-123\nthe value sekret-123 is hidden\n:: not a command\nlast";
  const want = "build ok\n::add-mask::***\nthe value *** is hidden\n:: not a command\nlast";
  test("an ::add-mask:: line masks its value and itself, split at every position", () => {
    for (let i = 0; i <= text.length; i++) expect(through(text, [i])).toBe(want);
    for (let i = 0; i < text.length; i += 3)
      expect(
        through(
          text,
          [i, i + 1, i + 2].filter((n) => n <= text.length),
        ),
      ).toBe(want);
  });
  test("secrets given up front, and a command at the very end without a newline", () => {
    expect(through("token=abcd-9999 and ::add-mask:: inline stays\n::add-mask::zzzz-1", [5], ["abcd-9999"])).toBe(
      "token=*** and ::add-mask:: inline stays\n::add-mask::***",
    );
  });
  test("ordinary output is passed in one push (no line is held)", () => {
    const front = new MaskedText(new Masker(["value-1234"]));
    expect(front.write("line one\nline two\npartial")).toBe("line one\nline two\npartial");
    expect(front.write(" value-12")).toBe(" ");
    expect(front.write("34 done\n")).toBe("*** done\n");
  });
});

describe("shells", () => {
  test("GitHub's commands; the default is bash -e when bash is on PATH (format 2), sh -e otherwise", () => {
    expect(shellOf("bash", "", 2).argv).toEqual(["bash", "--noprofile", "--norc", "-eo", "pipefail", "{0}"]);
    expect(shellOf("sh", "", 2).argv).toEqual(["sh", "-e", "{0}"]);
    expect(shellOf("python3 -u {0}", "", 2)).toEqual({ argv: ["python3", "-u", "{0}"], posix: false });
    expect(shellOf("perl", "", 2).argv).toEqual(["perl", "{0}"]);
    expect(shellOf("python", "", 2)).toEqual({ argv: ["python", "{0}"], posix: false, ext: ".py" });
    expect(shellOf("pwsh", "", 2).argv).toEqual(["pwsh", "-command", ". '{0}'"]);
    expect(shellOf(null, "/nonexistent", 2).argv).toEqual(["sh", "-e", "{0}"]);
    expect(shellOf(null, process.env.PATH, 1).argv).toEqual(["sh", "-e", "{0}"]);
  });
});

describe("working-directory", () => {
  const root = mkdtempSync(join(tmpdir(), "svc-wd-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const ws = join(root, "ws");
  mkdirSync(join(ws, "a/b"), { recursive: true });
  mkdirSync(join(root, "outside"));
  symlinkSync(join(root, "outside"), join(ws, "link"));
  test("inside the workspace only", () => {
    expect(workingDirectory(ws, null)).toEqual({ ok: true, path: ws });
    expect(workingDirectory(ws, "a/b")).toEqual({ ok: true, path: join(ws, "a/b") });
    expect(workingDirectory(ws, "a/../a")).toEqual({ ok: true, path: join(ws, "a") });
    expect(workingDirectory(ws, "..")).toEqual({ ok: false, error: 'working-directory ".." is outside the workspace' });
    expect(workingDirectory(ws, "a/../../outside")).toMatchObject({ ok: false });
    expect(workingDirectory(ws, "/etc")).toMatchObject({ ok: false });
    expect(workingDirectory(ws, "link")).toEqual({ ok: false, error: 'working-directory "link" is outside the workspace (through a symbolic link)' });
    expect(workingDirectory(ws, "missing")).toEqual({ ok: false, error: 'working-directory "missing" does not exist' });
  });
});
