// Request and response shapes of the people domain: sign-in, signup and recovery, invitation
// acceptance, a person's addresses, API tokens and SSH keys (SPEC §2.10, §4.2, §4.3, §4.6;
// DECISIONS §2). The routes validate and document with them; the services take their `Static<>`
// types. Bodies of the uniform-answer routes (login, resend-verification, forgot-password,
// verify, reset-password, invite preview) are checked by the services, not the router, because
// the spec gives those one answer whatever arrives (SPEC §7).
import { Type, type Static } from "@sinclair/typebox";
import { NextCursor, NullableString } from "../schemas.ts";

const Millis = (description = "epoch milliseconds") => Type.Integer({ description });
const NullableMillis = (description = "epoch milliseconds, or null") => Type.Union([Type.Integer(), Type.Null()], { description });

/** An org role. */
export const RoleName = Type.Union([Type.Literal("viewer"), Type.Literal("member"), Type.Literal("admin"), Type.Literal("owner")]);

// — Sign-in, signup, recovery

export const LoginRequest = Type.Object(
  { email: Type.String({ examples: ["ada@example.com"] }), password: Type.String({ examples: ["correct horse battery staple"] }) },
  { description: "any other body, field or type answers the same 401 as a wrong password" },
);
export type LoginRequest = Static<typeof LoginRequest>;

/** The account body of login, me, verify, reset-password and accept-invite. */
export const Account = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    name: Type.String(),
    handle: Type.String(),
    created_at: Millis(),
    orgs: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), role: RoleName }), { description: "every org the person is in, by name" }),
  },
  {
    examples: [
      {
        id: "6mk7hlwccg2wkryp",
        email: "ada@example.com",
        name: "Ada",
        handle: "ada",
        created_at: 1795249115366,
        orgs: [
          { id: "q2ql6avhbnrfrgmz", name: "acme", role: "owner" },
          { id: "zoyuieadj3wexrs6", name: "ada", role: "owner" },
        ],
      },
    ],
  },
);
export type Account = Static<typeof Account>;

/** The one answer of signup, resend-verification and forgot-password, whatever happened. */
export const Accepted = Type.Object(
  { status: Type.Literal("accepted"), detail: Type.String() },
  { examples: [{ status: "accepted", detail: "If this address can be used, a confirmation link is on its way to it. The link works once, for one day." }] },
);
export type Accepted = Static<typeof Accepted>;

export const SignupRequest = Type.Object({
  email: Type.String({ examples: ["grace@example.com"] }),
  name: Type.String({ description: "1-100 characters, no control characters", examples: ["Grace"] }),
  password: Type.String({ description: "at least 12 characters", examples: ["a long enough password"] }),
  handle: Type.String({ description: "a namespace name: 1-39 of a-z 0-9 -", examples: ["grace"] }),
});
export type SignupRequest = Static<typeof SignupRequest>;

/** `{ email }`: resend-verification, forgot-password, and adding an address. */
export const EmailRequest = Type.Object({ email: Type.String({ examples: ["ada@example.com"] }) });
export type EmailRequest = Static<typeof EmailRequest>;

/** `{ token }` of a mailed link: `svcv_` (verify) or `svce_` (address claim). */
export const LinkRequest = Type.Object({
  token: Type.String({ description: "the token of the mailed link", examples: ["svcv_q3v5d7kz2mhp4xw6b8n3c5f7g2j4k6m8"] }),
});
export type LinkRequest = Static<typeof LinkRequest>;

export const ResetRequest = Type.Object({
  token: Type.String({ description: "the svcrs_ token of the mailed link", examples: ["svcrs_q3v5d7kz2mhp4xw6b8n3c5f7g2j4k6m8"] }),
  new_password: Type.String({ description: "at least 12 characters", examples: ["a brand new password"] }),
});
export type ResetRequest = Static<typeof ResetRequest>;

// — Invitations, from the invitee's side

export const InvitePreviewRequest = Type.Object({
  invite: Type.String({ description: "the svcinv_ token", examples: ["svcinv_s6gycbuxmblczzra5bsdnl7gyx2aslvh"] }),
});
export type InvitePreviewRequest = Static<typeof InvitePreviewRequest>;

export const InvitePreview = Type.Object(
  { org: Type.String(), role: RoleName, email: Type.String(), expires_at: Millis() },
  { examples: [{ org: "acme", role: "member", email: "lin@example.com", expires_at: 1795862045722 }] },
);
export type InvitePreview = Static<typeof InvitePreview>;

export const AcceptInviteRequest = Type.Object({
  invite: Type.String({ description: "the svcinv_ token" }),
  name: Type.String({ description: "1-100 characters" }),
  password: Type.String({ description: "at least 12 characters; the existing account's password when one holds the address" }),
  handle: Type.Optional(NullableString({ description: "defaults to a free handle derived from the address" })),
});
export type AcceptInviteRequest = Static<typeof AcceptInviteRequest>;

// — A person's addresses

export const EmailRecord = Type.Object(
  {
    address: Type.String(),
    verified_at: NullableMillis("when the address was proved, or null"),
    private: Type.Boolean(),
    primary: Type.Boolean({ description: "the sign-in address" }),
    created_at: Millis(),
  },
  { examples: [{ address: "ada.work@example.com", verified_at: 1795249115366, private: true, primary: true, created_at: 1795249000000 }] },
);
export type EmailRecord = Static<typeof EmailRecord>;

export const EmailList = Type.Object(
  { emails: Type.Array(EmailRecord) },
  { examples: [{ emails: [{ address: "ada@example.com", verified_at: 1795249115366, private: true, primary: true, created_at: 1795249115366 }] }] },
);
export type EmailList = Static<typeof EmailList>;

/** PATCH of one address: only `{ primary: true }` (the sign-in address moves to it). */
export const EmailPatch = Type.Object(
  { primary: Type.Optional(Type.Boolean({ description: "true makes this proved address the sign-in address" })) },
  { examples: [{ primary: true }] },
);
export type EmailPatch = Static<typeof EmailPatch>;

export const EmailPending = Type.Object(
  { address: Type.String(), status: Type.Literal("pending"), detail: Type.String() },
  { examples: [{ address: "ada.work@example.com", status: "pending", detail: "A confirmation link was mailed to the address. It works once, for one day." }] },
);
export type EmailPending = Static<typeof EmailPending>;

export const EmailVerified = Type.Object(
  { address: Type.String(), verified: Type.Literal(true) },
  { examples: [{ address: "ada.work@example.com", verified: true }] },
);
export type EmailVerified = Static<typeof EmailVerified>;

// — API tokens

export const TokenMint = Type.Object({
  scopes: Type.Array(Type.String(), {
    description: "non-empty; each one of repo:read, repo:write, org:read, org:admin (another value answers 422)",
    examples: [["repo:read"]],
  }),
  label: Type.String({ description: "1-100 characters", examples: ["ci"] }),
  repo: Type.Optional(NullableString({ description: "bind the token to this repository of the org" })),
  kind: Type.Optional(
    Type.String({ description: "personal (default for a person) or service (default for a service token; needs org:admin); another value answers 422" }),
  ),
});
export type TokenMint = Static<typeof TokenMint>;

const tokenFields = {
  id: Type.String(),
  kind: Type.Union([Type.Literal("personal"), Type.Literal("service")]),
  scopes: Type.Array(Type.String()),
  label: Type.String(),
  repo: NullableString({ description: "the repository the token is bound to, or null" }),
  created_at: Millis(),
  last_used_at: NullableMillis("refreshed at most every 10 seconds; null when never used"),
} as const;
const tokenExample = {
  id: "c3poufbz3hdeqayl",
  kind: "service",
  scopes: ["repo:read"],
  label: "ci",
  repo: "widgets",
  created_at: 1795249117556,
  last_used_at: null,
} as const;

/** A token as listed: never the secret. */
export const Token = Type.Object(tokenFields, { examples: [tokenExample] });
export type Token = Static<typeof Token>;

/** A token as minted: the secret, shown this once. */
export const MintedToken = Type.Object(
  { ...tokenFields, token: Type.String({ description: "svc_<id>_<secret>; only its SHA-256 is stored" }) },
  { examples: [{ ...tokenExample, token: "svc_c3poufbz3hdeqayl_y6s7gybhxout5xikva3oli3h55w47bxv" }] },
);
export type MintedToken = Static<typeof MintedToken>;

export const TokenList = Type.Object({ tokens: Type.Array(Token), next_cursor: NextCursor }, { examples: [{ tokens: [tokenExample], next_cursor: null }] });
export type TokenList = Static<typeof TokenList>;

// — SSH keys

export const SshKeyCreate = Type.Object({
  public_key: Type.String({
    description: "an OpenSSH public key line: ed25519, ECDSA P-256/384/521, or RSA of at least 2048 bits",
    examples: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx0b3JlbSBpcHN1bSBkb2xvciBzaXQgYW1ldCBjb25z ada@laptop"],
  }),
  label: Type.String({ description: "1-100 characters", examples: ["laptop"] }),
  token_id: Type.Optional(NullableString({ description: "makes a deploy key acting as this token of the org (org admins)" })),
});
export type SshKeyCreate = Static<typeof SshKeyCreate>;

const sshKeyExample = {
  id: "w2zq7m4k9x3p5r8t",
  kind: "personal",
  label: "laptop",
  fingerprint: "SHA256:nPoeb4TtUhcXjC7lWhMaRfTtLQ+y1eRJp6oBvNgQFp0",
  token_id: null,
  created_at: 1795249117556,
} as const;

export const SshKey = Type.Object(
  {
    id: Type.String(),
    kind: Type.Union([Type.Literal("personal"), Type.Literal("deploy")]),
    label: Type.String(),
    fingerprint: Type.String({ description: "SHA256:<base64 without padding>, as ssh-keygen -lf prints it" }),
    token_id: NullableString({ description: "the token a deploy key acts as; null for a personal key" }),
    created_at: Millis(),
  },
  { examples: [sshKeyExample] },
);
export type SshKey = Static<typeof SshKey>;

export const SshKeyList = Type.Object(
  { keys: Type.Array(SshKey), next_cursor: NextCursor },
  { examples: [{ keys: [sshKeyExample], next_cursor: "WzE3OTUyNDkxMTc1NTYsIncyenE3bTRrOXgzcDVyOHQiXQ" }] },
);
export type SshKeyList = Static<typeof SshKeyList>;

// — Avatars (issue 33)

/** PUT /v1/user/avatar: the picture's address (its `?v=` changes with the picture) and what it was recognised as. */
export const AvatarBody = Type.Object(
  {
    url: Type.String({ description: "where the picture is served; cacheable for good" }),
    type: Type.Union([Type.Literal("image/png"), Type.Literal("image/jpeg"), Type.Literal("image/webp")]),
    width: Type.Integer(),
    height: Type.Integer(),
    size: Type.Integer({ description: "bytes" }),
  },
  { examples: [{ url: "https://git.example.com/avatars/ada?v=3f7a09c2d41b8e56", type: "image/png", width: 256, height: 256, size: 48213 }] },
);
