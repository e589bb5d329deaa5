// The recent-activity list of the home page, with times as people read them ("5 minutes ago").
import type { Activity } from "../../../services/hooks/activity.ts";
import type { PushedRef } from "../../../services/hooks/activity-summary.ts";
import { avatar } from "../kit/avatar.ts";
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

const VIA: Readonly<Record<string, string>> = { ssh: " over SSH", api: " with the API" };

const REVIEWED: Readonly<Record<string, string>> = { approve: "approved", request_changes: "requested changes on", comment: "reviewed" };

/** A ref's short name and what it is. */
function refName(ref: string): { name: string; what: "branch" | "tag" | "ref" } {
  if (ref.startsWith("refs/heads/")) return { name: ref.slice(11), what: "branch" };
  if (ref.startsWith("refs/tags/")) return { name: ref.slice(10), what: "tag" };
  return { name: ref, what: "ref" };
}

const plural = (n: number, more: boolean, one: string) => `${n}${more ? "+" : ""} ${one}${n === 1 && !more ? "" : "s"}`;

/** What one moved ref says ("pushed 3 commits to main"), without who or where. */
function refPhrase(a: Activity, r: PushedRef): Html {
  const { name, what } = refName(r.ref);
  const base = `/${seg(a.org)}/${seg(a.repo)}`;
  const shown =
    what === "branch" && r.action !== "deleted"
      ? html`<a class="sha" href="${base}/tree/${seg(name)}">${name}</a>`
      : what === "tag" && r.action !== "deleted"
        ? html`<a class="sha" href="${base}/tree/${seg(name)}">${name}</a>`
        : html`<span class="sha">${name}</span>`;
  if (r.action === "deleted") return html`deleted ${what} ${shown}`;
  if (r.action === "created") return html`created ${what} ${shown}${r.commits ? html` with ${plural(r.commits, r.more, "new commit")}` : ""}`;
  if (what !== "branch") return html`moved ${what} ${shown}`;
  return html`pushed ${plural(r.commits, r.more, "commit")} to ${shown}`;
}

/** The newest commits of a moved ref, linked, and a link to the rest. */
function commitLines(a: Activity, r: PushedRef): Html | "" {
  if (!r.head.length) return "";
  const base = `/${seg(a.org)}/${seg(a.repo)}`;
  const rest = r.commits - r.head.length;
  const branch = refName(r.ref).name;
  return html`<ul class="commits">${r.head.map(
    (c) => html`<li><a class="sha" href="${base}/commit/${c.sha}">${c.sha.slice(0, 7)}</a> ${c.subject}</li>`,
  )}${rest > 0 || r.more ? html`<li><a href="${base}/commits/${seg(branch)}">${r.more ? "More" : `${rest} more`} commit${rest === 1 && !r.more ? "" : "s"}</a></li>` : ""}</ul>`;
}

/** What a push says: one ref in the sentence, several as a list under it. */
function pushed(a: Activity, subject: Html, repo: Html): Html {
  const refs = a.refs;
  if (!refs || refs.length === 0) {
    const branch = a.branch ? html` (<span class="sha">${a.branch}</span>)` : "";
    return html`${subject} pushed to ${repo}${branch}${VIA[a.via ?? ""] ?? ""}`;
  }
  if (refs.length === 1 && a.refsTotal <= 1) return html`${subject} ${refPhrase(a, refs[0]!)} in ${repo}${VIA[a.via ?? ""] ?? ""}${commitLines(a, refs[0]!)}`;
  const others = a.refsTotal - refs.length;
  return html`${subject} pushed ${a.refsTotal} refs to ${repo}${VIA[a.via ?? ""] ?? ""}<ul class="refs">${refs.map((r) => html`<li>${refPhrase(a, r)}${commitLines(a, r)}</li>`)}${others > 0 ? html`<li class="muted">and ${others} more</li>` : ""}</ul>`;
}

/** What one entry says. */
function sentence(a: Activity): Html {
  const base = `/${seg(a.org)}/${seg(a.repo)}`;
  const repo = html`<a href="${base}">${a.org}/${a.repo}</a>`;
  const who = a.actor ? html`<a href="/${seg(a.actor)}">${a.actor}</a>` : html`Someone`;
  const change = (n: number | null) => (n !== null ? html`<a href="${base}/changes/${n}">change #${n}</a>` : html`a change`);
  const issue = html`<a href="${base}/issues/${a.number ?? 0}">issue #${a.number ?? 0}</a>`;
  const title = a.title ? html` <q>${a.title}</q>` : "";
  switch (a.kind) {
    case "push":
      if (a.via === "mirror")
        return html`${repo} synced from its origin${a.refs?.length ? html`<ul class="refs">${a.refs.map((r) => html`<li>${refPhrase(a, r)}</li>`)}</ul>` : ""}`;
      return pushed(a, who, repo);
    case "landing": {
      const [top, ...with_] = a.landed;
      const together = with_.length ? html` (with ${with_.map((n, i) => html`${i ? ", " : ""}<a href="${base}/changes/${n}">#${n}</a>`)})` : "";
      const onto = a.branch ? html` (<span class="sha">${a.branch}</span>)` : "";
      const r = a.refs?.[0];
      const brought = r?.commits ? html`: ${plural(r.commits, r.more, "commit")}` : "";
      return html`${who} landed ${change(top ?? null)}${together} in ${repo}${onto}${brought}${r ? commitLines(a, r) : ""}`;
    }
    case "change.ejected":
      return html`${change(a.number)} was taken out of the landing queue of ${repo}`;
    case "change.opened":
      return html`${who} opened ${change(a.number)}${title} in ${repo}`;
    case "change.reviewed":
      return html`${who} ${REVIEWED[a.verdict ?? ""] ?? "reviewed"} ${change(a.number)} in ${repo}`;
    case "change.commented":
      return html`${who} commented on ${change(a.number)} in ${repo}`;
    case "issue.opened":
      return html`${who} opened ${issue}${title} in ${repo}`;
    case "issue.closed":
      return html`${who} closed ${issue}${title} in ${repo}`;
    case "issue.commented":
      return html`${who} commented on ${issue}${title} in ${repo}`;
  }
}

/** The list, newest first, each entry with its actor's picture. */
export function activityList(items: Activity[], nowMs: number): Html {
  return html`<ul class="list activity">${items.map(
    (a) =>
      html`<li>${a.actor && a.kind !== "change.ejected" ? avatar(a.actor, 20, { alt: "" }) : ""}<div>${sentence(a)} <span class="muted">· ${timeOf(a.created_at, nowMs)}</span></div></li>`,
  )}</ul>`;
}
