// Org settings: runner groups, registration (the command shown once, right after the token is
// made) and the machines with their derived state.
import type { RegistrationToken, Runner, RunnerGroup } from "../../../services/ci/schemas.ts";
import type { OrgAdminFrame } from "../../../services/web/admin.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { options, orgHref, orgSettings, type Notice } from "./frame.ts";
import { buttonForm, csrfInput, timeOf } from "../kit/widgets.ts";

function groupsBox(f: OrgAdminFrame, groups: RunnerGroup[], csrf: string | null): Html {
  const base = `${orgHref(f.org, "runners")}/groups`;
  const rows = groups.map(
    (
      g,
    ) => html`<tr><td>${g.name}${g.is_default ? html` <span class="badge">default</span>` : ""}</td><td>${g.repo_access === "all" ? "all repositories" : g.repos.length ? g.repos.join(", ") : "no repositories"}</td><td>${g.allow_public ? "yes" : "no"}</td><td>${g.runners}</td>
<td>${f.admin && !g.is_default ? buttonForm(`${base}/${seg(g.id)}/delete`, "Delete", `Delete the group ${g.name}`, csrf) : ""}</td></tr>`,
  );
  return html`<section class="box" aria-labelledby="groups-h"><header><h2 id="groups-h" class="inh">Runner groups</h2></header>
<div class="scroll"><table class="grid"><thead><tr><th scope="col">Group</th><th scope="col">Repositories</th><th scope="col">Public repositories</th><th scope="col">Machines</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead><tbody>${rows}</tbody></table></div></section>`;
}

function adminForms(f: OrgAdminFrame, groups: RunnerGroup[], csrf: string | null, values?: URLSearchParams): Html {
  const base = orgHref(f.org, "runners");
  return html`<section class="box" aria-labelledby="register-h"><header><h2 id="register-h" class="inh">Register a machine</h2></header>
<form class="row" method="post" action="${base}/registration-token">${csrfInput(csrf)}<label>Group <select name="group">${options(
    groups.map((g) => g.name),
    values?.get("group") ?? "default",
  )}</select></label><div><button class="primary" type="submit">Create registration command</button></div></form></section>
<section class="box" aria-labelledby="new-group-h"><header><h2 id="new-group-h" class="inh">New group</h2></header>
<form class="row" method="post" action="${base}/groups">${csrfInput(csrf)}
<label>Name <input type="text" name="name" required maxlength="64" value="${values?.get("name") ?? ""}"></label>
<label>Repositories <select name="repo_access">${options(["all", "selected"], values?.get("repo_access") ?? "all")}</select></label>
<label>Selected repositories <input type="text" name="repos" placeholder="api, web" value="${values?.get("repos") ?? ""}"></label>
<label class="check"><input type="checkbox" name="allow_public" value="1"${values?.get("allow_public") ? html` checked` : ""}> Public repositories too</label>
<div><button type="submit">Create group</button></div></form></section>`;
}

function machinesBox(f: OrgAdminFrame, runners: Runner[], csrf: string | null): Html {
  const rows = runners.map(
    (
      r,
    ) => html`<tr><td>${r.name}${r.ephemeral ? html` <span class="badge">ephemeral</span>` : ""}</td><td>${r.group.name}</td><td><span class="state state-${r.state}">${r.state}</span>${r.job ? html` <span class="muted">${r.job.repo}: ${r.job.key}</span>` : ""}</td>
<td>${r.labels.join(", ")}</td><td>${timeOf(r.last_seen_at)}</td><td>${f.admin ? buttonForm(`${orgHref(f.org, "runners")}/${seg(r.id)}/remove`, "Remove", `Remove the machine ${r.name}`, csrf) : ""}</td></tr>`,
  );
  return html`<section class="box" aria-labelledby="machines-h"><header><h2 id="machines-h" class="inh">Machines</h2></header>
${
  rows.length
    ? html`<div class="scroll"><table class="grid"><thead><tr><th scope="col">Name</th><th scope="col">Group</th><th scope="col">State</th><th scope="col">Labels</th><th scope="col">Last seen</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p class="pad muted">No machines registered.</p>`
}</section>`;
}

/** The registration command of a token just made: shown in this answer only. */
function madeBox(t: RegistrationToken): Html {
  return html`<section class="box secret" aria-labelledby="made-h"><header><h2 id="made-h" class="inh">Registration command for group ${t.group ?? ""}</h2></header>
<div class="pad"><p>Run this on the machine. It is shown only once, registers one machine, and works until ${timeOf(t.expires_at)}.</p>
<div class="clone"><label for="register-command" class="inl">Command</label><input id="register-command" type="text" readonly value="${t.command}"><button type="button" data-copy="register-command" hidden>Copy</button></div>
<p class="muted">Then start it with <code>svc runner run</code>.</p></div></section>`;
}

/** Groups, the admin forms, machines. */
export function runnersPage(
  f: OrgAdminFrame,
  groups: RunnerGroup[],
  runners: Runner[],
  csrf: string | null,
  notice: Notice,
  made?: RegistrationToken,
  values?: URLSearchParams,
): Html {
  return orgSettings(
    f,
    "runners",
    notice,
    html`${made ? madeBox(made) : ""}${groupsBox(f, groups, csrf)}${f.admin ? adminForms(f, groups, csrf, values) : ""}${machinesBox(f, runners, csrf)}`,
  );
}
