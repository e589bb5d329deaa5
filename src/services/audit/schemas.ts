// Shapes of the audit log query (DECISIONS §3): GET /v1/orgs/{org}/audit.
import { Type, type Static } from "@sinclair/typebox";
import { NextCursor, NullableString } from "../schemas.ts";

export const AuditQuery = Type.Object({
  action: Type.Optional(Type.String({ description: "only events with this action, e.g. member.role_changed", examples: ["repo.created"] })),
  from: Type.Optional(Type.String({ description: "epoch milliseconds, inclusive" })),
  to: Type.Optional(Type.String({ description: "epoch milliseconds, exclusive" })),
  limit: Type.Optional(Type.String({ description: "1-100, default 30", examples: ["30"] })),
  cursor: Type.Optional(Type.String({ description: "next_cursor of the previous page" })),
});

export const AuditEvent = Type.Object({
  id: Type.String(),
  action: Type.String(),
  actor: Type.Object({
    kind: Type.String({ description: "user, token (an org service token), runner, registration_token or system" }),
    id: NullableString(),
    name: NullableString({ description: "the person's handle, or the token's label" }),
  }),
  target: NullableString({ description: "what was acted on, by name" }),
  data: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], { description: "details of the action" }),
  created_at: Type.Integer(),
});

export const AuditList = Type.Object(
  { events: Type.Array(AuditEvent, { description: "newest first" }), next_cursor: NextCursor },
  {
    examples: [
      {
        events: [
          {
            id: "l3n6xq2c8v5b7m1k",
            action: "member.role_changed",
            actor: { kind: "user", id: "6mk7hlwccg2wkryp", name: "ada" },
            target: "grace",
            data: { from: "member", to: "admin" },
            created_at: 1795249115366,
          },
        ],
        next_cursor: null,
      },
    ],
  },
);
export type AuditList = Static<typeof AuditList>;
