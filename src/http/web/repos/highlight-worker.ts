// The highlighting thread: highlight.ts posts `{ id, code, language }`, this answers `{ id, markup }`
// (the lines' fragments joined by "\n", which no fragment contains; null when the file cannot be
// highlighted). A batch of parts (a diff's hunks, language PARTS) answers one JSON line. Why a thread: the grammars are regular expressions over pushed content, and a
// hostile file can make one backtrack for seconds; here it blocks only this thread, which
// highlight.ts terminates past its time limit, never the server's event loop.
import { markupLines, markupParts, PARTS } from "./highlight-engine.ts";

declare const self: Worker;

self.onmessage = (event: MessageEvent<{ id: number; code: string; language: string }>) => {
  const { id, code, language } = event.data;
  let markup: string | null = null;
  try {
    markup = language === PARTS ? markupParts(code) : (markupLines(code, language)?.join("\n") ?? null);
  } catch {
    markup = null;
  }
  self.postMessage({ id, markup });
};
