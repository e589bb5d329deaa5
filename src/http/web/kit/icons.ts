// Small inline SVG icons (issue 33): 16 px, drawn with strokes in currentColor so they follow the
// text's colour in light and dark themes, hidden from screen readers (the words beside them say
// what they mean). Inline markup needs no font and no request, and the pages' CSP allows it (an
// SVG's presentation attributes are not inline styles).
import { trusted, type Html } from "./html.ts";

/** Each icon's drawing on a 16×16 grid: paths, lines and circles (stroked, unfilled unless `f`). */
const DRAWINGS = {
  file: `<path d="M3.5 1.5h6l3 3v10h-9z"/><path d="M9.5 1.5v3h3"/>`,
  folder: `<path d="M1.5 3.5v10h13v-8h-7l-1.5-2z"/>`,
  submodule: `<path d="M1.5 3.5v10h13v-8h-7l-1.5-2z"/><path d="M6 10.5h4M8.5 8.5l2 2-2 2"/>`,
  symlink: `<path d="M3.5 1.5h6l3 3v10h-9z"/><path d="M6 11.5v-2a2 2 0 0 1 2-2h2.5M9 6l1.5 1.5L9 9"/>`,
  branch: `<circle cx="4.5" cy="3.5" r="1.5"/><circle cx="4.5" cy="12.5" r="1.5"/><circle cx="11.5" cy="4.5" r="1.5"/><path d="M4.5 5v6M11.5 6c0 3-7 2-7 5"/>`,
  tag: `<path d="M1.5 2.5v5l7 7 6-6-7-7h-5z"/><circle cx="5" cy="5.5" r="1"/>`,
  fork: `<circle cx="4" cy="3" r="1.5"/><circle cx="12" cy="3" r="1.5"/><circle cx="8" cy="13" r="1.5"/><path d="M4 4.5v1.5a2 2 0 0 0 2 2h4a2 2 0 0 0 2-2V4.5M8 8v3.5"/>`,
  eye: `<path d="M1 8s2.5-5 7-5 7 5 7 5-2.5 5-7 5-7-5-7-5z"/><circle cx="8" cy="8" r="2"/>`,
  history: `<path d="M2 8a6 6 0 1 0 1.8-4.3"/><path d="M1.5 1.5v3h3M8 4.5V8l2.5 1.5"/>`,
  issue: `<circle cx="8" cy="8" r="6.5"/><circle cx="8" cy="8" r="1.2"/>`,
  change: `<circle cx="4" cy="3.5" r="1.5"/><circle cx="4" cy="12.5" r="1.5"/><circle cx="12" cy="12.5" r="1.5"/><path d="M4 5v6M12 11V6a2 2 0 0 0-2-2H7M8.5 2.5 7 4l1.5 1.5"/>`,
  run: `<circle cx="8" cy="8" r="6.5"/><path d="M6.5 5.5v5l4-2.5z"/>`,
  settings: `<circle cx="8" cy="8" r="2"/><path d="M8 1.5v2M8 12.5v2M1.5 8h2M12.5 8h2M3.4 3.4l1.4 1.4M11.2 11.2l1.4 1.4M3.4 12.6l1.4-1.4M11.2 4.8l1.4-1.4"/>`,
  lock: `<rect x="3" y="7" width="10" height="7.5" rx="1"/><path d="M5 7V5a3 3 0 0 1 6 0v2"/>`,
  download: `<path d="M8 1.5v9M4.5 7 8 10.5 11.5 7M2 12.5v2h12v-2"/>`,
  search: `<circle cx="6.5" cy="6.5" r="4.5"/><path d="m10 10 4.5 4.5"/>`,
  code: `<path d="M5 4 1.5 8 5 12M11 4l3.5 4-3.5 4"/>`,
  mirror: `<path d="M2 5.5h10M9.5 3 12 5.5 9.5 8M14 10.5H4M6.5 8 4 10.5 6.5 13"/>`,
  chevron: `<path d="m4 6 4 4 4-4"/>`,
  book: `<path d="M2 2.5h4.5A1.5 1.5 0 0 1 8 4v10a1.5 1.5 0 0 0-1.5-1.5H2zM14 2.5H9.5A1.5 1.5 0 0 0 8 4v10a1.5 1.5 0 0 1 1.5-1.5H14z"/>`,
  link: `<path d="M6.5 9.5a3 3 0 0 0 4.2 0l2.3-2.3a3 3 0 0 0-4.2-4.2l-1 1M9.5 6.5a3 3 0 0 0-4.2 0L3 8.8A3 3 0 0 0 7.2 13l1-1"/>`,
  sync: `<path d="M13.5 6A5.5 5.5 0 0 0 3 5M2.5 10A5.5 5.5 0 0 0 13 11"/><path d="M2.5 2v3h3M13.5 14v-3h-3"/>`,
  alert: `<path d="M8 1.5 15 14H1z"/><path d="M8 6v4M8 11.5v.5"/>`,
} as const;

/** The names of the icons. */
export type IconName = keyof typeof DRAWINGS;

/** The names, for the tests. */
export const ICON_NAMES = Object.keys(DRAWINGS) as IconName[];

/** Each icon's markup, built once (constant strings only: `trusted` is safe here). */
const MARKUP: Readonly<Record<IconName, string>> = Object.fromEntries(
  ICON_NAMES.map((n) => [
    n,
    `<svg class="icon" width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.5" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">${DRAWINGS[n]}</svg>`,
  ]),
) as Record<IconName, string>;

/** One icon, hidden from assistive technology (the words beside it say what it means). */
export function icon(name: IconName): Html {
  return trusted(MARKUP[name]);
}
