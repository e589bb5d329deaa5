// CI pages: /{org}/{repo}/runs, …/runs/{id}, …/runs/{id}/jobs/{job} and its live log
// (…/events, server-sent events), and cancelling a run.
import { Elysia } from "elysia";
import { now, type Ctx } from "../../../services/context.ts";
import { cancelRun, requireJob } from "../../../services/ci/runs.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import { attemptOf, jobView, runView, runsView } from "../../../services/web/ci.ts";
import { dispatchWorkflow } from "../../../services/ci/dispatch.ts";
import { rerunRun } from "../../../services/ci/rerun.ts";
import { downloadArtifact } from "../../../services/ci/artifacts.ts";
import { zipAnswer } from "../../artifact-file.ts";
import type { Principal } from "../../../services/access/principal.ts";
import type { AppError } from "../../../errors.ts";
import { field, postForm } from "../kit/forms.ts";
import { postedInputs, type DispatchRefusal } from "./dispatch-form.ts";
import { liveLogs, logStream, resumeOffset } from "./live-log.ts";
import { HIDE, orgParam, pageDrawer, queryParam } from "../kit/draw.ts";
import { layout, page, type Frame } from "../kit/layout.ts";
import { jobPage } from "./job-page.ts";
import { runHref, runPage, runsPage } from "./runs-page.ts";

/** The per-input problems of a refused dispatch (`{ inputs: { name: problem } }`), strings only. */
function problemsOf(e: AppError): Record<string, string> {
  const given = e.extra.inputs;
  const out = new Map<string, string>();
  if (given && typeof given === "object") for (const [k, v] of Object.entries(given)) if (typeof v === "string") out.set(k, v);
  return Object.fromEntries(out);
}

/** The CI pages. */
export function ciWebRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  // Live logs open through this plugin (capped by LIMITS.maxStreams).
  const streams = liveLogs();
  const runs = async (actor: Principal, frame: Frame, org: string, repo: string, cursor: string | undefined, refused?: DispatchRefusal, status = 200) => {
    const v = await runsView(ctx, actor, org, repo, cursor);
    return page(
      layout(frame, `Runs · ${v.repo.org}/${v.repo.name}`, runsPage(frame, v, v.runs, v.next, now(), { dispatch: v.dispatch, csrf: frame.csrf, refused })),
      status,
    );
  };
  return new Elysia({ name: "routes.web.ci" })
    .get(
      "/:org/:repo/runs",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        return draw(request, (actor, frame) => runs(actor, frame, org, params.repo, queryParam(query, "cursor")));
      },
      HIDE,
    )
    .post(
      "/:org/:repo/runs/dispatch",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        return postForm(ctx, request, body, {
          // Why "lookup": the form names a branch and a workflow file; one gone since the page was drawn is the form again with the message.
          kind: "lookup",
          read: (form) => ({ workflow: field(form, "workflow"), ref: field(form, "ref"), inputs: postedInputs(form) }),
          act: async ({ actor }, v) => {
            const t = await openRepo(ctx, actor, org, params.repo);
            const run = await dispatchWorkflow(ctx, t, { workflow: v.workflow, ref: v.ref || undefined, inputs: v.inputs });
            return runHref({ org: t.org.name, name: t.repo.name }, run.id);
          },
          again: ({ actor, frame }, e, v) =>
            runs(
              actor,
              frame,
              org,
              params.repo,
              undefined,
              {
                workflow: v.workflow,
                ref: v.ref,
                values: v.inputs,
                error: e.message,
                inputs: problemsOf(e),
              },
              e.status,
            ),
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/runs/:id",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        return draw(request, async (actor, frame) => {
          const v = await runView(ctx, actor, org, params.repo, params.id, attemptOf(queryParam(query, "attempt")));
          return page(layout(frame, `Run · ${v.repo.org}/${v.repo.name}`, runPage(frame, v, v.run, now(), undefined, v.artifacts)));
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/runs/:id/cancel",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        return postForm(ctx, request, body, {
          act: async ({ actor }) => {
            await cancelRun(ctx, await openRepo(ctx, actor, org, params.repo), params.id);
            const v = await runView(ctx, actor, org, params.repo, params.id);
            return runHref(v.repo, v.run.id);
          },
          again: async ({ actor, frame }, e) => {
            const v = await runView(ctx, actor, org, params.repo, params.id);
            return page(layout(frame, `Run · ${v.repo.org}/${v.repo.name}`, runPage(frame, v, v.run, now(), e.message, v.artifacts)), e.status);
          },
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/runs/:id/rerun",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        return postForm(ctx, request, body, {
          act: async ({ actor, form }) => {
            const t = await openRepo(ctx, actor, org, params.repo);
            const run = await rerunRun(ctx, t, params.id, { failed_only: form.get("failed_only") === "1" });
            return `${runHref({ org: t.org.name, name: t.repo.name }, run.id)}?attempt=${run.attempt}`;
          },
          again: async ({ actor, frame }, e) => {
            const v = await runView(ctx, actor, org, params.repo, params.id);
            return page(layout(frame, `Run · ${v.repo.org}/${v.repo.name}`, runPage(frame, v, v.run, now(), e.message, v.artifacts)), e.status);
          },
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/runs/:id/artifacts/:artifact",
      ({ request, params }) => {
        const org = orgParam(params.org);
        return draw(request, async (actor) => {
          // The API's zip for the page's link: a redirect to the bucket (S3) or the file, under the same access check.
          const out = await downloadArtifact(ctx, await openRepo(ctx, actor, org, params.repo), params.artifact, params.id);
          if (out.kind === "redirect") return new Response(null, { status: 302, headers: { location: out.url, "cache-control": "no-store" } });
          return zipAnswer(request, out, true);
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/runs/:id/jobs/:job",
      ({ request, params }) => {
        const org = orgParam(params.org);
        return draw(request, async (actor, frame) => {
          const v = await jobView(ctx, actor, org, params.repo, params.id, params.job);
          return page(layout(frame, `${v.job.key} · ${v.repo.org}/${v.repo.name}`, jobPage(frame, v, v.run, v.job, v.log, now())));
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/runs/:id/jobs/:job/events",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        return draw(request, async (actor) => {
          // The log route's own check before the stream opens: a refusal is its status, not a stream.
          await requireJob(ctx, await openRepo(ctx, actor, org, params.repo), params.id, params.job);
          return logStream(
            ctx,
            streams,
            request,
            actor,
            { org, repo: params.repo, run: params.id, job: params.job },
            resumeOffset(request, queryParam(query, "from")),
          );
        });
      },
      HIDE,
    );
}
