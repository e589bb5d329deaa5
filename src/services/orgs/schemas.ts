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

export const TeamList = Type.Object(
  { teams: Type.Array(Team), next_cursor: NextCursor },
  {
    examples: [
      {
        teams: [{ id: "k3x9m2p7q4r8s6t1", name: "backend", description: "Services and storage", member_count: 4, created_at: 1795248971422 }],
        next_cursor: null,
      },
    ],
  },
);

export const PersonRef = Type.Object({ user_id: Type.String(), handle: Type.String(), name: Type.String() });

export const TeamMemberList = Type.Object(
  { members: Type.Array(PersonRef), next_cursor: NextCursor },
  { examples: [{ members: [{ user_id: "u1k3x9m2p7q4r8s6", handle: "ada", name: "Ada Lovelace" }], next_cursor: "ImFkYSI" }] },
);

// ---- roles ----------------------------------------------------------------------------------

/** Org roles, weakest first (SPEC §2.13). */
export const ORG_ROLES = ["viewer", "member", "admin", "owner"] as const;
/** Roles a repository grant can carry (an owner is an org-level role only). */
export const GRANT_ROLES = ["viewer", "member", "admin"] as const;

/**
 * A role field. The enumeration is documented but checked by the service, not the schema: a
 * value outside it answers 422 (SPEC §7), while a schema failure would answer 400. (TypeBox
 * checks no `enum` keyword on a string schema.)
 */
const RoleField = (values: readonly string[], options: Record<string, unknown> = {}) =>
  Type.String({ enum: [...values], description: `one of ${values.join(", ")}; anything else answers 422`, ...options });

/** An org role as responses carry it. */
const OrgRoleValue = Type.Union([Type.Literal("viewer"), Type.Literal("member"), Type.Literal("admin"), Type.Literal("owner")]);

/** An org role as requests carry it. */
export const OrgRole = RoleField(ORG_ROLES, { examples: ["member"] });
export type OrgRole = Static<typeof OrgRole>;

/** A grant role as requests carry it. */
export const GrantRole = RoleField(GRANT_ROLES, { examples: ["member"] });
export type GrantRole = Static<typeof GrantRole>;

// ---- organizations --------------------------------------------------------------------------

export const OrgCreate = Type.Object({
  name: Type.String({ description: "a namespace name: 1-39 characters of a-z, 0-9 and single hyphens; shared with handles", examples: ["acme"] }),
});
export type OrgCreate = Static<typeof OrgCreate>;

export const OrgCreated = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    plan: Type.Literal("free"),
    billable_seats: Type.Integer(),
    detail: Type.String({ description: "whether this deployment sells anything" }),
  },
  {
    examples: [
      {
        id: "q7m2k9x4p8r3s6t1",
        name: "acme",
        plan: "free",
        billable_seats: 1,
        detail: "Created on the free plan. This deployment sells nothing: every feature is available without a subscription.",
      },
    ],
  },
);
export type OrgCreated = Static<typeof OrgCreated>;

// ---- members --------------------------------------------------------------------------------

export const Member = Type.Object({
  user_id: Type.String(),
  handle: Type.String(),
  name: Type.String(),
  role: OrgRoleValue,
  email: Type.Optional(Type.String({ description: "present for org admins only" })),
});
export type Member = Static<typeof Member>;

export const MemberList = Type.Object(
  { members: Type.Array(Member), next_cursor: NextCursor },
  {
    examples: [
      {
        members: [
          { user_id: "u1k3x9m2p7q4r8s6", handle: "ada", name: "Ada Lovelace", role: "owner", email: "ada@example.com" },
          { user_id: "u2m4p6r8t1v3x5z7", handle: "bob", name: "Bob", role: "member", email: "bob@example.com" },
        ],
        next_cursor: null,
      },
    ],
  },
);
export type MemberList = Static<typeof MemberList>;

export const MemberRoleChange = Type.Object({ role: OrgRole });
export type MemberRoleChange = Static<typeof MemberRoleChange>;

export const MemberUpdated = Type.Object(
  { user_id: Type.String(), handle: Type.String(), name: Type.String(), role: OrgRoleValue },
  { examples: [{ user_id: "u2m4p6r8t1v3x5z7", handle: "bob", name: "Bob", role: "admin" }] },
);
export type MemberUpdated = Static<typeof MemberUpdated>;

// ---- grants and the access listing (SPEC §4.5, §5.2; DECISIONS §2) ---------------------------

export const GrantCreate = Type.Object({
  user_ids: Type.Optional(
    Type.Array(Type.String(), {
      minItems: 1,
      maxItems: 1000,
      description: "user ids (or handles) of org members; give this or team_id",
      examples: [["u2m4p6r8t1v3x5z7"]],
    }),
  ),
  team_id: Type.Optional(Type.String({ description: "a team id (or name); give this or user_ids", examples: ["backend"] })),
  role: GrantRole,
});
export type GrantCreate = Static<typeof GrantCreate>;

const GrantRoleValue = Type.Union([Type.Literal("viewer"), Type.Literal("member"), Type.Literal("admin")]);

export const PersonGrant = Type.Object({ user_id: Type.String(), handle: Type.String(), role: GrantRoleValue });
export const TeamGrant = Type.Object({ team_id: Type.String(), team_name: Type.String(), role: GrantRoleValue });
export const Grant = Type.Union([PersonGrant, TeamGrant]);
export type Grant = Static<typeof Grant>;

export const GrantList = Type.Object(
  { grants: Type.Array(Grant, { description: "people first (by handle), then teams (by name)" }) },
  {
    examples: [
      {
        grants: [
          { user_id: "u2m4p6r8t1v3x5z7", handle: "bob", role: "viewer" },
          { team_id: "k3x9m2p7q4r8s6t1", team_name: "backend", role: "member" },
        ],
      },
    ],
  },
);
export type GrantList = Static<typeof GrantList>;

export const AccessPerson = Type.Object({
  user_id: Type.String(),
  handle: Type.String(),
  email: Type.String(),
  role: Type.Union([Type.Literal("viewer"), Type.Literal("member"), Type.Literal("admin"), Type.Literal("owner")], {
    description: "effective role on the repository",
  }),
  source: Type.Union([Type.Literal("org"), Type.Literal("grant"), Type.Literal("team")], {
    description: "org role, a grant naming the person, or a team grant",
  }),
  team_name: NullableString({ description: "the team the role comes from when source is team" }),
});
export const AccessTeam = Type.Object({ team_id: Type.String(), team_name: Type.String(), role: GrantRoleValue, member_count: Type.Integer() });

export const RepoAccess = Type.Object(
  { people: Type.Array(AccessPerson), teams: Type.Array(AccessTeam) },
  {
    examples: [
      {
        people: [
          { user_id: "u1k3x9m2p7q4r8s6", handle: "ada", email: "ada@example.com", role: "owner", source: "org", team_name: null },
          { user_id: "u2m4p6r8t1v3x5z7", handle: "bob", email: "bob@example.com", role: "member", source: "team", team_name: "backend" },
        ],
        teams: [{ team_id: "k3x9m2p7q4r8s6t1", team_name: "backend", role: "member", member_count: 1 }],
      },
    ],
  },
);
export type RepoAccess = Static<typeof RepoAccess>;

// ---- invitations (SPEC §2.13, §4.5, §5.7) ---------------------------------------------------

export const InviteCreate = Type.Object({
  email: Type.String({ description: "the address to invite", examples: ["new.person@example.com"] }),
  role: OrgRole,
});
export type InviteCreate = Static<typeof InviteCreate>;

export const MailOutcome = Type.Object(
  { sent: Type.Boolean(), error: Type.Optional(Type.String({ description: "why the first attempt failed; the mail is retried" })) },
  { description: "whether the invitation mail went out on the first attempt" },
);

export const InviteCreated = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    role: OrgRoleValue,
    expires_at: Type.Integer({ description: "epoch milliseconds; seven days after creation" }),
    invite_link: Type.String({ description: "the single-use svcinv_ secret, shown once" }),
    invite_url: Type.String({ description: "the page that accepts the link" }),
    mail: MailOutcome,
  },
  {
    examples: [
      {
        id: "i9x8c7v6b5n4m3l2",
        email: "new.person@example.com",
        role: "member",
        expires_at: 1795853771422,
        invite_link: "svcinv_abcdefghijklmnopqrstuvwxyz234567",
        invite_url: "https://git.example.com/invite?token=svcinv_abcdefghijklmnopqrstuvwxyz234567",
        mail: { sent: true },
      },
    ],
  },
);
export type InviteCreated = Static<typeof InviteCreated>;

export const Invite = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: OrgRoleValue,
  expires_at: Type.Integer({ description: "epoch milliseconds" }),
  created_at: Type.Integer({ description: "epoch milliseconds" }),
  state: Type.Union([Type.Literal("pending"), Type.Literal("expired")]),
});
export type Invite = Static<typeof Invite>;

export const InviteList = Type.Object(
  { invites: Type.Array(Invite, { description: "not yet accepted, newest first" }), next_cursor: NextCursor },
  {
    examples: [
      {
        invites: [
          { id: "i9x8c7v6b5n4m3l2", email: "new.person@example.com", role: "member", expires_at: 1795853771422, created_at: 1795248971422, state: "pending" },
        ],
        next_cursor: null,
      },
    ],
  },
);
export type InviteList = Static<typeof InviteList>;
