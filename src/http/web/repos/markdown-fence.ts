// Fenced code highlighting for the Markdown renderer, with the file view's engines
// (highlight-engine.ts: speed-highlight, highlight.js for the languages it lacks). Loaded
// only by the `web.renderMarkdown` thread task (the grammars stay off the server's own thread).
import { fenceLanguage, fenceLines } from "./highlight-engine.ts";
import type { FenceHighlighter } from "../kit/markdown-rules.ts";

/** The highlighter markdownToHtml takes: markup whose only tags are the engines' class spans around escaped text. */
export const FENCE_HIGHLIGHTER: Readonly<FenceHighlighter> = {
  language: fenceLanguage,
  lines: fenceLines,
};
