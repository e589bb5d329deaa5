// CI secrets and variables settings pages and their forms, at repository level
// (/{org}/{repo}/settings/secrets|variables) and org level (/settings/orgs/{org}/secrets|variables).
// Each form is one call of the same service as the API's PUT or DELETE (services/ci/secrets.ts),
// so names, values, limits and authority are checked once, the same way.
import { Elysia } from "elysia";
import type { AppError } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { deleteOrgValue, deleteRepoValue, putOrgValue, putRepoValue } from "../../../services/ci/secrets.ts";
import { orgValuesView, repoSecretsView, repoVariablesView } from "../../../services/web/ci.ts";
import { field, postForm, type FormInput } from "../kit/forms.ts";
import { HIDE, orgParam, pageDrawer, queryParam } from "../kit/draw.ts";
import { layout, page, type Frame } from "../kit/layout.ts";
import { orgHref, repoSettingsHref, type Notice } from "./frame.ts";
import { kindPath, orgValuesPage, repoSecretsPage, repoVariablesPage, type ValueForm, type ValueKind } from "./secrets-page.ts";

/** The most repositories one form may select (the service's own limit is lower and says so). */
const MAX_FORM_REPOS = 1000;

/**
 * What a form posted. Why the value is read apart and never kept for a secret: a refused post draws
 * the form again, and a secret's value must not come back in a page. A browser sends a textarea's
 * line ends as CRLF; they are stored as LF, as a value written in a file or through the API would be.
 */
function readValueForm(kind: ValueKind, form: URLSearchParams): { shown: ValueForm; raw: string } {
  const raw = (form.get("value") ?? "").replace(/\r\n/g, "\n");
  const repos = form.getAll("repos").slice(0, MAX_FORM_REPOS);
  return {
    shown: {
      name: field(form, "name"),
      ...(kind === "variable" ? { value: raw } : {}),
      access: form.get("access") === "selected" ? "selected" : "all",
      repos,
    },
    raw,
  };
}

/** The redirect after a save: created or replaced. */
const saved = (created: boolean) => (created ? "created" : "updated");

/** The pages and forms of one kind at both levels. */
function valueRoutes(ctx: Ctx, kind: ValueKind) {
  const draw = pageDrawer(ctx);
  const section = kindPath(kind);
  // A plain string for the route paths: a union there makes Elysia's route types too large for tsc.
  const path: string = section;
  const title = kind === "secret" ? "Secrets" : "Variables";

  const repoPage = async (actor: Principal, frame: Frame, org: string, repo: string, notice: Notice, status = 200, values?: ValueForm) => {
    if (kind === "secret") {
      const v = await repoSecretsView(ctx, actor, org, repo);
      return page(layout(frame, `${title} · ${v.frame.org}/${v.frame.repo}`, repoSecretsPage(v.frame, v.secrets, v.fromOrg, frame, notice, values)), status);
    }
    const v = await repoVariablesView(ctx, actor, org, repo);
    return page(layout(frame, `${title} · ${v.frame.org}/${v.frame.repo}`, repoVariablesPage(v.frame, v.variables, frame, notice, values)), status);
  };
  const orgPage = async (actor: Principal, frame: Frame, org: string, notice: Notice, status = 200, values?: ValueForm) => {
    const v = await orgValuesView(ctx, actor, kind, org);
    return page(layout(frame, `${title} · ${v.frame.org} settings`, orgValuesPage(v.frame, kind, v.items, v.repos, frame.csrf, notice, values)), status);
  };
  const repoAgain =
    (org: string, repo: string) =>
    ({ actor, frame }: FormInput, e: AppError, values?: { shown: ValueForm }) =>
      repoPage(actor, frame, org, repo, { error: e.message }, e.status, values?.shown);
  const orgAgain =
    (org: string) =>
    ({ actor, frame }: FormInput, e: AppError, values?: { shown: ValueForm }) =>
      orgPage(actor, frame, org, { error: e.message }, e.status, values?.shown);

  return new Elysia({ name: `routes.web.admin.${path}` })
    .get(
      `/:org/:repo/settings/${path}`,
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        return draw(request, (actor, frame) => repoPage(actor, frame, org, params.repo, { done: queryParam(query, "done") }));
      },
      HIDE,
    )
    .post(
      `/:org/:repo/settings/${path}`,
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        return postForm(ctx, request, body, {
          read: (form) => readValueForm(kind, form),
          act: async ({ actor }, v) => {
            const out = await putRepoValue(ctx, actor, kind, org, params.repo, v.shown.name, { value: v.raw });
            return `${repoSettingsHref(org, params.repo, section)}?done=${saved(out.created)}`;
          },
          again: repoAgain(org, params.repo),
        });
      },
      HIDE,
    )
    .post(
      `/:org/:repo/settings/${path}/:name/delete`,
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        return postForm(ctx, request, body, {
          act: async ({ actor }) => {
            await deleteRepoValue(ctx, actor, kind, org, params.repo, params.name);
            return `${repoSettingsHref(org, params.repo, section)}?done=deleted`;
          },
          again: repoAgain(org, params.repo),
        });
      },
      HIDE,
    )
    .get(
      `/settings/orgs/:org/${path}`,
      ({ request, params, query }) => draw(request, (actor, frame) => orgPage(actor, frame, params.org, { done: queryParam(query, "done") })),
      HIDE,
    )
    .post(
      `/settings/orgs/:org/${path}`,
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          read: (form) => readValueForm(kind, form),
          act: async ({ actor }, v) => {
            const out = await putOrgValue(ctx, actor, kind, params.org, v.shown.name, {
              value: v.raw,
              repos: v.shown.access === "selected" ? v.shown.repos : null,
            });
            return `${orgHref(params.org, section)}?done=${saved(out.created)}`;
          },
          again: orgAgain(params.org),
        }),
      HIDE,
    )
    .post(
      `/settings/orgs/:org/${path}/:name/delete`,
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor }) => {
            await deleteOrgValue(ctx, actor, kind, params.org, params.name);
            return `${orgHref(params.org, section)}?done=deleted`;
          },
          again: orgAgain(params.org),
        }),
      HIDE,
    );
}

/** Secrets and variables settings, both levels. */
export function adminSecretRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.web.admin.ci-values" }).use(valueRoutes(ctx, "secret")).use(valueRoutes(ctx, "variable"));
}
