// Request and response shapes of the orgs domain (SPEC §2.13, §4.4, §4.5; DECISIONS §2–§3).
import { Type, type Static } from "@sinclair/typebox";
import { NextCursor, NullableString } from "../schemas.ts";

export const TeamCreate = Type.Object({
  name: Type.String({ description: "unique per org, case-folded; 1-100 characters", examples: ["backend"] }),
  description: Type.Optional(NullableString({ description: "at most 500 characters" })),
});
export type TeamCreate = Static<typeof TeamCreate>;

export const Team = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: NullableString(),
    member_count: Type.Integer(),
    created_at: Type.Integer({ description: "epoch milliseconds" }),
  },
  { examples: [{ id: "k3x9m2p7q4r8s6t1", name: "backend", description: "Services and storage", member_count: 4, created_at: 1795248971422 }] },
);

export type Team = Static<typeof Team>;

export const TeamList = Type.Object({ teams: Type.Array(Team), next_cursor: NextCursor });

export const PersonRef = Type.Object({ user_id: Type.String(), handle: Type.String(), name: Type.String() });

export const TeamMemberList = Type.Object({ members: Type.Array(PersonRef), next_cursor: NextCursor });
