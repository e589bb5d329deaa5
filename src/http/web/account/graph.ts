// The contribution graph as inline SVG drawn on the server (no script): one cell per day of the
// range, a column per week (Sunday on top), colours by quantiles of the active days' counts
// (classes, so the stylesheet picks light or dark), a <title> per cell and a table of the active
// days for screen readers and for anyone who wants the numbers.
import type { ContributionGraph } from "../../../services/discovery/schemas.ts";
import { parseDay } from "../../../services/discovery/contributions.ts";
import { html, seg, trusted, type Html } from "../kit/html.ts";

const CELL = 10;
const STEP = 13;
const LEFT = 30;
const TOP = 16;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"] as const;
const DAY_MS = 86_400_000;

/**
 * Level 1–4 of each count above zero: the quartile of its rank among the active days' counts
 * (the busiest days are darkest; a single active day, or equal ones, show at the top level).
 */
export function levelsOf(counts: number[]): (n: number) => number {
  const sorted = counts.filter((n) => n > 0).sort((a, b) => a - b);
  return (n) => {
    if (n <= 0 || !sorted.length) return 0;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]! <= n) lo = mid + 1;
      else hi = mid;
    }
    return Math.max(1, Math.ceil((4 * lo) / sorted.length));
  };
}

/** "3 commits on 2025-01-05" */
function cellText(n: number, date: string): string {
  return n === 0 ? `No commits on ${date}` : `${n} commit${n === 1 ? "" : "s"} on ${date}`;
}

/** The SVG: a cell per day from `from` to `to`, month names above, Mon/Wed/Fri beside. */
export function graphSvg(g: ContributionGraph): Html {
  const from = parseDay(g.from)!;
  const to = parseDay(g.to)!;
  const counts = new Map(g.days.map((d) => [d.date, d.count]));
  const level = levelsOf(g.days.map((d) => d.count));
  const offset = (((from + 4) % 7) + 7) % 7; // weekday of the first day (1970-01-01 was a Thursday)
  const weeks = Math.floor((to - from + offset) / 7) + 1;
  const width = LEFT + weeks * STEP;
  const height = TOP + 7 * STEP;
  const parts: string[] = [];
  const labels: { col: number; month: number }[] = [];
  // Markup built from numbers and dates we formatted ourselves; no outside text enters it.
  for (let d = from; d <= to; d++) {
    const date = new Date(d * DAY_MS).toISOString().slice(0, 10);
    const n = counts.get(date) ?? 0;
    const col = Math.floor((d - from + offset) / 7);
    const row = (((d + 4) % 7) + 7) % 7;
    parts.push(
      `<rect class="g-cell g-l${level(n)}" x="${LEFT + col * STEP}" y="${TOP + row * STEP}" width="${CELL}" height="${CELL}" rx="2"><title>${cellText(n, date)}</title></rect>`,
    );
    if (date.endsWith("-01")) labels.push({ col, month: Number(date.slice(5, 7)) - 1 });
  }
  // The range's first month is named over the first column when its 1st came earlier and there is room before the next name.
  if (!g.from.endsWith("-01") && (labels[0]?.col ?? Infinity) >= 3) labels.unshift({ col: 0, month: Number(g.from.slice(5, 7)) - 1 });
  for (const l of labels) parts.push(`<text class="g-text" x="${LEFT + l.col * STEP}" y="${TOP - 5}">${MONTHS[l.month]}</text>`);
  for (const [row, name] of [
    [1, "Mon"],
    [3, "Wed"],
    [5, "Fri"],
  ] as const) {
    parts.push(`<text class="g-text" x="0" y="${TOP + row * STEP + CELL - 1}">${name}</text>`);
  }
  const label = `${g.total} commit${g.total === 1 ? "" : "s"} from ${g.from} to ${g.to}`;
  return html`<svg class="graph" role="img" aria-label="${label}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg">${trusted(parts.join(""))}</svg>`;
}

/** The legend: the five colours from none to most. */
function legend(): Html {
  const cells = [0, 1, 2, 3, 4].map((l) => `<rect class="g-cell g-l${l}" x="${l * STEP}" y="0" width="${CELL}" height="${CELL}" rx="2"></rect>`).join("");
  return html`<p class="g-legend muted"><span>Less</span> <svg aria-hidden="true" width="${5 * STEP}" height="${CELL}" viewBox="0 0 ${5 * STEP} ${CELL}">${trusted(cells)}</svg> <span>More</span></p>`;
}

/** The graph section: heading with the total, the SVG (scrolls on a phone), legend and the table of active days. */
export function graphSection(g: ContributionGraph): Html {
  const active = [...g.days].reverse();
  return html`<section class="box" aria-labelledby="graph-h"><header><h2 class="inh" id="graph-h">${g.total} commit${g.total === 1 ? "" : "s"} from ${g.from} to ${g.to}</h2>${g.private_included ? html`<span class="badge">private work counted</span>` : ""}</header>
<div class="graph-wrap" tabindex="0" role="region" aria-label="Contribution graph">${graphSvg(g)}</div>
${legend()}
<details class="pad"><summary>Days with commits (${g.days.length})</summary>
${
  active.length
    ? html`<table class="g-table"><thead><tr><th scope="col">Day</th><th scope="col">Commits</th><th scope="col">Public repositories</th></tr></thead><tbody>
${active.map((d) => html`<tr><td>${d.date}</td><td>${d.count}</td><td>${d.repos.map((r, i) => html`${i ? ", " : ""}<a href="/${seg(r.org)}/${seg(r.name)}">${r.org}/${r.name}</a> (${r.count})`)}</td></tr>`)}
</tbody></table>`
    : html`<p class="muted">No commits in this range.</p>`
}
</details>
</section>`;
}
