// The files a step writes for the runner (issue 29): $GITHUB_OUTPUT and $GITHUB_ENV in GitHub's
// two forms (NAME=value, NAME<<DELIMITER … DELIMITER), $GITHUB_PATH, and the refusals.
import { describe, expect, test } from "bun:test";
import { FILE_COMMAND_LIMITS, parseFileCommands, parsePathFile } from "../../../cli/runner/files.ts";

describe("GITHUB_OUTPUT and GITHUB_ENV", () => {
  test("both forms, CRLF, empty lines, a later entry after an earlier one", () => {
    const text = "version=1.2.3\r\n\nnotes<<EOF\nline one\n\nline = two << x\nEOF\nempty=\nurl=a=b\nversion=1.2.4\n";
    expect(parseFileCommands(text, "output")).toEqual({
      ok: true,
      entries: [
        ["version", "1.2.3"],
        ["notes", "line one\n\nline = two << x"],
        ["empty", ""],
        ["url", "a=b"],
        ["version", "1.2.4"],
      ],
    });
  });

  test("an = before << is a one-line value; a << before = is a heredoc", () => {
    expect(parseFileCommands("a=b<<c\n", "output")).toEqual({ ok: true, entries: [["a", "b<<c"]] });
    expect(parseFileCommands("a<<=\nx\n=\n", "output")).toEqual({ ok: true, entries: [["a", "x"]] });
    expect(parseFileCommands("a<<D\nD\n", "env")).toEqual({ ok: true, entries: [["a", ""]] });
  });

  test("names: outputs may hold dashes, environment variables may not", () => {
    expect(parseFileCommands("my-out=1\n", "output")).toEqual({ ok: true, entries: [["my-out", "1"]] });
    expect(parseFileCommands("MY-VAR=1\n", "env")).toEqual({ ok: false, error: 'GITHUB_ENV line 1: "MY-VAR" is not a valid environment variable name' });
  });

  test.each([
    ["just text\n", "output", "GITHUB_OUTPUT line 1: expected NAME=value or NAME<<DELIMITER"],
    ["=value\n", "output", "GITHUB_OUTPUT line 1: an entry without a name"],
    ["ok=1\nv<<EOF\nsecret value\n", "env", "GITHUB_ENV line 2: no line ends the value of v (expected a line that is exactly the delimiter)"],
    ["v<<\nx\n", "output", "GITHUB_OUTPUT line 1: v<< names no delimiter"],
    ["1abc=x\n", "output", 'GITHUB_OUTPUT line 1: "1abc" is not a valid output name'],
  ] as const)("%p → %p", (text, kind, error) => {
    const got = parseFileCommands(text, kind);
    expect(got).toEqual({ ok: false, error });
  });

  test("bounds: size and entries", () => {
    expect(parseFileCommands("a".repeat(FILE_COMMAND_LIMITS.bytes + 1), "output")).toEqual({
      ok: false,
      error: `GITHUB_OUTPUT is larger than ${FILE_COMMAND_LIMITS.bytes} bytes`,
    });
    expect(parseFileCommands("a=1\n".repeat(FILE_COMMAND_LIMITS.entries + 1), "output")).toEqual({
      ok: false,
      error: `GITHUB_OUTPUT has more than ${FILE_COMMAND_LIMITS.entries} entries`,
    });
  });
});

describe("GITHUB_PATH", () => {
  test("one directory a line, the last written first, each once", () => {
    expect(parsePathFile("/opt/a/bin\n\n  /opt/b/bin  \r\n/opt/a/bin\n/opt/c\n")).toEqual(["/opt/c", "/opt/a/bin", "/opt/b/bin"]);
    expect(parsePathFile("")).toEqual([]);
  });
});
