// Who is calling: resolved once per request (or SSH connection) against the database.
import type { RunnerRegistrationRow, RunnerRow, Token, User } from "../../db/schema/index.ts";

/** The caller of a request, after credential resolution. */
export type Principal =
  | { kind: "anonymous" }
  /** A person signed in with a session cookie: every scope, bounded by their roles. */
  | { kind: "session"; user: User; sessionId: string }
  /** An API token: personal (user set) or service/job (user null). */
  | { kind: "token"; token: Token; user: User | null }
  /** A runner registration token (`svcg_`): valid, unspent and unexpired when resolved. */
  | { kind: "runner-registration"; registration: RunnerRegistrationRow }
  /** A registered machine's credential (`svcr_`): a live (not removed) runner. */
  | { kind: "runner"; runner: RunnerRow };

export const ANONYMOUS: Readonly<Principal> = { kind: "anonymous" };

/** The person behind a principal, if any. */
export function personOf(p: Principal): User | null {
  if (p.kind === "session") return p.user;
  if (p.kind === "token") return p.user;
  return null;
}

/**
 * A stable key for caching facts about this caller: the session or token it came with. Every
 * principal kind must have one, so a new kind is a compile error here until it is keyed.
 */
export function principalKey(p: Principal): string {
  switch (p.kind) {
    case "anonymous":
      return "-";
    case "session":
      return `s:${p.user.id}:${p.sessionId}`;
    case "token":
      return `t:${p.token.id}:${p.user?.id ?? ""}`;
    case "runner-registration":
      return `g:${p.registration.id}`;
    case "runner":
      return `r:${p.runner.id}`;
  }
}
