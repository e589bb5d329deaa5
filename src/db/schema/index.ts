// The metadata schema for the whole service, one file per domain. Git objects live in object
// storage; everything else (refs, the live pack list, people, credentials, events, durable jobs)
// lives here.
export * from "./people.ts";
export * from "./orgs.ts";
export * from "./repos.ts";
export * from "./git.ts";
export * from "./jobs.ts";
export * from "./mail.ts";
export * from "./hooks.ts";
export * from "./metrics.ts";
export * from "./discovery.ts";
export * from "./ci.ts";
export * from "./changes.ts";
export * from "./billing.ts";
export * from "./nodes.ts";
export * from "./notifications.ts";
export * from "./lfs.ts";
export * from "./issues.ts";

import { orgs, memberships } from "./orgs.ts";
import { tokens, users } from "./people.ts";
import { repos } from "./repos.ts";
import { runnerRegistrationTokens, runners } from "./ci.ts";

export type User = typeof users.$inferSelect;
export type Org = typeof orgs.$inferSelect;
export type Repo = typeof repos.$inferSelect;
export type Token = typeof tokens.$inferSelect;
export type Membership = typeof memberships.$inferSelect;
export type Role = Membership["role"];
export type RunnerRow = typeof runners.$inferSelect;
export type RunnerRegistrationRow = typeof runnerRegistrationTokens.$inferSelect;
