// People, their addresses, sessions and credentials (tokens, SSH keys), and rate-limit counters.
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
import { orgs } from "./orgs.ts";
import { repos } from "./repos.ts";

export const users = sqliteTable(
  "users",
  {
    id: id(),
    handle: text("handle").notNull(),
    email: text("email").notNull(),
    name: text("name").notNull(),
    displayName: text("display_name"),
    bio: text("bio"),
    location: text("location"),
    company: text("company"),
    pronouns: text("pronouns"),
    links: text("links", { mode: "json" }).$type<{ label: string; url: string }[]>().notNull().default(sql`'[]'`),
    kind: text("kind", { enum: ["human", "agent"] })
      .notNull()
      .default("human"),
    contribPrivateOptin: integer("contrib_private_optin", { mode: "boolean" }).notNull().default(false),
    profileRepo: text("profile_repo"),
    /**
     * The uploaded avatar (issue 33): its object-store key, `avatars/{user id}/{sha256}.{png|jpg|webp}`
     * (the hash makes the address change with the picture, so it can be cached forever). Null: the
     * generated identicon.
     */
    avatar: text("avatar"),
    passwordHash: text("password_hash").notNull(),
    emailVerifiedAt: integer("email_verified_at"),
    disabledAt: integer("disabled_at"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("users_handle_uq").on(sql`lower(${t.handle})`), uniqueIndex("users_email_uq").on(sql`lower(${t.email})`)],
);

export const emails = sqliteTable(
  "emails",
  {
    id: id(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    address: text("address").notNull(),
    verifiedAt: integer("verified_at"),
    private: integer("private", { mode: "boolean" }).notNull().default(true),
    primary: integer("primary", { mode: "boolean" }).notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("emails_address_uq").on(sql`lower(${t.address})`), index("emails_user_idx").on(t.userId)],
);

export const emailTokens = sqliteTable(
  "email_tokens",
  {
    id: id(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    purpose: text("purpose", { enum: ["verify", "reset", "claim"] }).notNull(),
    address: text("address").notNull(),
    secretHash: text("secret_hash").notNull(),
    expiresAt: integer("expires_at").notNull(),
    spentAt: integer("spent_at"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("email_tokens_hash_uq").on(t.secretHash), index("email_tokens_user_idx").on(t.userId, t.purpose)],
);

export const sessions = sqliteTable(
  "sessions",
  {
    id: id(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    secretHash: text("secret_hash").notNull(),
    expiresAt: integer("expires_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("sessions_hash_uq").on(t.secretHash), index("sessions_user_idx").on(t.userId)],
);

export const tokens = sqliteTable(
  "tokens",
  {
    id: id(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["personal", "service", "job"] }).notNull(),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    label: text("label").notNull(),
    repoId: text("repo_id").references(() => repos.id, { onDelete: "cascade" }),
    secretHash: text("secret_hash").notNull(),
    lastUsedAt: integer("last_used_at"),
    createdAt: createdAt(),
  },
  (t) => [index("tokens_org_idx").on(t.orgId)],
);

export const sshKeys = sqliteTable(
  "ssh_keys",
  {
    id: id(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    tokenId: text("token_id").references(() => tokens.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["personal", "deploy"] }).notNull(),
    label: text("label").notNull(),
    publicKey: text("public_key").notNull(),
    fingerprint: text("fingerprint").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("ssh_keys_fingerprint_uq").on(t.fingerprint)],
);

export const rateEvents = sqliteTable(
  "rate_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    bucket: text("bucket").notNull(),
    address: text("address").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("rate_events_bucket_idx").on(t.bucket, t.createdAt), index("rate_events_address_idx").on(t.bucket, t.address, t.createdAt)],
);
