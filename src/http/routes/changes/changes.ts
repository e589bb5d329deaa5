// Changes, their diffs, compare and the land request (DECISIONS §3).
import { Elysia } from "elysia";
import { Invalid } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import { createChange, getChange, landChange, listChanges, patchChange, startChangeRuns } from "../../../services/changes/changes.ts";
import { changeDiff, compare } from "../../../services/changes/diff.ts";
import { listPatchsets, patchsetDiff } from "../../../services/changes/patchsets.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import {
  Change,
  ChangeCreate,
  ChangeList,
  ChangeListQuery,
  ChangePatch,
  Comparison,
  Diff,
  PatchsetDiffQuery,
  PatchsetList,
} from "../../../services/changes/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { jsonAnswer } from "../../responses.ts";

/** A change number from the path; anything else is no change (404 from the service). */
function num(raw: string): number {
  return /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : 0;
}

function decodeParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw Invalid("malformed percent-escape in the path");
  }
}

/** Change routes. */
export function changeRoutes(ctx: Ctx) {
  const base = "/v1/orgs/:org/repos/:repo";
  /** The request's repository, resolved once (the services decide what else they need on it). */
  const target = (request: Request, params: { org: string; repo: string }) => openRepo(ctx, callerOf(request), params.org, params.repo);
  return (
    new Elysia({ name: "routes.changes" })
      .post(
        `${base}/changes`,
        async ({ request, params, body, set }) => {
          const out = await createChange(ctx, await target(request, params), body);
          set.status = 201;
          return out;
        },
        {
          body: ChangeCreate,
          response: { 201: Change, ...errors(400, 401, 402, 403, 404, 422) },
          detail: {
            summary: "Open a change",
            description:
              "From a branch of this repository (repo:write), or of a fork named by `source` (read access on the fork; a fork the caller cannot see is 404). 422 for an unknown branch or target, a mirror, a source that is not a fork, or a bad depends_on (missing, closed, cycle).",
          },
        },
      )
      .get(`${base}/changes`, async ({ request, params, query }) => listChanges(ctx, await target(request, params), query), {
        query: ChangeListQuery,
        response: { 200: ChangeList, ...errors(400, 401, 404, 422) },
        detail: { summary: "List changes, newest first (?state= filters; a state outside the enumeration is 422)" },
      })
      .get(`${base}/changes/:number`, async ({ request, params }) => getChange(ctx, await target(request, params), num(params.number)), {
        response: { 200: Change, ...errors(401, 404) },
        detail: { summary: "One change" },
      })
      .patch(`${base}/changes/:number`, async ({ request, params, body }) => patchChange(ctx, await target(request, params), num(params.number), body), {
        body: ChangePatch,
        response: { 200: Change, ...errors(400, 401, 402, 403, 404, 409, 422) },
        detail: {
          summary: "Edit, close or reopen a change",
          description:
            "Writers, or the change's author. `state: closed` closes (leaving the queue); `state: open` reopens a closed change and catches up with its branch. 422 for a depends_on cycle.",
        },
      })
      .post(
        `${base}/changes/:number/land`,
        async ({ request, params, set }) => {
          const out = await landChange(ctx, await target(request, params), num(params.number));
          set.status = 202;
          return out;
        },
        {
          response: { 202: Change, ...errors(401, 402, 403, 404, 409) },
          detail: {
            summary: "Queue a change for landing",
            description:
              "202 with the change `queued`. The lander lands it (fast-forward or a merge commit) once its required checks passed, or ejects it with a `verdict`; landing the top of a stack lands the open changes beneath it. 409 for a landed or closed change, or a closed change beneath.",
          },
        },
      )
      .post(
        `${base}/changes/:number/runs`,
        async ({ request, params, set }) => {
          const out = await startChangeRuns(ctx, await target(request, params), num(params.number));
          set.status = 202;
          return out;
        },
        {
          response: { 202: Change, ...errors(401, 403, 404, 409, 429) },
          detail: {
            summary: "Start a change's runs",
            description:
              "202 with the change. Starts the `on: change` workflows of the change's head that have not run for it: how a writer approves the runs of a change from a fork opened or pushed by someone who may not write here (those do not start by themselves). Runs of a change from a fork stay untrusted (no secrets, no variables). Idempotent per head: while the head's trigger is pending, or once the head has runs, a call starts nothing more. 409 for a landed or closed change; 429 with Retry-After past `SVC_CHANGE_RUNS_LIMIT_PER_PERSON` calls an hour by one person.",
          },
        },
      )
      // Diffs are large (hundreds of KB for 1,000 files): answered as prebuilt JSON, outside the
      // framework's response pass; test/blackbox/changes/answers.test.ts checks them against Diff.
      .get(
        `${base}/changes/:number/diff`,
        async ({ request, params }) => jsonAnswer(await changeDiff(ctx, await target(request, params), num(params.number))),
        {
          response: { 200: Diff, ...errors(401, 404) },
          detail: { summary: "A change's diff: files with status, counts and unified patches (capped, with a truncation marker)" },
        },
      )
      .get(`${base}/changes/:number/patchsets`, async ({ request, params }) => listPatchsets(ctx, await target(request, params), num(params.number)), {
        response: { 200: PatchsetList, ...errors(401, 404) },
        detail: { summary: "A change's patchsets, oldest first: the head each time its branch moved" },
      })
      .get(
        `${base}/changes/:number/patchsets/:n/diff`,
        async ({ request, params, query }) =>
          jsonAnswer(
            await patchsetDiff(ctx, await target(request, params), num(params.number), num(params.n), query.against === undefined ? null : num(query.against)),
          ),
        {
          query: PatchsetDiffQuery,
          response: { 200: Diff, ...errors(400, 401, 404) },
          detail: { summary: "One patchset's diff against its recorded base, or with ?against=m the changes from patchset m's head to this one's" },
        },
      )
      .get(
        `${base}/compare/*`,
        async ({ request, params }) => {
          // Decoded first: a malformed escape is 400 before any access check, as before.
          const spec = decodeParam(params["*"]);
          return jsonAnswer(await compare(ctx, await target(request, params), spec));
        },
        {
          response: { 200: Comparison, ...errors(400, 401, 404) },
          detail: {
            summary: "Compare two revisions ({base}...{head}): ahead/behind counts, the head's commits and its changes since their merge base",
          },
        },
      )
  );
}
