// Account settings: profile and pins, email addresses, and following people (the follow button
// of a person's page posts here). Every page needs a signed-in person; every form is CSRF-checked.
import { Elysia } from "elysia";
import type { AppError } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { patchUserProfile } from "../../../services/discovery/profiles.ts";
import { putPins } from "../../../services/discovery/pins.ts";
import { setFollow } from "../../../services/discovery/follows.ts";
import { addEmail, deleteEmail, makePrimaryEmail, resendEmailClaim } from "../../../services/people/emails.ts";
import type { UserProfilePatch } from "../../../services/discovery/schemas.ts";
import { emailSettingsView, profileSettingsView } from "../../../services/web/account-settings.ts";
import { HIDE, formOf, pageDrawer, queryParam } from "../kit/draw.ts";
import { layout, page, type Frame } from "../kit/layout.ts";
import type { Html } from "../kit/html.ts";
import { field, me, postForm, seeOther, signInRequired, type FormInput } from "../kit/forms.ts";
import { LINK_ROWS, profileSettings, profileValues, settingsFrame, type Section } from "./settings-page.ts";
import { emailSettings } from "./emails-page.ts";
import { avatarSettingsRoutes } from "./avatar-routes.ts";

/** What a finished change says on the page it returns to (`?done=`): fixed sentences only. */
export const NOTICES: Readonly<Record<string, string>> = {
  profile: "Profile saved.",
  avatar: "Picture saved.",
  "avatar-removed": "Picture removed: your generated one shows again.",
  pins: "Pins saved.",
  added: "Address added: a confirmation link is on its way to it.",
  sent: "A new confirmation link is on its way.",
  primary: "Sign-in address changed.",
  removed: "Address removed.",
  verified: "Address confirmed.",
  revoked: "Token revoked.",
  "key-added": "Key added.",
  "key-removed": "Key removed.",
};

const TITLES: Readonly<Record<Section, string>> = { profile: "Profile settings", emails: "Email addresses", tokens: "Tokens", keys: "SSH keys" };

/** Draws a settings section for a signed-in person (401: the sign-in form, back here afterwards). */
export function settingsDrawer(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  return (request: Request, query: unknown, section: Section, body: (actor: Principal, frame: Frame) => Promise<Html>, extra: Record<string, string> = {}) =>
    draw(request, async (actor, frame) => {
      if (!frame.viewer) return signInRequired(request, frame);
      const notice = NOTICES[queryParam(query, "done") ?? ""] ?? null;
      return page(layout(frame, TITLES[section], settingsFrame(section, notice, await body(actor, frame))), 200, { "cache-control": "no-store", ...extra });
    });
}

/** A settings section re-drawn after a refusal, with the service's status. */
export function settingsAgain(section: Section, frame: Frame, status: number, body: Html): Response {
  return page(layout(frame, TITLES[section], settingsFrame(section, null, body)), status, { "cache-control": "no-store" });
}

/** The profile form's fields as the PATCH body: every field sent, blank clears, links from the filled rows. */
function profilePatch(form: URLSearchParams): UserProfilePatch {
  const links: { label: string; url: string }[] = [];
  for (let i = 0; i < LINK_ROWS; i++) {
    const label = field(form, `link_label_${i}`);
    const url = field(form, `link_url_${i}`);
    if (label || url) links.push({ label, url });
  }
  return {
    name: form.get("name") ?? "",
    display_name: field(form, "display_name") || null,
    bio: (form.get("bio") ?? "").replace(/\r\n/g, "\n").trim() || null,
    pronouns: field(form, "pronouns") || null,
    company: field(form, "company") || null,
    location: field(form, "location") || null,
    links,
    profile_repo: field(form, "profile_repo") || null,
    contrib_private_optin: form.get("contrib_private_optin") !== null,
  };
}

/** The settings routes for the profile, pins, addresses and follows. */
export function accountSettingsRoutes(ctx: Ctx) {
  const settings = settingsDrawer(ctx);
  const profileAgain = async (i: FormInput, error: AppError, which: "error" | "pinError" | "avatarError") => {
    const v = await profileSettingsView(ctx, i.actor);
    const values = which === "error" ? Object.fromEntries(i.form) : profileValues(v.profile);
    const refusal = { [which]: error.message };
    const avatarKey = i.frame.viewer?.avatar ?? null;
    return settingsAgain("profile", i.frame, error.status, profileSettings({ csrf: i.frame.csrf, handle: me(i), values, ...v, ...refusal, avatarKey }));
  };
  const emailsAgain = async (i: FormInput, error: AppError) => {
    const v = await emailSettingsView(ctx, i.actor);
    return settingsAgain(
      "emails",
      i.frame,
      error.status,
      emailSettings({ csrf: i.frame.csrf, emails: v.emails, error: error.message, value: field(i.form, "email") }),
    );
  };

  return new Elysia({ name: "routes.web.account.settings" })
    .get("/settings", () => seeOther("/settings/profile"), HIDE)
    .get(
      "/settings/profile",
      ({ request, query }) =>
        settings(request, query, "profile", async (actor, frame) => {
          const v = await profileSettingsView(ctx, actor);
          return profileSettings({ csrf: frame.csrf, handle: frame.viewer!.handle, values: profileValues(v.profile), ...v, avatarKey: frame.viewer!.avatar });
        }),
      HIDE,
    )
    .post(
      "/settings/profile",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          back: "/settings/profile",
          again: (i, e) => profileAgain(i, e, "error"),
          act: async (i) => {
            await patchUserProfile(ctx, i.actor, me(i), profilePatch(i.form));
            return "/settings/profile?done=profile";
          },
        }),
      HIDE,
    )
    .use(avatarSettingsRoutes(ctx, profileAgain))
    .post(
      "/settings/profile/pins",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          back: "/settings/profile",
          again: (i, e) => profileAgain(i, e, "pinError"),
          act: async (i) => {
            const pins = i.form
              .getAll("pin")
              .slice(0, 100)
              .map((full) => {
                const slash = full.indexOf("/");
                return { org: full.slice(0, slash), repo: full.slice(slash + 1) };
              });
            await putPins(ctx, i.actor, me(i), { pins });
            return "/settings/profile?done=pins";
          },
        }),
      HIDE,
    )
    .get(
      "/settings/emails",
      ({ request, query }) =>
        settings(request, query, "emails", async (actor, frame) => emailSettings({ csrf: frame.csrf, emails: (await emailSettingsView(ctx, actor)).emails })),
      HIDE,
    )
    .post(
      "/settings/emails",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          back: "/settings/emails",
          again: emailsAgain,
          act: async (i) => {
            await addEmail(ctx, i.actor, me(i), { email: field(i.form, "email") });
            return "/settings/emails?done=added";
          },
        }),
      HIDE,
    )
    .post(
      "/settings/emails/resend",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          back: "/settings/emails",
          again: emailsAgain,
          act: async (i) => {
            await resendEmailClaim(ctx, i.actor, me(i), field(i.form, "address"));
            return "/settings/emails?done=sent";
          },
        }),
      HIDE,
    )
    .post(
      "/settings/emails/primary",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          back: "/settings/emails",
          again: emailsAgain,
          act: async (i) => {
            await makePrimaryEmail(ctx, i.actor, me(i), field(i.form, "address"), { primary: true });
            return "/settings/emails?done=primary";
          },
        }),
      HIDE,
    )
    .post(
      "/settings/emails/remove",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          back: "/settings/emails",
          again: emailsAgain,
          act: async (i) => {
            await deleteEmail(ctx, i.actor, me(i), field(i.form, "address"));
            return "/settings/emails?done=removed";
          },
        }),
      HIDE,
    )
    .post(
      "/settings/following",
      ({ request, body }) => {
        const handle = field(formOf(body), "handle");
        return postForm(ctx, request, body, {
          back: `/${encodeURIComponent(handle)}`,
          act: async (i) => {
            me(i);
            await setFollow(ctx, i.actor, handle, i.form.get("follow") === "1");
            return `/${encodeURIComponent(handle)}`;
          },
        });
      },
      HIDE,
    );
}
