// What the notification API answers, and where a thread lives on the web.
import { Type, type Static } from "@sinclair/typebox";
import type { SubjectKind } from "../../db/schema/notifications.ts";
import { NextCursor } from "../schemas.ts";

/** A notification as the API shows it (DECISIONS §5 Notifications; `repo`, `subject.url`, decided). */
export type NotificationBody = Static<typeof Notification>;

/** The web address of a thread: a change or issue by number, a CI run by id. */
export function threadPath(org: string, repo: string, kind: SubjectKind, id: string, number: number | null): string {
  const base = `/${encodeURIComponent(org)}/${encodeURIComponent(repo)}`;
  if (kind === "run") return `${base}/runs/${encodeURIComponent(id)}`;
  return `${base}/${kind === "change" ? "changes" : "issues"}/${number ?? encodeURIComponent(id)}`;
}

const Reason = Type.String({
  description:
    "why the person hears about the thread (their strongest reason): author, comment, review, review_requested, assign, mention, watching or ci_activity",
});

const EXAMPLE = {
  id: "n5v2k7q3x9m4c8b1",
  repo: { org: "acme", name: "widgets" },
  subject: { kind: "change", number: 7, id: "c2h8m4k6p1r9t3w5", title: "Faster parser", url: "https://svc.example.com/acme/widgets/changes/7" },
  reason: "review_requested",
  unread: true,
  updated_at: 1795797584404,
} as const;

export const Notification = Type.Object(
  {
    id: Type.String(),
    repo: Type.Object({ org: Type.String(), name: Type.String() }),
    subject: Type.Object({
      kind: Type.Union([Type.Literal("change"), Type.Literal("issue"), Type.Literal("run")]),
      number: Type.Union([Type.Integer(), Type.Null()], { description: "the change or issue number; null for a CI run" }),
      id: Type.String(),
      title: Type.String(),
      url: Type.String({ description: "the thread on the web" }),
    }),
    reason: Reason,
    unread: Type.Boolean(),
    updated_at: Type.Integer({ description: "epoch milliseconds of the thread's latest activity for the person (DECISIONS §1)" }),
  },
  { examples: [EXAMPLE] },
);

export const NotificationList = Type.Object(
  {
    notifications: Type.Array(Notification),
    next_cursor: NextCursor,
    unread_count: Type.Integer({ description: "unread notifications about repositories the caller may read, over the whole inbox" }),
  },
  { examples: [{ notifications: [EXAMPLE], next_cursor: null, unread_count: 3 }] },
);

export const NotificationQuery = Type.Object({
  unread: Type.Optional(Type.String({ description: "true or false", examples: ["true"] })),
  reason: Type.Optional(Type.String({ description: "one reason", examples: ["review_requested"] })),
  repo: Type.Optional(Type.String({ description: "org/name", examples: ["acme/widgets"] })),
  limit: Type.Optional(Type.String({ description: "1-100, default 30", examples: ["30"] })),
  cursor: Type.Optional(Type.String({ description: "next_cursor of the previous page" })),
});

export const NotificationPatch = Type.Object({ unread: Type.Boolean() }, { additionalProperties: false });

export const ReadAll = Type.Object(
  {
    repo: Type.Optional(Type.String({ description: "only this repository's (org/name)" })),
    before: Type.Optional(Type.Integer({ minimum: 0, description: "epoch milliseconds: only notifications updated at or before this time" })),
  },
  { additionalProperties: false },
);

export const NotificationSettings = Type.Object(
  { email: Type.Boolean({ description: "notification mail on (default) or off" }) },
  { additionalProperties: false },
);

/** The settings as answered (the request body is NotificationSettings). */
export const NotificationSettingsBody = Type.Object(
  { email: Type.Boolean({ description: "notification mail on (default) or off" }) },
  { examples: [{ email: true }] },
);
