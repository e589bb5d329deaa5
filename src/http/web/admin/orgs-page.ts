// Org settings about people: the profile form, members and their roles, invitations (the link
// shown once, right after it is made).
import type { OrgProfile } from "../../../services/discovery/schemas.ts";
import { ORG_ROLES, type InviteCreated, type InviteList, type MemberList } from "../../../services/orgs/schemas.ts";
import type { OrgAdminFrame } from "../../../services/web/admin.ts";
import type { WebViewer } from "../../../services/web/views.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { nextPage, options, orgHref, orgSettings, type Notice } from "./frame.ts";
import { buttonForm, csrfInput, timeOf } from "../kit/widgets.ts";

/** The org profile form; `values` keeps what was sent when it was refused. */
export function profilePage(f: OrgAdminFrame, p: OrgProfile, csrf: string | null, notice: Notice, values?: URLSearchParams): Html {
  const v = (name: keyof OrgProfile) => values?.get(name) ?? (p[name] as string | null) ?? "";
  return orgSettings(
    f,
    "profile",
    notice,
    html`<form class="stack wide" method="post" action="${orgHref(f.org, "profile")}">${csrfInput(csrf)}
<label>Display name <input type="text" name="display_name" maxlength="100" value="${v("display_name")}"></label>
<label>Description <textarea name="description" rows="3" maxlength="500">${v("description")}</textarea></label>
<label>Location <input type="text" name="location" maxlength="100" value="${v("location")}"></label>
<label>Website <input type="url" name="website" maxlength="2000" placeholder="https://" value="${v("website")}"></label>
<label>Contact email <input type="email" name="contact_email" maxlength="254" value="${v("contact_email")}"></label>
<div><button class="primary" type="submit">Save profile</button></div>
</form>`,
  );
}

/** Members with their roles; admins change roles and remove people, everyone may leave. */
export function membersPage(f: OrgAdminFrame, list: MemberList, viewer: WebViewer | null, csrf: string | null, notice: Notice): Html {
  const base = orgHref(f.org, "members");
  const rows = list.members.map((m) => {
    const self = viewer?.id === m.user_id;
    const controls = f.admin
      ? html`<form class="inline" method="post" action="${base}/${seg(m.user_id)}/role">${csrfInput(csrf)}<label class="inl"><span class="sr-only">Role of ${m.handle}</span><select name="role">${options(ORG_ROLES, m.role)}</select></label> <button type="submit" aria-label="Change the role of ${m.handle}">Change</button></form>
${buttonForm(`${base}/${seg(m.user_id)}/remove`, self ? "Leave" : "Remove", self ? "Leave the organization" : `Remove ${m.handle}`, csrf)}`
      : self
        ? buttonForm(`${base}/${seg(m.user_id)}/remove`, "Leave", "Leave the organization", csrf)
        : "";
    return html`<tr><td><a href="/${seg(m.handle)}">${m.handle}</a></td><td>${m.name}</td>${f.admin ? html`<td>${m.email ?? ""}</td>` : ""}<td><span class="badge">${m.role}</span> ${controls}</td></tr>`;
  });
  return orgSettings(
    f,
    "members",
    notice,
    html`<section class="box" aria-labelledby="members-h"><header><h2 id="members-h" class="inh">Members</h2>${f.admin ? html`<a href="${orgHref(f.org, "invitations")}">Invite someone</a>` : ""}</header>
<div class="scroll"><table class="grid"><thead><tr><th scope="col">Handle</th><th scope="col">Name</th>${f.admin ? html`<th scope="col">Email</th>` : ""}<th scope="col">Role</th></tr></thead><tbody>${rows}</tbody></table></div></section>
${nextPage(base, {}, list.next_cursor, "More members")}`,
  );
}

/** The invitation form, the link of the one just made (only in that answer), and the pending list. */
export function invitesPage(f: OrgAdminFrame, list: InviteList, csrf: string | null, notice: Notice, made?: InviteCreated, values?: URLSearchParams): Html {
  const base = orgHref(f.org, "invitations");
  const shown = made
    ? html`<section class="box secret" aria-labelledby="made-h"><header><h2 id="made-h" class="inh">Invitation for ${made.email}</h2></header>
<div class="pad"><p>Copy this link now and send it to them: it is shown only once and works once, until ${timeOf(made.expires_at)}.</p>
<div class="clone"><label for="invite-url" class="inl">Invitation link</label><input id="invite-url" type="text" readonly value="${made.invite_url}"><button type="button" data-copy="invite-url" hidden>Copy</button></div>
<p class="muted">${made.mail.sent ? "The invitation was also mailed to them." : html`The mail did not go out yet${made.mail.error ? html` (${made.mail.error})` : ""}; it is retried.`}</p></div></section>`
    : "";
  const rows = list.invites.map(
    (i) =>
      html`<tr><td>${i.email}</td><td>${i.role}</td><td>${i.state}</td><td>${timeOf(i.expires_at)}</td><td>${buttonForm(`${base}/${seg(i.id)}/revoke`, "Revoke", `Revoke the invitation of ${i.email}`, csrf)}</td></tr>`,
  );
  return orgSettings(
    f,
    "invitations",
    notice,
    html`${shown}
<section class="box" aria-labelledby="invite-h"><header><h2 id="invite-h" class="inh">Invite someone</h2></header>
<form class="row" method="post" action="${base}">${csrfInput(csrf)}
<label>Email <input type="email" name="email" required maxlength="254" value="${values?.get("email") ?? ""}"></label>
<label>Role <select name="role">${options(ORG_ROLES, values?.get("role") ?? "member")}</select></label>
<div><button class="primary" type="submit">Create invitation</button></div></form></section>
<section class="box" aria-labelledby="pending-h"><header><h2 id="pending-h" class="inh">Pending invitations</h2></header>
${
  rows.length
    ? html`<div class="scroll"><table class="grid"><thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">State</th><th scope="col">Expires</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p class="pad muted">No pending invitations.</p>`
}</section>
${nextPage(base, {}, list.next_cursor, "More invitations")}`,
  );
}
