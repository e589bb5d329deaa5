// CI secrets and variables of an organization and of a repository (DECISIONS §5 CI, plan-29 §2.1).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import {
  type CiValueKind,
  deleteOrgValue,
  deleteRepoValue,
  getOrgVariable,
  getRepoVariable,
  listOrgValues,
  listRepoValues,
  putOrgValue,
  putRepoValue,
} from "../../../services/ci/secrets.ts";
import { CiSecret, CiSecretList, CiValuePut, CiVariable, CiVariableList } from "../../../services/ci/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";

const ORG = "/v1/orgs/:org";
const REPO = "/v1/orgs/:org/repos/:repo";

/** The routes of one kind at both levels. */
function kindRoutes(ctx: Ctx, kind: CiValueKind, plural: "secrets" | "variables") {
  const Item = kind === "secret" ? CiSecret : CiVariable;
  const List = kind === "secret" ? CiSecretList : CiVariableList;
  const who = kind === "secret" ? "org admin; 404 to others" : "org admin to change; members with repo:write to read";
  const whoRepo = kind === "secret" ? "repo admin" : "repo admin to change; writers to read";
  const app = new Elysia({ name: `routes.ci.${plural}` })
    .put(
      `${ORG}/${plural}/:name`,
      async ({ request, params, body, set }) => {
        const out = await putOrgValue(ctx, callerOf(request), kind, params.org, params.name, body);
        set.status = out.created ? 201 : 200;
        return out.item;
      },
      {
        body: CiValuePut,
        response: { 200: Item, 201: Item, ...errors(400, 401, 403, 404, 422, 503) },
        detail: { summary: `Create or replace an organization ${kind} (${who})` },
      },
    )
    .get(`${ORG}/${plural}`, async ({ request, params }) => ({ [plural]: await listOrgValues(ctx, callerOf(request), kind, params.org) }) as never, {
      response: { 200: List, ...errors(401, 403, 404) },
      detail: { summary: `List the organization's ${plural}${kind === "secret" ? " (names, never values)" : ""} (${who})` },
    })
    .delete(
      `${ORG}/${plural}/:name`,
      async ({ request, params, set }) => {
        await deleteOrgValue(ctx, callerOf(request), kind, params.org, params.name);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403, 404) }, detail: { summary: `Delete an organization ${kind} (${who})` } },
    )
    .put(
      `${REPO}/${plural}/:name`,
      async ({ request, params, body, set }) => {
        const out = await putRepoValue(ctx, callerOf(request), kind, params.org, params.repo, params.name, body);
        set.status = out.created ? 201 : 200;
        return out.item;
      },
      {
        body: CiValuePut,
        response: { 200: Item, 201: Item, ...errors(400, 401, 403, 404, 422, 503) },
        detail: { summary: `Create or replace a repository ${kind}; it shadows an organization ${kind} of the same name (${whoRepo})` },
      },
    )
    .get(
      `${REPO}/${plural}`,
      async ({ request, params }) => ({ [plural]: await listRepoValues(ctx, callerOf(request), kind, params.org, params.repo) }) as never,
      {
        response: { 200: List, ...errors(401, 403, 404) },
        detail: { summary: `List the repository's own ${plural} (${whoRepo})` },
      },
    )
    .delete(
      `${REPO}/${plural}/:name`,
      async ({ request, params, set }) => {
        await deleteRepoValue(ctx, callerOf(request), kind, params.org, params.repo, params.name);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403, 404) }, detail: { summary: `Delete a repository ${kind} (${whoRepo})` } },
    );
  return app;
}

/** Secrets and variables under /v1/orgs/{org}[/repos/{repo}]. */
export function secretRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.ci.secrets" })
    .use(kindRoutes(ctx, "secret", "secrets"))
    .use(kindRoutes(ctx, "variable", "variables"))
    .get(`${ORG}/variables/:name`, ({ request, params }) => getOrgVariable(ctx, callerOf(request), params.org, params.name) as Promise<CiVariable>, {
      response: { 200: CiVariable, ...errors(401, 403, 404) },
      detail: { summary: "One organization variable (members with repo:write)" },
    })
    .get(
      `${REPO}/variables/:name`,
      ({ request, params }) => getRepoVariable(ctx, callerOf(request), params.org, params.repo, params.name) as Promise<CiVariable>,
      {
        response: { 200: CiVariable, ...errors(401, 403, 404) },
        detail: { summary: "One repository variable (writers)" },
      },
    );
}
