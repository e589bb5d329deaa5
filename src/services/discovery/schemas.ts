// Request and response shapes of the discovery domain: user and org profiles, follows, pins, the
// contribution graph, watching and repository search (SPEC §2.2, §2.8, §2.9, §2.11, §4.2, §8;
// DECISIONS §1 caps, §2 PATCH fields, §3 watching and search). Types are checked here; caps,
// control characters, URLs and addresses are checked by the services (400 with a reason).
import { Type, type Static } from "@sinclair/typebox";
import { NextCursor, NullableString } from "../schemas.ts";

const NullableText = (description: string) => Type.Optional(NullableString({ description }));

export const ProfileLink = Type.Object({
  label: Type.String({ description: "at most 50 characters", examples: ["blog"] }),
  url: Type.String({ description: "an absolute http:// or https:// URL, at most 2,000 characters", examples: ["https://ada.example.com"] }),
});
export type ProfileLink = Static<typeof ProfileLink>;

/** SPEC §2.8: never an address, never a private repository. */
export const UserProfile = Type.Object(
  {
    handle: Type.String(),
    name: Type.String(),
    display_name: NullableString(),
    bio: NullableString(),
    location: NullableString(),
    company: NullableString(),
    pronouns: NullableString(),
    kind: Type.Union([Type.Literal("human"), Type.Literal("agent")]),
    contrib_private_optin: Type.Boolean({ description: "whether private work is counted (never named) on the contribution graph" }),
    profile_repo: NullableString({
      description: "a public repository of the person's namespace shown on their profile; null when unset, or no longer public or present",
    }),
    created_at: Type.Integer({ description: "epoch milliseconds" }),
    links: Type.Array(ProfileLink, { description: "at most 5" }),
    public_repos: Type.Integer({ description: "public repositories of the person's namespace; the same for every caller" }),
  },
  {
    examples: [
      {
        handle: "ada",
        name: "Ada Lovelace",
        display_name: "Ada",
        bio: "Engines, mostly analytical.",
        location: "London",
        company: null,
        pronouns: "she/her",
        kind: "human",
        contrib_private_optin: false,
        profile_repo: "ada",
        created_at: 1795249115366,
        links: [{ label: "blog", url: "https://ada.example.com" }],
        public_repos: 3,
      },
    ],
  },
);
export type UserProfile = Static<typeof UserProfile>;

/** DECISIONS §2: every field optional; absent untouched, null clears; links replaces the list. */
export const UserProfilePatch = Type.Object(
  {
    name: Type.Optional(Type.String({ description: "1-100 characters (cannot be cleared)" })),
    display_name: NullableText("at most 100 characters"),
    bio: NullableText("at most 500 characters; line breaks allowed"),
    location: NullableText("at most 100 characters"),
    company: NullableText("at most 100 characters"),
    pronouns: NullableText("at most 40 characters"),
    links: Type.Optional(Type.Union([Type.Array(ProfileLink, { maxItems: 100 }), Type.Null()], { description: "replaces the list: at most 5; null clears" })),
    contrib_private_optin: Type.Optional(Type.Union([Type.Boolean(), Type.Null()], { description: "null clears (false)" })),
    profile_repo: NullableText("a public repository of your own namespace, by name"),
  },
  { examples: [{ display_name: "Ada", bio: "Engines, mostly analytical.", links: [{ label: "blog", url: "https://ada.example.com" }] }] },
);
export type UserProfilePatch = Static<typeof UserProfilePatch>;

/** SPEC §2.11. */
export const OrgProfile = Type.Object(
  {
    org: Type.String(),
    display_name: NullableString(),
    description: NullableString(),
    location: NullableString(),
    website: NullableString({ description: "an http:// or https:// URL" }),
    contact_email: NullableString(),
    public_repos: Type.Integer(),
  },
  {
    examples: [
      {
        org: "acme",
        display_name: "Acme Corp",
        description: "Widgets since 1949.",
        location: "Phoenix",
        website: "https://acme.example.com",
        contact_email: "hello@acme.example.com",
        public_repos: 12,
      },
    ],
  },
);
export type OrgProfile = Static<typeof OrgProfile>;

export const OrgProfilePatch = Type.Object(
  {
    display_name: NullableText("at most 100 characters"),
    description: NullableText("at most 500 characters"),
    location: NullableText("at most 100 characters"),
    website: NullableText("an absolute http:// or https:// URL"),
    contact_email: NullableText("an email address"),
  },
  { examples: [{ display_name: "Acme Corp", website: "https://acme.example.com" }] },
);
export type OrgProfilePatch = Static<typeof OrgProfilePatch>;

export const FollowCounts = Type.Object(
  {
    followers: Type.Integer(),
    following: Type.Integer(),
    you_follow: Type.Boolean({ description: "whether the caller follows this person; false for anonymous callers" }),
  },
  { examples: [{ followers: 12, following: 3, you_follow: true }] },
);
export type FollowCounts = Static<typeof FollowCounts>;

export const PeopleList = Type.Object(
  {
    people: Type.Array(Type.Object({ handle: Type.String(), display_name: NullableString() }), {
      description: "newest first, at most 100; suspended accounts absent",
    }),
  },
  {
    examples: [
      {
        people: [
          { handle: "grace", display_name: "Grace" },
          { handle: "ada", display_name: null },
        ],
      },
    ],
  },
);
export type PeopleList = Static<typeof PeopleList>;

export const Pin = Type.Object({
  kind: Type.Literal("repo"),
  org: Type.String(),
  name: Type.String(),
  description: NullableString(),
  public: Type.Boolean(),
});
export const PinList = Type.Object(
  { pins: Type.Array(Pin) },
  { examples: [{ pins: [{ kind: "repo", org: "acme", name: "widgets", description: "Widgets for everyone", public: true }] }] },
);
export type PinList = Static<typeof PinList>;

export const PinsPut = Type.Object(
  {
    pins: Type.Array(Type.Object({ org: Type.String(), repo: Type.String(), kind: Type.Optional(Type.String({ description: "only `repo`" })) }), {
      maxItems: 100,
      description: "at most 6, in display order; public repositories only, no duplicates",
    }),
  },
  { examples: [{ pins: [{ org: "acme", repo: "widgets" }] }] },
);
export type PinsPut = Static<typeof PinsPut>;

export const ContributionsQuery = Type.Object({
  from: Type.Optional(Type.String({ description: "YYYY-MM-DD (UTC); default 364 days before `to`", examples: ["2025-01-01"] })),
  to: Type.Optional(Type.String({ description: "YYYY-MM-DD (UTC); default today", examples: ["2025-12-31"] })),
});

/** SPEC §2.9. */
export const ContributionGraph = Type.Object(
  {
    from: Type.String(),
    to: Type.String(),
    total: Type.Integer(),
    private_included: Type.Boolean({ description: "true only when the person opted in and private work is counted in this range" }),
    days: Type.Array(
      Type.Object({
        day: Type.Integer({ description: "weekday, 0 = Sunday … 6 = Saturday (the row of the graph)" }),
        date: Type.String({ description: "YYYY-MM-DD (UTC)" }),
        count: Type.Integer({ description: "commits that day, private ones included when opted in" }),
        repos: Type.Array(Type.Object({ org: Type.String(), name: Type.String(), count: Type.Integer() }), { description: "public repositories only" }),
      }),
      { description: "only days with activity, oldest first" },
    ),
  },
  {
    examples: [
      {
        from: "2025-01-01",
        to: "2025-12-31",
        total: 5,
        private_included: true,
        days: [{ day: 3, date: "2025-03-05", count: 5, repos: [{ org: "acme", name: "widgets", count: 3 }] }],
      },
    ],
  },
);
export type ContributionGraph = Static<typeof ContributionGraph>;

export const SubscriptionPut = Type.Object(
  { level: Type.String({ description: "`all`, `participating` or `ignore`; anything else is 422", examples: ["all"] }) },
  { examples: [{ level: "all" }] },
);
export type SubscriptionPut = Static<typeof SubscriptionPut>;

export const Subscription = Type.Object(
  {
    level: Type.Union([Type.Literal("all"), Type.Literal("participating"), Type.Literal("ignore")]),
    watcher_count: Type.Integer({ description: "subscriptions at level `all`" }),
  },
  { examples: [{ level: "all", watcher_count: 4 }] },
);
export type Subscription = Static<typeof Subscription>;

export const SearchQuery = Type.Object({
  q: Type.Optional(Type.String({ description: "1-200 characters", examples: ["widgets"] })),
  limit: Type.Optional(Type.String({ description: "1-100, default 30", examples: ["30"] })),
  cursor: Type.Optional(Type.String({ description: "next_cursor of the previous page" })),
});

/** SPEC §2.2. */
export const RepoHit = Type.Object({
  id: Type.String(),
  org_id: Type.String(),
  org: Type.String(),
  name: Type.String(),
  description: NullableString(),
  public: Type.Boolean(),
  kind: Type.Union([Type.Literal("native"), Type.Literal("mirror")]),
  created_at: Type.Integer(),
});
export type RepoHit = Static<typeof RepoHit>;

export const SearchResult = Type.Object(
  { hits: Type.Array(RepoHit, { description: "exact name matches, then name prefixes, then word matches; by name within each" }), next_cursor: NextCursor },
  {
    examples: [
      {
        hits: [
          {
            id: "q2ql6avhbnrfrgmz",
            org_id: "zoyuieadj3wexrs6",
            org: "acme",
            name: "widgets",
            description: "Widgets for everyone",
            public: true,
            kind: "native",
            created_at: 1795249115366,
          },
        ],
        next_cursor: null,
      },
    ],
  },
);
export type SearchResult = Static<typeof SearchResult>;
