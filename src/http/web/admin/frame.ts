// Pieces every administration page shares: the org and repository settings frames with their
// tabs, notices after a redirect, selects and list paging (one-button forms and dates: kit/widgets.ts).
import type { OrgAdminFrame, RepoAdminFrame } from "../../../services/web/admin.ts";
import { html, seg, type Html } from "../kit/html.ts";
import type { Frame } from "../kit/layout.ts";
import { repoTop } from "../repos/repo-layout.ts";

/** The tabs of the org settings. */
export type OrgSection = "profile" | "members" | "teams" | "invitations" | "runners" | "secrets" | "variables" | "billing" | "audit";

/** [section, label, shown to admins only, shown for a personal namespace] */
const ORG_TABS: readonly [OrgSection, string, boolean, boolean][] = [
  ["profile", "Profile", true, true],
  ["members", "Members", false, true],
  ["teams", "Teams", false, false],
  ["invitations", "Invitations", true, false],
  ["runners", "Runners", false, true],
  ["secrets", "Secrets", true, true],
  ["variables", "Variables", true, true],
  ["billing", "Billing", true, true],
  ["audit", "Audit log", false, true],
];

/** `/settings/orgs/{org}` */
export function orgBase(org: string): string {
  return `/settings/orgs/${seg(org)}`;
}

/** The address of one org settings tab. */
export function orgHref(org: string, section: OrgSection): string {
  return `${orgBase(org)}/${section}`;
}

/** Messages a redirect may ask for (`?done=`): fixed texts, never echoed input. */
const DONE: Readonly<Record<string, string>> = {
  saved: "Saved.",
  updated: "Updated.",
  created: "Created.",
  removed: "Removed.",
  deleted: "Deleted.",
  revoked: "Revoked.",
  added: "Added.",
  granted: "Granted.",
  renamed: "Renamed. Pages at the old address lead here; update git remotes and API clients to the new name.",
  left: "You left the organization.",
  "checkout-done": "Thank you: the subscription shows here as soon as the payment provider confirms it.",
  "checkout-cancelled": "Checkout cancelled; nothing was charged.",
};

/** What a page says above its content: an error (with role alert) or the outcome of a redirect. */
export interface Notice {
  error?: string;
  done?: string;
}

function noticeOf(n: Notice): Html {
  if (n.error) return html`<p class="error notice" role="alert">${n.error}</p>`;
  const text = n.done ? DONE[n.done] : undefined;
  return text ? html`<p class="notice ok" role="status">${text}</p>` : html``;
}

/** The org settings frame: heading, tabs the viewer may open, the notice, the section. */
export function orgSettings(f: OrgAdminFrame, section: OrgSection, notice: Notice, body: Html): Html {
  const tabs = ORG_TABS.filter(([, , adminOnly, personal]) => (!adminOnly || f.admin) && (personal || !f.personal));
  return html`<div class="ul"><h1><a href="/${seg(f.org)}">${f.org}</a> <span class="muted">settings</span></h1>
<nav class="tabs" aria-label="Organization settings">${tabs.map(([s, label]) => html`<a href="${orgHref(f.org, s)}"${s === section ? html` aria-current="page"` : ""}>${label}</a>`)}</nav>
${noticeOf(notice)}${body}</div>`;
}

/** The tabs of a repository's settings (`general` is `/{org}/{repo}/settings` itself). */
export type RepoSection = "general" | "access" | "protections" | "webhooks" | "secrets" | "variables";

/** `/{org}/{repo}/settings[/{section}]` */
export function repoSettingsHref(org: string, repo: string, section: RepoSection): string {
  return `/${seg(org)}/${seg(repo)}/settings${section === "general" ? "" : `/${section}`}`;
}

/**
 * The repository settings frame: the one repository layout on its Settings tab, the settings
 * sub-nav (each tab shown to whoever may use it, as the API decides), the notice, the section.
 */
export function repoSettings(page: Frame, f: RepoAdminFrame, section: RepoSection, notice: Notice, body: Html): Html {
  const tabs: [RepoSection, string, boolean][] = [
    ["general", "General", f.repoAdmin],
    ["access", "Access", f.orgAdmin],
    ["protections", "Protections", f.repoAdmin],
    ["webhooks", "Webhooks", f.repoAdmin],
    ["secrets", "Secrets", f.repoAdmin],
    ["variables", "Variables", f.repoWrite],
  ];
  return html`<div class="ul">${repoTop(page, f.chrome, "settings")}
<div class="settings"><nav class="subnav" aria-label="Repository settings">${tabs
    .filter((t) => t[2])
    .map(([s, label]) => html`<a href="${repoSettingsHref(f.org, f.repo, s)}"${s === section ? html` aria-current="page"` : ""}>${label}</a>`)}</nav>
<div class="settings-body">${noticeOf(notice)}${body}</div></div></div>`;
}

/** A `<select>` of `values` with `selected` chosen. */
export function options(values: readonly string[], selected: string | null): Html[] {
  return values.map((v) => html`<option value="${v}"${v === selected ? html` selected` : ""}>${v}</option>`);
}

/** The link to the next page of a list, keeping the page's other query parameters. */
export function nextPage(path: string, params: Record<string, string | undefined>, next: string | null, label: string): Html {
  if (!next) return html``;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  q.set("cursor", next);
  return html`<nav class="pager" aria-label="More"><a href="${path}?${q.toString()}">${label}</a></nav>`;
}
