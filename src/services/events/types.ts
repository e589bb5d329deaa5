// The event model of the platform floor: repository events (SPEC §6.1, stored and sent to
// webhooks) and internal events (not stored, never sent), both seen by subscribers inside the
// transaction of the change that caused them.
import type { Tx } from "../../db/database.ts";
import type { Ctx } from "../context.ts";

/** The event kinds of SPEC §6.1 and DECISIONS §5 (the `change.*` review events, the `issue.*` tracker events). */
export type EventKind =
  | "push"
  | "change.landed"
  | "change.ejected"
  | "change.opened"
  | "change.reviewed"
  | "change.commented"
  | "issue.opened"
  | "issue.closed"
  | "issue.commented";

/** How the push came in: git over HTTP, SSH, the commit/refs API, the lander, or a mirror's sync from its origin. */
export type PushVia = "git" | "ssh" | "api" | "lander" | "mirror";

/** A ref that moved in the event (old or new is null for a creation or deletion). */
export interface RefMove {
  ref: string;
  old: string | null;
  new: string | null;
}

/** An event as subscribers see it. */
export interface RepoEvent {
  id: string;
  repoId: string;
  orgId: string;
  kind: EventKind;
  /** The webhook payload (SPEC §6.1). */
  payload: Record<string, unknown>;
  actorUserId: string | null;
  /** Refs moved by the event (internal: not part of the webhook payload). */
  moves: RefMove[];
  createdAt: number;
}

/** What a caller records (id and time are the bus's). */
export interface NewRepoEvent {
  repoId: string;
  orgId: string;
  kind: EventKind;
  payload: Record<string, unknown>;
  actorUserId: string | null;
  moves?: RefMove[];
}

/**
 * Events between domains that are not SPEC events: not stored, never sent to webhooks. A lower
 * domain announces what happened; a higher one reacts (usually by enqueuing a job).
 */
export type InternalEvent =
  /** Who counts as a member of the org may have changed (a seat). */
  | { kind: "membership.changed"; orgId: string }
  /** A repository became public or private: which machines may take its queued jobs changed. */
  | { kind: "repo.visibility_changed"; orgId: string; repoId: string }
  /** A check result for `commit` of `repoId` was recorded. */
  | { kind: "checks.reported"; repoId: string; commit: string }
  /** Something happened in a thread people follow (services/notify records it and fans it out). */
  | ThreadActivityEvent
  /** A thread is gone (an issue deleted): services/notify drops its notifications, participants and activity. */
  | { kind: "thread.deleted"; repoId: string; orgId: string; subject: { kind: "change" | "issue" | "run"; id: string } };

/** Why a person hears about a thread (DECISIONS §5 Notifications; GitHub's words where they exist). */
export type NotifyReason = "author" | "comment" | "review" | "review_requested" | "assign" | "mention" | "watching" | "ci_activity";

/** What happened in a thread. */
export type ActivityKind =
  | "opened"
  | "commented"
  | "reviewed"
  | "review_requested"
  | "assigned"
  | "patchset"
  | "landed"
  | "ejected"
  | "closed"
  | "reopened"
  | "run_failed";

/** The activity of a change, issue or run thread (one per request: a review with 20 comments is one). */
export interface ThreadActivityEvent {
  kind: "thread.activity";
  repoId: string;
  orgId: string;
  subject: { kind: "change" | "issue" | "run"; id: string; number: number | null; title: string };
  activity: ActivityKind;
  actorUserId: string | null;
  /** People who take part from now on, with their reason (the actor as commenter, a mentioned person…). */
  participants: { userId: string; reason: NotifyReason }[];
  /** What a notification and its mail show: `{ verdict?, comments?, excerpt?, comment_ids?, patchset? }`. */
  summary: Record<string, unknown>;
  /** When set, only these people hear about this activity (a review request goes to the people asked). */
  only?: string[];
}

export type InternalKind = InternalEvent["kind"];

/** The event a subscriber of `K` receives. */
export type EventOf<K extends EventKind | InternalKind> = K extends InternalKind ? Extract<InternalEvent, { kind: K }> : RepoEvent;

/** Reacts to an event inside its transaction; writes rows only (no network or object-store I/O). */
export type Subscriber<E> = (ctx: Ctx, tx: Tx, event: E) => Promise<void>;
