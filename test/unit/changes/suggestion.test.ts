// The ```suggestion parser (issue 28): CommonMark fences, one block per comment, bounded input;
// and the text side of applying: lines replaced bottom-up keeping line endings.
import { describe, expect, test } from "bun:test";
import {
  lineEndingOf,
  type LineEdit,
  parseSuggestion,
  sameLines,
  spliceLines,
  SUGGESTION_BODY_MAX,
  textLines,
} from "../../../src/services/changes/suggestion.ts";

const TWO = { error: "a comment may hold one suggestion block" };

const CASES: [string, string, ReturnType<typeof parseSuggestion>][] = [
  ["no block", "looks good", null],
  ["empty body", "", null],
  ["one line", "```suggestion\nconst x = 1;\n```", { text: "const x = 1;\n" }],
  ["text around the block", "Try this:\n\n```suggestion\na\nb\n```\n\nthanks", { text: "a\nb\n" }],
  ["empty block deletes the lines", "```suggestion\n```", { text: "" }],
  ["one empty line", "```suggestion\n\n```", { text: "\n" }],
  ["tildes", "~~~suggestion\nx\n~~~", { text: "x\n" }],
  ["long fence", "`````suggestion\nx\n`````", { text: "x\n" }],
  ["info string padded with spaces", "```  suggestion  \nx\n```", { text: "x\n" }],
  ["other info string", "```suggestions\nx\n```", null],
  ["info string with more words", "```suggestion js\nx\n```", null],
  ["language block", "```ts\nx\n```", null],
  ["closing fence longer than opening", "```suggestion\nx\n``````", { text: "x\n" }],
  ["closing fence shorter does not close", "````suggestion\nx\n```\ny\n````", { text: "x\n```\ny\n" }],
  ["closing fence of the other char does not close", "```suggestion\nx\n~~~\n```", { text: "x\n~~~\n" }],
  ["closing fence with trailing spaces", "```suggestion\nx\n```   \n", { text: "x\n" }],
  ["closing fence with text is content", "```suggestion\nx\n``` y\n```", { text: "x\n``` y\n" }],
  ["unclosed runs to the end", "```suggestion\nx\ny", { text: "x\ny\n" }],
  ["unclosed with a final newline", "```suggestion\nx\n", { text: "x\n" }],
  ["unclosed and empty", "```suggestion", { text: "" }],
  ["CRLF", "```suggestion\r\na\r\nb\r\n```\r\n", { text: "a\nb\n" }],
  ["lone CR", "```suggestion\ra\r```", { text: "a\n" }],
  ["indented 3 spaces, content dedented by 3", "   ```suggestion\n     x\n  y\n   ```", { text: "  x\ny\n" }],
  ["a tab in the indentation counts as columns to the next stop", "  ```suggestion\n\tx\n```", { text: "  x\n" }],
  ["indented 4 spaces is not a fence", "    ```suggestion\n    x\n    ```", null],
  ["closing fence indented 3", "```suggestion\nx\n   ```", { text: "x\n" }],
  ["closing fence indented 4 is content", "```suggestion\nx\n    ```", { text: "x\n    ```\n" }],
  ["backtick in a backtick info string is not a fence", "```suggestion`\nx\n```", null],
  ["backtick in a tilde info string is fine", "~~~ suggestion\nx\n~~~", { text: "x\n" }],
  ["nested in a longer fence is content", "````md\n```suggestion\nx\n```\n````", null],
  ["nested in a tilde fence is content", "~~~\n```suggestion\nx\n```\n~~~", null],
  ["after a closed plain fence", "```\ncode\n```\n```suggestion\ny\n```", { text: "y\n" }],
  ["two blocks", "```suggestion\na\n```\n```suggestion\nb\n```", TWO],
  ["two blocks, the second unclosed", "```suggestion\na\n```\n~~~suggestion\nb", TWO],
  ["a suggestion inside the block is content", "````suggestion\n```suggestion\n```\n````", { text: "```suggestion\n```\n" }],
  ["trailing whitespace in content kept", "```suggestion\na  \n\tb\n```", { text: "a  \n\tb\n" }],
  ["blank lines at the end of an unclosed block kept", "```suggestion\na\n\n\n", { text: "a\n\n\n" }],
];

describe("parseSuggestion", () => {
  for (const [name, body, want] of CASES) {
    test(name, () => {
      expect(parseSuggestion(body)).toEqual(want);
    });
  }

  test(`bodies over ${SUGGESTION_BODY_MAX} characters are refused before parsing`, () => {
    const body = `\`\`\`suggestion\n${"x".repeat(SUGGESTION_BODY_MAX)}\n\`\`\``;
    expect(parseSuggestion(body)).toEqual({ error: `a comment body is at most ${SUGGESTION_BODY_MAX} characters` });
    const edge = `\`\`\`suggestion\n${"x".repeat(SUGGESTION_BODY_MAX - 18)}\n\`\`\``;
    expect(edge.length).toBe(SUGGESTION_BODY_MAX);
    expect(parseSuggestion(edge)).toEqual({ text: `${"x".repeat(SUGGESTION_BODY_MAX - 18)}\n` });
  });

  test("many fences stay linear", () => {
    const body = "```\n```\n".repeat(4000);
    expect(parseSuggestion(body)).toBeNull();
  });
});

describe("spliceLines", () => {
  const CASES: [string, string, LineEdit[], string][] = [
    ["one line replaced", "a\nb\nc\n", [{ start: 2, end: 2, text: "B\n" }], "a\nB\nc\n"],
    ["range replaced by more lines", "a\nb\nc\n", [{ start: 1, end: 2, text: "x\ny\nz\n" }], "x\ny\nz\nc\n"],
    ["lines deleted", "a\nb\nc\n", [{ start: 2, end: 3, text: "" }], "a\n"],
    ["one empty line", "a\nb\nc\n", [{ start: 2, end: 2, text: "\n" }], "a\n\nc\n"],
    [
      "several, bottom-up keeps numbers",
      "1\n2\n3\n4\n5\n",
      [
        { start: 1, end: 1, text: "one\nuno\n" },
        { start: 4, end: 5, text: "four\n" },
      ],
      "one\nuno\n2\n3\nfour\n",
    ],
    ["CRLF file keeps CRLF", "a\r\nb\r\nc\r\n", [{ start: 2, end: 2, text: "B\nB2\n" }], "a\r\nB\r\nB2\r\nc\r\n"],
    ["no final newline kept when the last line is replaced", "a\nb", [{ start: 2, end: 2, text: "B\nC\n" }], "a\nB\nC"],
    ["no final newline kept when the last line is deleted", "a\nb\nc", [{ start: 3, end: 3, text: "" }], "a\nb"],
    ["no final newline, CRLF", "a\r\nb", [{ start: 2, end: 2, text: "B\n" }], "a\r\nB"],
    ["no final newline, edit above the last line", "a\nb\nc", [{ start: 1, end: 1, text: "A\n" }], "A\nb\nc"],
    ["whole file deleted", "a\nb\n", [{ start: 1, end: 2, text: "" }], ""],
  ];
  for (const [name, text, edits, want] of CASES) {
    test(name, () => {
      expect(spliceLines(text, edits)).toBe(want);
    });
  }

  test("line endings: the file's majority", () => {
    expect(lineEndingOf(textLines("a\r\nb\r\nc\n"))).toBe("\r\n");
    expect(lineEndingOf(textLines("a\nb\r\nc\n"))).toBe("\n");
    expect(lineEndingOf(textLines("a"))).toBe("\n");
  });

  test("same lines: byte for byte, but for the final line ending", () => {
    expect(sameLines("a\nb\n", "a\nb\n")).toBe(true);
    expect(sameLines("a\nb", "a\nb\n")).toBe(true);
    expect(sameLines("a\r\nb\r\n", "a\r\nb")).toBe(true);
    expect(sameLines("a\r\nb\r\n", "a\nb\n")).toBe(false);
    expect(sameLines("a \n", "a\n")).toBe(false);
  });
});
