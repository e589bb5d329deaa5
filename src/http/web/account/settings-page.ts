// The settings frame (a section menu beside the content) and the profile settings: the profile
// fields of SPEC §2.8 with up to five links, and the pinned repositories.
import type { PinList, UserProfile } from "../../../services/discovery/schemas.ts";
import type { RepoBody } from "../../../services/repos/repos.ts";
import { avatar, avatarVersion } from "../kit/avatar.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { alertOf, csrfField } from "../kit/sign-in.ts";

/** The settings sections. */
export type Section = "profile" | "emails" | "tokens" | "keys";

const SECTIONS: readonly [Section, string][] = [
  ["profile", "Profile"],
  ["emails", "Email addresses"],
  ["tokens", "Tokens"],
  ["keys", "SSH keys"],
];

/** A settings page: the menu, a notice after a change, and the section. */
export function settingsFrame(current: Section, notice: string | null, body: Html): Html {
  return html`<div class="settings"><nav class="settings-nav" aria-label="Settings"><ul>${SECTIONS.map(
    ([s, label]) => html`<li><a href="/settings/${s}"${s === current ? html` aria-current="page"` : ""}>${label}</a></li>`,
  )}</ul></nav>
<div class="settings-main">${notice ? html`<p class="notice" role="status">${notice}</p>` : ""}${body}</div></div>`;
}

/** Field values of the profile form: what was sent (after a refusal) or the profile. */
type ProfileValues = Record<string, string>;

/** The profile as form values. */
export function profileValues(p: UserProfile): ProfileValues {
  const v: ProfileValues = {
    name: p.name,
    display_name: p.display_name ?? "",
    bio: p.bio ?? "",
    pronouns: p.pronouns ?? "",
    company: p.company ?? "",
    location: p.location ?? "",
    profile_repo: p.profile_repo ?? "",
    contrib_private_optin: p.contrib_private_optin ? "on" : "",
  };
  p.links.forEach((l, i) => {
    v[`link_label_${i}`] = l.label;
    v[`link_url_${i}`] = l.url;
  });
  return v;
}

/** How many link rows the form has (SPEC §8: at most 5 links). */
export const LINK_ROWS = 5;

function text(v: ProfileValues, name: string, label: string, max: number, auto = "off"): Html {
  return html`<label>${label} <input type="text" name="${name}" maxlength="${max}" autocomplete="${auto}" value="${v[name] ?? ""}"></label>`;
}

/** The profile form and the pins form. */
export function profileSettings(o: {
  csrf: string | null;
  handle: string;
  values: ProfileValues;
  ownPublic: RepoBody[];
  pins: PinList["pins"];
  candidates: RepoBody[];
  error?: string;
  pinError?: string;
  /** The uploaded picture's key, or null (the identicon shows). */
  avatarKey?: string | null;
  avatarError?: string;
}): Html {
  const v = o.values;
  const rows = Array.from({ length: LINK_ROWS }, (_, i) => i);
  const pinned = new Set(o.pins.map((p) => `${p.org}/${p.name}`.toLowerCase()));
  return html`<h1>Profile</h1>
<p class="muted">Everyone can see your profile at <a href="/${seg(o.handle)}">/${o.handle}</a>. It never shows your email addresses.</p>
${avatarSettings(o.csrf, o.handle, o.avatarKey ?? null, o.avatarError)}
${alertOf(o.error)}
<form class="stack wide" method="post" action="/settings/profile">${csrfField(o.csrf)}
${text(v, "name", "Name", 100, "name")}
${text(v, "display_name", "Display name", 100, "nickname")}
<label>Bio <textarea name="bio" rows="4" maxlength="500">${v.bio ?? ""}</textarea></label>
${text(v, "pronouns", "Pronouns", 40)}
${text(v, "company", "Company", 100, "organization")}
${text(v, "location", "Location", 100)}
<fieldset><legend>Links (at most ${LINK_ROWS}; http or https)</legend>
${rows.map(
  (
    i,
  ) => html`<div class="link-row"><label>Label ${i + 1} <input type="text" name="link_label_${i}" maxlength="50" value="${v[`link_label_${i}`] ?? ""}"></label>
<label>URL ${i + 1} <input type="url" name="link_url_${i}" maxlength="2000" value="${v[`link_url_${i}`] ?? ""}"></label></div>`,
)}
</fieldset>
<label>Profile repository <select name="profile_repo"><option value="">None</option>${o.ownPublic.map((r) => html`<option${r.name === v.profile_repo ? html` selected` : ""}>${r.name}</option>`)}</select></label>
<label class="check"><input type="checkbox" name="contrib_private_optin"${v.contrib_private_optin ? html` checked` : ""}> Count my private work on my contribution graph (counted, never named)</label>
<div><button class="primary" type="submit">Save profile</button></div>
</form>
<h2 id="pins-h">Pinned repositories</h2>
<p class="muted">Up to six public repositories shown first on your page.</p>
${alertOf(o.pinError)}
${
  o.candidates.length
    ? html`<form class="stack wide" method="post" action="/settings/profile/pins" aria-labelledby="pins-h">${csrfField(o.csrf)}
<fieldset><legend>Repositories to pin</legend>${o.candidates.map((r) => {
        const full = `${r.org}/${r.name}`;
        return html`<label class="check"><input type="checkbox" name="pin" value="${full}"${pinned.has(full.toLowerCase()) ? html` checked` : ""}> ${full}</label>`;
      })}</fieldset>
<div><button type="submit">Save pins</button></div></form>`
    : html`<p class="muted">No public repositories to pin yet.</p>`
}`;
}

/** The picture section: the current one, the upload form, and Remove when one was uploaded. */
function avatarSettings(csrf: string | null, handle: string, key: string | null, error: string | undefined): Html {
  return html`<section class="avatar-settings" aria-labelledby="avatar-h"><h2 id="avatar-h">Picture</h2>
<div class="avatar-row">${avatar(handle, 96, { alt: key ? "Your picture" : "Your generated picture", version: avatarVersion(key) })}
<div>${alertOf(error)}
<form class="stack" method="post" action="/settings/profile/avatar" enctype="multipart/form-data">${csrfField(csrf)}
<label>Upload a picture <input type="file" name="avatar" accept="image/png,image/jpeg,image/webp" required></label>
<p class="hint muted">PNG, JPEG or WebP, at most 1 MiB and 4096×4096 pixels.</p>
<div><button type="submit">Upload picture</button></div></form>
${key ? html`<form method="post" action="/settings/profile/avatar/remove">${csrfField(csrf)}<button type="submit">Remove picture</button></form>` : html`<p class="muted">Without one, pages show the pattern generated from your handle.</p>`}
</div></div></section>`;
}
