// The General and Protections tabs of a repository's settings (issue 33):
// /{org}/{repo}/settings and /{org}/{repo}/settings/protections, and their forms. Each form is one
// call of the API's service (services/web/repo-settings.ts), answered by the posted-form policy
// (kit/forms.ts): 303 on success, else the page again with the refusal's reason and status.
import { Elysia } from "elysia";
import type { AppError } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import type { RepoPatch } from "../../../services/repos/schemas.ts";
import {
  deleteProtectionFromForm,
  deleteRepoFromForm,
  generalView,
  patchRepoFromForm,
  protectionsView,
  putProtectionFromForm,
  type ProtectionForm,
} from "../../../services/web/repo-settings.ts";
import { field, postForm, type FormInput } from "../kit/forms.ts";
import { HIDE, orgParam, pageDrawer, queryParam } from "../kit/draw.ts";
import { seg } from "../kit/html.ts";
import { layout, page, type Frame } from "../kit/layout.ts";
import { repoSettingsHref, type Notice } from "./frame.ts";
import { generalPage, type GeneralForm, type GeneralRefusal } from "./repo-general-page.ts";
import { protectionsPage, type ProtectionRefusal } from "./repo-protections-page.ts";

/** A textarea's value as the API would get it from a file: CRLF (what browsers send) as LF. */
function textOf(form: URLSearchParams, name: string): string {
  return (form.get(name) ?? "").replace(/\r\n/g, "\n");
}

/** The PATCH each General form sends. */
function patchOf(which: Exclude<GeneralForm, "delete">, form: URLSearchParams): RepoPatch {
  switch (which) {
    case "name":
      return { name: field(form, "name") };
    case "about":
      return { description: textOf(form, "description"), homepage: field(form, "homepage") };
    case "visibility":
      return { public: form.get("visibility") === "public" };
    case "default-branch":
      return { default_branch: field(form, "default_branch") };
  }
}

/** The protection form as sent (an unticked box is absent: false). */
function protectionOf(form: URLSearchParams): ProtectionForm {
  return {
    pattern: field(form, "pattern"),
    allow_force_push: form.get("allow_force_push") === "1",
    allow_deletion: form.get("allow_deletion") === "1",
    require_change: form.get("require_change") === "1",
    dismiss_stale_approvals: form.get("dismiss_stale_approvals") === "1",
    required_approvals: field(form, "required_approvals"),
    required_checks: textOf(form, "required_checks"),
  };
}

/** The General and Protections pages and forms. */
export function repoSettingsRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);

  const general = async (actor: Principal, frame: Frame, org: string, repo: string, notice: Notice, status = 200, refused?: GeneralRefusal) => {
    const v = await generalView(ctx, actor, org, repo);
    return page(layout(frame, `Settings · ${v.frame.org}/${v.frame.repo}`, generalPage(frame, v.frame, v.repo, v.branches, notice, refused)), status);
  };
  const protections = async (actor: Principal, frame: Frame, org: string, repo: string, notice: Notice, status = 200, refused?: ProtectionRefusal) => {
    const v = await protectionsView(ctx, actor, org, repo);
    return page(layout(frame, `Protections · ${v.frame.org}/${v.frame.repo}`, protectionsPage(frame, v.frame, v.protections, notice, refused)), status);
  };
  const generalAgain =
    (org: string, repo: string, which: GeneralForm) =>
    ({ actor, frame, form }: FormInput, e: AppError) =>
      general(actor, frame, org, repo, {}, e.status, { form: which, error: e.message, values: form });

  const app = new Elysia({ name: "routes.web.admin.repo-settings" })
    .get(
      "/:org/:repo/settings",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        return draw(request, (actor, frame) => general(actor, frame, org, params.repo, { done: queryParam(query, "done") }));
      },
      HIDE,
    )
    .post(
      "/:org/:repo/settings/delete",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        return postForm(ctx, request, body, {
          act: async ({ actor, form }) => {
            await deleteRepoFromForm(ctx, actor, org, params.repo, field(form, "confirm"));
            return `/${seg(org)}`;
          },
          again: generalAgain(org, params.repo, "delete"),
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/settings/protections",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        return draw(request, (actor, frame) => protections(actor, frame, org, params.repo, { done: queryParam(query, "done") }));
      },
      HIDE,
    )
    .post(
      "/:org/:repo/settings/protections",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        return postForm(ctx, request, body, {
          read: protectionOf,
          act: async ({ actor }, v) => {
            await putProtectionFromForm(ctx, actor, org, params.repo, v);
            return `${repoSettingsHref(org, params.repo, "protections")}?done=saved`;
          },
          again: ({ actor, frame }, e, v) => protections(actor, frame, org, params.repo, {}, e.status, { error: e.message, values: v }),
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/settings/protections/delete",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        return postForm(ctx, request, body, {
          act: async ({ actor, form }) => {
            await deleteProtectionFromForm(ctx, actor, org, params.repo, field(form, "pattern"));
            return `${repoSettingsHref(org, params.repo, "protections")}?done=deleted`;
          },
          again: ({ actor, frame }, e) => protections(actor, frame, org, params.repo, { error: e.message }, e.status),
        });
      },
      HIDE,
    );

  // One route per PATCH form. Why separate paths: each refusal is drawn in its own box.
  for (const which of ["name", "about", "visibility", "default-branch"] as const) {
    app.post(
      `/:org/:repo/settings/${which as string}`,
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        return postForm(ctx, request, body, {
          act: async ({ actor, form }) => {
            const repo = await patchRepoFromForm(ctx, actor, org, params.repo, patchOf(which, form));
            return `${repoSettingsHref(repo.org, repo.name, "general")}?done=${which === "name" ? "renamed" : "saved"}`;
          },
          again: generalAgain(org, params.repo, which),
        });
      },
      HIDE,
    );
  }
  return app;
}
