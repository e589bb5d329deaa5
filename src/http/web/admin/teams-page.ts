// Org settings: teams, one team's members, and granting a team a role on a repository.
import { GRANT_ROLES, type Team } from "../../../services/orgs/schemas.ts";
import type { OrgAdminFrame } from "../../../services/web/admin.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { nextPage, options, orgHref, orgSettings, type Notice } from "./frame.ts";
import { buttonForm, csrfInput } from "../kit/widgets.ts";

/** `/settings/orgs/{org}/teams/{team}` (by id: names may hold any character). */
export function teamHref(org: string, teamId: string): string {
  return `${orgHref(org, "teams")}/${seg(teamId)}`;
}

/** The teams with their member counts; admins create teams. */
export function teamsPage(f: OrgAdminFrame, teams: Team[], next: string | null, csrf: string | null, notice: Notice, values?: URLSearchParams): Html {
  const items = teams.map(
    (t) =>
      html`<li><a href="${teamHref(f.org, t.id)}"><strong>${t.name}</strong></a> <span class="badge">${t.member_count} ${t.member_count === 1 ? "member" : "members"}</span>${t.description ? html`<div class="muted">${t.description}</div>` : ""}</li>`,
  );
  const create = f.admin
    ? html`<section class="box" aria-labelledby="new-team-h"><header><h2 id="new-team-h" class="inh">New team</h2></header>
<form class="row" method="post" action="${orgHref(f.org, "teams")}">${csrfInput(csrf)}
<label>Name <input type="text" name="name" required maxlength="100" value="${values?.get("name") ?? ""}"></label>
<label>Description <input type="text" name="description" maxlength="500" value="${values?.get("description") ?? ""}"></label>
<div><button class="primary" type="submit">Create team</button></div></form></section>`
    : "";
  return orgSettings(
    f,
    "teams",
    notice,
    html`${create}<section class="box" aria-labelledby="teams-h"><header><h2 id="teams-h" class="inh">Teams</h2></header>
${items.length ? html`<ul class="list">${items}</ul>` : html`<p class="pad muted">No teams yet.</p>`}</section>
${nextPage(orgHref(f.org, "teams"), {}, next, "More teams")}`,
  );
}

/** One team: members (admins add and remove them), a grant on a repository, deletion. */
export function teamPage(
  f: OrgAdminFrame,
  v: {
    team: { id: string; name: string; description: string | null };
    members: { user_id: string; handle: string; name: string }[];
    next: string | null;
    repos: string[];
  },
  csrf: string | null,
  notice: Notice,
): Html {
  const base = teamHref(f.org, v.team.id);
  const rows = v.members.map(
    (m) =>
      html`<li><a href="/${seg(m.handle)}">${m.handle}</a> <span class="muted">${m.name}</span>${f.admin ? html` ${buttonForm(`${base}/members/${seg(m.user_id)}/remove`, "Remove", `Remove ${m.handle} from the team`, csrf)}` : ""}</li>`,
  );
  const admin = f.admin
    ? html`<section class="box" aria-labelledby="add-h"><header><h2 id="add-h" class="inh">Add a member</h2></header>
<form class="row" method="post" action="${base}/members">${csrfInput(csrf)}<label>Handle of an org member <input type="text" name="user" required maxlength="100" autocomplete="off"></label><div><button type="submit">Add to team</button></div></form></section>
<section class="box" aria-labelledby="grant-h"><header><h2 id="grant-h" class="inh">Give the team a role on a repository</h2></header>
${
  v.repos.length
    ? html`<form class="row" method="post" action="${base}/grants">${csrfInput(csrf)}<label>Repository <select name="repo">${options(v.repos, null)}</select></label><label>Role <select name="role">${options(GRANT_ROLES, "member")}</select></label><div><button type="submit">Grant</button></div></form>`
    : html`<p class="pad muted">The organization has no repositories yet.</p>`
}</section>
<section class="box" aria-labelledby="delete-h"><header><h2 id="delete-h" class="inh">Delete the team</h2></header><p class="pad">Its memberships and repository grants go with it. ${buttonForm(`${base}/delete`, "Delete team", `Delete the team ${v.team.name}`, csrf)}</p></section>`
    : "";
  return orgSettings(
    f,
    "teams",
    notice,
    html`<h2>${v.team.name}</h2>${v.team.description ? html`<p>${v.team.description}</p>` : ""}
<section class="box" aria-labelledby="team-members-h"><header><h2 id="team-members-h" class="inh">Members</h2></header>
${rows.length ? html`<ul class="list">${rows}</ul>` : html`<p class="pad muted">Nobody yet.</p>`}</section>
${nextPage(base, {}, v.next, "More members")}${admin}`,
  );
}
