// The recent-activity list of the home page, with times as people read them ("5 minutes ago").
import type { Activity } from "../../../services/hooks/activity.ts";
import { html, seg, type Html } from "../kit/html.ts";

const UNITS: readonly [number, string][] = [
  [365 * 86_400_000, "year"],
  [30 * 86_400_000, "month"],
  [86_400_000, "day"],
  [3_600_000, "hour"],
  [60_000, "minute"],
];

/** How long ago `t` was, in words. */
export function ago(t: number, nowMs: number): string {
  const d = Math.max(0, nowMs - t);
  for (const [ms, unit] of UNITS) {
    const n = Math.floor(d / ms);
    if (n >= 1) return `${n} ${unit}${n === 1 ? "" : "s"} ago`;
  }
  return "just now";
}

/** A `<time>` with the exact moment for machines and the relative one for people. */
export function timeOf(t: number, nowMs: number): Html {
  const iso = new Date(t).toISOString();
  return html`<time datetime="${iso}" title="${iso.slice(0, 16).replace("T", " ")} UTC">${ago(t, nowMs)}</time>`;
}

const VIA: Readonly<Record<string, string>> = { ssh: " over SSH", api: " with the API", mirror: " from its origin" };

/** What one event says. */
function sentence(a: Activity): Html {
  const repo = html`<a href="/${seg(a.org)}/${seg(a.repo)}">${a.org}/${a.repo}</a>`;
  const who = a.actor ? html`<a href="/${seg(a.actor)}">${a.actor}</a>` : html`Someone`;
  const branch = a.branch ? html` (<span class="sha">${a.branch}</span>)` : "";
  const change = a.change !== null ? html`<a href="/${seg(a.org)}/${seg(a.repo)}/changes/${a.change}">change #${a.change}</a>` : html`a change`;
  switch (a.kind) {
    case "push":
      if (a.via === "mirror") return html`${repo} synced from its origin`;
      if (a.via === "lander") return html`The lander updated ${repo}${branch}`;
      return html`${who} pushed to ${repo}${branch}${VIA[a.via ?? ""] ?? ""}`;
    case "change.landed":
      return html`${change} landed in ${repo}${branch}`;
    case "change.ejected":
      return html`${change} was taken out of the landing queue of ${repo}`;
    default:
      return html`Activity in ${repo}`;
  }
}

/** The list, newest first. */
export function activityList(items: Activity[], nowMs: number): Html {
  return html`<ul class="list activity">${items.map((a) => html`<li>${sentence(a)} <span class="muted">· ${timeOf(a.created_at, nowMs)}</span></li>`)}</ul>`;
}
