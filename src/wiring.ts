// The composition of the services floor (DESIGN.md "Domain order"): which subscribers react to
// which events, which handler runs each kind of durable work, which resolvers answer for the
// lower domains. It may import any domain; `buildContext` (src/runtime.ts) calls it once per
// context, so the CLI and the server see the same wiring.
//
// One section per work package of issue 26 (A: platform floor; B: domain order; C: web), so
// parallel edits never touch the same lines.
import type { Ctx } from "./services/context.ts";
import { WEBHOOK_DELIVER, WEBHOOK_PRUNE, deliver, pruneDeliveries, queueDeliveries } from "./services/hooks/delivery.ts";
import { WEBHOOK_EVENT_KINDS } from "./services/hooks/schemas.ts";
import { enqueueTriggers, CI_TRIGGER, runTrigger } from "./services/ci/trigger.ts";
import { CI_SCHEDULE, fireSchedules } from "./services/ci/schedule.ts";
import { CI_PLAN_PLACEHOLDER } from "./services/ci/release.ts";
import { planReleasedPlaceholder } from "./services/ci/release-plan.ts";
import { enqueueContributions, CONTRIBUTIONS_RECORD, recordContributions } from "./services/discovery/contributions.ts";
import { ACTIVITY_SUMMARIZE, enqueuePushSummary, summarizePush } from "./services/hooks/activity-summary.ts";
import { followPushes } from "./services/changes/changes.ts";
import { REPO_PURGE, purgeRepoStorage } from "./services/git/purge.ts";
import { REPO_FORK, runFork } from "./services/repos/forks.ts";
import { REPO_COMPACT, REPO_GC, REPO_GC_PASS, REPO_SWEEP, compactRepo, gcRepo, scheduleGcPass, sweepRepo } from "./services/git/maintenance.ts";
import { BILLING_SEATS, seatsChanged, syncSeats } from "./services/billing/seats.ts";
import { visibilityChanged } from "./services/ci/claim.ts";
import { MIRROR_SCHEDULE, MIRROR_SYNC, scheduleMirrorSyncs } from "./services/mirrors/queue.ts";
import { runMirrorSync } from "./services/mirrors/sync.ts";
import type { Resolvers } from "./services/access/resolvers.ts";
import { BILLING_QUOTA } from "./services/billing/write-blocked.ts";
import { isRunnerCredential, resolveRunnerCredential } from "./services/ci/credentials.ts";
import { SESSION_CREDENTIAL, TOKEN_CREDENTIAL } from "./services/people/auth.ts";
import { guardPresentation } from "./services/people/throttle.ts";
import { MAIL_SEND, sendMail } from "./services/mail/outbox.ts";
import { CHANGE_LAND } from "./services/changes/land-job.ts";
import { CHANGE_REANCHOR, reanchorChange } from "./services/changes/reanchor.ts";
import { CHANGE_LAND_SCAN, checksReported, landQueue, scanQueues } from "./services/changes/lander.ts";
import { CI_SWEEP, sweepCi } from "./services/ci/sweeper.ts";
import { CI_CACHE_EVICT, runCacheEviction } from "./services/ci/caches-evict.ts";
import { CI_ARTIFACT_SWEEP, sweepArtifacts } from "./services/ci/artifacts.ts";
import { JOBS_PRUNE, pruneJobs } from "./services/jobs/prune.ts";
import { forgetThread, recordActivity } from "./services/notify/activity.ts";
import { NOTIFY_FANOUT, fanout } from "./services/notify/fanout.ts";
import { NOTIFY_MAIL, mailNotification } from "./services/notify/mail.ts";
import { NOTIFY_PRUNE, pruneNotify } from "./services/notify/unsubscribe.ts";
import { ISSUES_XREF, enqueueXrefs, runXref } from "./services/issues/xref.ts";
import { LFS_GC_PASS, collectLfsGarbage } from "./services/lfs/gc.ts";

/** Wires every subscriber and kind into a freshly built context. */
export function wire(ctx: Ctx): void {
  wirePlatform(ctx);
  wireDomains(ctx);
  wireWeb(ctx);
}

// ── A: platform floor (events, durable work) ─────────────────────────────────────────────────
function wirePlatform(ctx: Ctx): void {
  // One event path: an event's webhook deliveries, CI triggers, contribution job and change
  // updates are written in the event's own transaction (SPEC §6.1), in this order.
  ctx.events.subscribe("webhooks", [...WEBHOOK_EVENT_KINDS], queueDeliveries);
  ctx.events.subscribe("ci", ["push"], enqueueTriggers);
  // A counted push writes its contribution job in its own transaction (services/discovery/contributions.ts).
  ctx.events.subscribe("contributions", ["push"], enqueueContributions);
  // Open changes follow their branch on every push, whatever the transport (services/changes).
  ctx.events.subscribe("changes", ["push"], followPushes);
  // What each push brought (branches, commit counts, first lines), for activity feeds (services/hooks/activity-summary.ts).
  ctx.events.subscribe("activity", ["push"], enqueuePushSummary);
  // A check result for a queued change's head: its target's queue is looked at again.
  ctx.events.subscribe("lander", ["checks.reported"], checksReported);

  ctx.work.define(REPO_PURGE, purgeRepoStorage);
  ctx.work.define(REPO_COMPACT, async (c, p) => void (await compactRepo(c, p)));
  ctx.work.define(REPO_GC, async (c, p) => void (await gcRepo(c, p)));
  ctx.work.define(REPO_SWEEP, async (c, p) => void (await sweepRepo(c, p)));
  ctx.work.define(REPO_FORK, runFork);
  ctx.work.define(CONTRIBUTIONS_RECORD, recordContributions);
  ctx.work.define(ACTIVITY_SUMMARIZE, summarizePush);
  ctx.work.define(BILLING_SEATS, syncSeats);
  ctx.work.define(CI_TRIGGER, runTrigger);
  ctx.work.define(CI_PLAN_PLACEHOLDER, planReleasedPlaceholder);
  ctx.work.define(MIRROR_SYNC, runMirrorSync);
  ctx.work.define(WEBHOOK_DELIVER, deliver);
  ctx.work.define(MAIL_SEND, sendMail);
  ctx.work.define(CHANGE_LAND, landQueue);
  ctx.work.define(CHANGE_REANCHOR, reanchorChange);

  // Periodic: once per slot across the cluster (a job row), or a pass on every node (no row).
  ctx.work.define(MIRROR_SCHEDULE, async (c) => void (await scheduleMirrorSyncs(c)));
  ctx.work.define(CI_SCHEDULE, async (c, p) => void (await fireSchedules(c, p)));
  ctx.work.define(REPO_GC_PASS, async (c) => void (await scheduleGcPass(c)));
  ctx.work.define(WEBHOOK_PRUNE, async (c) => void (await pruneDeliveries(c)));
  ctx.work.define(JOBS_PRUNE, async (c) => void (await pruneJobs(c)));
  ctx.work.define(CHANGE_LAND_SCAN, scanQueues);
  ctx.work.define(CI_SWEEP, async (c) => void (await sweepCi(c)));
  ctx.work.define(CI_CACHE_EVICT, runCacheEviction);
  ctx.work.define(LFS_GC_PASS, async (c) => void (await collectLfsGarbage(c)));
  ctx.work.define(CI_ARTIFACT_SWEEP, async (c) => void (await sweepArtifacts(c)));
}

// ── B: domain order (resolvers, cross-domain events) ─────────────────────────────────────────
function wireDomains(ctx: Ctx): void {
  // A seat is a membership: orgs and people announce the change, billing tells the provider.
  ctx.events.subscribe("billing", ["membership.changed"], seatsChanged);
  // A repository's visibility decides which machines may take its jobs: CI's waiters look again.
  ctx.events.subscribe("ci.routing", ["repo.visibility_changed"], visibilityChanged);
  // Something happened in a thread: its participants, the activity row and the fan-out job (services/notify).
  ctx.events.subscribe("notify", ["thread.activity"], recordActivity);
  // A thread was deleted (an issue): its notifications, participants and activity go with it.
  ctx.events.subscribe("notify.forget", ["thread.deleted"], forgetThread);
  ctx.work.define(NOTIFY_FANOUT, fanout);
  ctx.work.define(NOTIFY_MAIL, mailNotification);
  ctx.work.define(NOTIFY_PRUNE, async (c) => void (await pruneNotify(c)));
  // Commits and changes that mention issues: a job reads them, adds timeline events and closes `fixes #N` (services/issues).
  ctx.events.subscribe("issues", ["push", "change.opened", "change.landed"], enqueueXrefs);
  ctx.work.define(ISSUES_XREF, runXref);
}

// What access asks the domains above it (ctx.resolvers, access/resolvers.ts): credential kinds and
// billing's quota answers, so access imports none of them. Built with the context (the field is
// required: no context exists without quota enforcement or credential kinds).
/** The resolvers every context carries. Order matters: the first kind whose shape fits resolves a value. */
export function domainResolvers(): Resolvers {
  return {
    credentials: {
      kinds: [
        // CI's runner registration tokens (svcg_) and machine credentials (svcr_): bearer only.
        { name: "runner", carriers: ["bearer"], matches: isRunnerCredential, resolve: resolveRunnerCredential },
        TOKEN_CREDENTIAL,
        SESSION_CREDENTIAL,
      ],
      guard: guardPresentation,
    },
    quota: BILLING_QUOTA,
  };
}

// ── C: web ───────────────────────────────────────────────────────────────────────────────────
function wireWeb(_ctx: Ctx): void {}
