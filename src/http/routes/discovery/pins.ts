// Pinned repositories of a profile (SPEC §4.2, §8).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { listPins, putPins } from "../../../services/discovery/pins.ts";
import { PinList, PinsPut } from "../../../services/discovery/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";

/** Pin routes. */
export function pinRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.pins" })
    .get("/v1/users/:handle/pins", ({ params }) => listPins(ctx, params.handle), {
      response: { 200: PinList, ...errors(404) },
      detail: { summary: "Pinned repositories that are public now (made private or deleted: absent)" },
    })
    .put("/v1/users/:handle/pins", ({ request, params, body }) => putPins(ctx, callerOf(request), params.handle, body), {
      body: PinsPut,
      response: { 200: PinList, ...errors(400, 401, 403, 404) },
      detail: { summary: "Replace your pins: at most 6 public repositories, kind repo, no duplicates (a repository you cannot see is unknown)" },
    });
}
