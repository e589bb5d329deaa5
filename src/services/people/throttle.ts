// Rate limits where guessing pays: sign-in per source address and per account, and unusable
// credentials per source address (README "Operations: limits"; docs/architecture.md "Rate limits").
//
// Each limit is a number of failures per hour and a doubling delay, never a lockout: failures
// are forgotten steadily (the allowance per hour), and while a key is over its allowance its
// next attempt must wait 1 s after its last failure, then 2 s, 4 s … up to the configured
// maximum. An attempt that comes sooner is answered 429 with Retry-After and is not even checked
// (no password hash computed). A shared address under the allowance (an office making the usual
// typing mistakes) never waits.
//
// Why the owner cannot be locked out by someone else:
// - per-source counters only slow the source that failed (an attacker slows only itself, and
//   those who share its address: a NAT, or every client behind a proxy without SVC_TRUST_PROXY);
// - the per-account counter ignores sources the account has signed in from before (remembered
//   in memory), so the owner's usual machines keep working while someone elsewhere guesses;
// - from a new source during an attack the owner waits at most the maximum delay, or signs in at
//   once through the mailed password reset link, which no sign-in limit touches.
// Counters live in process memory, bounded in size; a restart forgets them.
import { AppError, RateLimited } from "../../errors.ts";
import type { Limits } from "../../config.ts";
import { now, type Ctx } from "../context.ts";

/** The delay after the first failure past the allowance; it doubles with each further failure. */
const BASE_DELAY_MS = 1000;
/** Keys each counter keeps at most (the least recently failed are forgotten first). */
const CAPACITY = 100_000;
/** Sources remembered per account as places it signed in from. */
const KNOWN_SOURCES_PER_ACCOUNT = 16;
const HOUR_MS = 3600_000;

/**
 * Failure counters per key that drain at `perHour` failures an hour; past `perHour` pending
 * failures, attempts are spaced by a doubling delay (at most `maxMs`). Bounded in memory.
 */
export class Backoff {
  private readonly entries = new Map<string, { failures: number; last: number }>();

  constructor(private readonly opts: { perHour: number; maxMs: number; capacity?: number }) {}

  /** Failures of `key` not yet forgotten at `t`. */
  private pending(key: string, t: number): { failures: number; last: number } | null {
    const e = this.entries.get(key);
    if (!e) return null;
    const failures = e.failures - (Math.max(0, t - e.last) * this.opts.perHour) / HOUR_MS;
    if (failures <= 0) {
      this.entries.delete(key);
      return null;
    }
    return { failures, last: e.last };
  }

  /** Milliseconds `key` must still wait before its next attempt; 0 to go ahead. */
  wait(key: string, t: number): number {
    const e = this.pending(key, t);
    // After `perHour` failures in a row the next attempt waits; each hour/perHour frees one more.
    if (!e || e.failures <= this.opts.perHour - 1) return 0;
    const over = Math.min(Math.max(0, Math.ceil(e.failures) - this.opts.perHour), 40);
    return Math.max(0, e.last + Math.min(this.opts.maxMs, BASE_DELAY_MS * 2 ** over) - t);
  }

  /** Records one failure of `key` at `t`. */
  fail(key: string, t: number): void {
    const failures = (this.pending(key, t)?.failures ?? 0) + 1;
    this.entries.delete(key);
    this.entries.set(key, { failures, last: t });
    if (this.entries.size > (this.opts.capacity ?? CAPACITY)) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Forgets `key` (after a success). */
  clear(key: string): void {
    this.entries.delete(key);
  }
}

/** The limiters of one context (`ctx.throttles`). */
export interface Limiters {
  loginSource: Backoff;
  loginAccount: Backoff;
  credentials: Backoff;
  /** Calls per person of POST …/changes/{number}/runs (each call counts, not only failures). */
  changeRuns: Backoff;
  /** Per account: the sources it signed in from, most recent last. */
  known: Map<string, string[]>;
}

/** The limiters of a context under `limits` (made once by src/runtime.ts). */
export function newLimiters(limits: Limits): Limiters {
  return {
    loginSource: new Backoff({ perHour: limits.loginPerSource, maxMs: limits.backoffMaxMs }),
    loginAccount: new Backoff({ perHour: limits.loginPerAccount, maxMs: limits.backoffMaxMs }),
    credentials: new Backoff({ perHour: limits.credentialFailuresPerSource, maxMs: limits.backoffMaxMs }),
    changeRuns: new Backoff({ perHour: limits.changeRunsPerPerson, maxMs: limits.backoffMaxMs }),
    known: new Map(),
  };
}

function limiters(ctx: Ctx): Limiters {
  return ctx.throttles;
}

/**
 * The key a source address is counted under: IPv4 as is, IPv6 by its /64 (one subscriber's
 * network, which an attacker can otherwise walk through address by address).
 */
export function sourceKey(address: string): string {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4) return v4[1]!;
  if (!address.includes(":")) return address;
  const [head = "", tail = ""] = address.toLowerCase().split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = address.includes("::") ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

function accountKey(address: string): string {
  return address.trim().toLowerCase().slice(0, 320);
}

function refuse(waitMs: number, what: string): AppError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new RateLimited(`too many ${what}; try again in ${seconds} second${seconds === 1 ? "" : "s"}`, seconds);
}

/** Throws 429 when a sign-in from `source` for `address` must wait; call before checking the password. */
export function checkLoginAllowed(ctx: Ctx, source: string, address: string): void {
  const l = limiters(ctx);
  const t = now();
  const src = sourceKey(source);
  const account = accountKey(address);
  const familiar = l.known.get(account)?.includes(src) ?? false;
  const wait = Math.max(l.loginSource.wait(src, t), familiar || !account ? 0 : l.loginAccount.wait(account, t));
  if (wait > 0) throw refuse(wait, "failed sign-in attempts (a password reset link signs you in at once)");
}

/** Counts a failed sign-in against the source, and against the account unless the source is familiar to it. */
export function noteLoginFailed(ctx: Ctx, source: string, address: string): void {
  const l = limiters(ctx);
  const t = now();
  const src = sourceKey(source);
  const account = accountKey(address);
  l.loginSource.fail(src, t);
  // A body without an address guesses no account's password (it still costs the source).
  if (account && !(l.known.get(account)?.includes(src) ?? false)) l.loginAccount.fail(account, t);
}

/** Remembers `source` as familiar to the account and clears the account's counter. */
export function noteLoginSucceeded(ctx: Ctx, source: string, address: string): void {
  const l = limiters(ctx);
  const src = sourceKey(source);
  const account = accountKey(address);
  const list = (l.known.get(account) ?? []).filter((s) => s !== src);
  list.push(src);
  if (list.length > KNOWN_SOURCES_PER_ACCOUNT) list.shift();
  l.known.delete(account);
  l.known.set(account, list);
  if (l.known.size > CAPACITY) l.known.delete(l.known.keys().next().value!);
  l.loginAccount.clear(account);
}

/**
 * Counts one call of an expensive request `key` may repeat (every call, not only failures) under
 * `which`'s allowance: past it, 429 with Retry-After until the doubling wait has passed.
 */
export function countRequest(ctx: Ctx, which: "changeRuns", key: string, what: string): void {
  const l = limiters(ctx)[which];
  const t = now();
  const wait = l.wait(key, t);
  if (wait > 0) throw refuse(wait, what);
  l.fail(key, t);
}

/**
 * Resolves a presented credential (a bearer or Basic token, a registration token) under the
 * per-source limit: a source that has presented too many unusable credentials gets 429 before
 * the next is looked at, and each 401 `resolve` throws or rejects with counts as one failure.
 */
export function guardPresentation<T>(ctx: Ctx, source: string | undefined, resolve: () => T | Promise<T>): T | Promise<T> {
  const l = limiters(ctx);
  const src = sourceKey(source ?? "unknown");
  const wait = l.credentials.wait(src, now());
  if (wait > 0) throw refuse(wait, "unusable credentials from this address");
  const counted = (error: unknown): never => {
    if (error instanceof AppError && error.code === "unauthenticated") l.credentials.fail(src, now());
    throw error;
  };
  let out: T | Promise<T>;
  try {
    out = resolve();
  } catch (error) {
    return counted(error);
  }
  return out instanceof Promise ? out.catch(counted) : out;
}
