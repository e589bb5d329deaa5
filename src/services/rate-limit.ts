// Rate limits on mail-sending routes, counted per address and globally, never per source address
// (SPEC §8; DECISIONS §1): a shared office or VPN never locks everyone out, and a botnet is still capped.
import { and, eq, gte, lt, sql } from "drizzle-orm";
import { rateEvents } from "../db/schema/index.ts";
import type { DbOrTx } from "../db/client.ts";
import { now } from "./context.ts";

const WINDOW_MS = 3600_000;

/** Records one event for `address` in `bucket` if both limits allow it; false when limited. */
export function takeRateSlot(tx: DbOrTx, bucket: string, address: string, limits: { perAddress: number; global: number }): boolean {
  const t = now();
  const since = t - WINDOW_MS;
  const key = address.toLowerCase();
  tx.delete(rateEvents).where(and(eq(rateEvents.bucket, bucket), lt(rateEvents.createdAt, since))).run();
  const count = (where: ReturnType<typeof and>) => tx.select({ n: sql<number>`count(*)` }).from(rateEvents).where(where).get()!.n;
  if (count(and(eq(rateEvents.bucket, bucket), eq(rateEvents.address, key), gte(rateEvents.createdAt, since))) >= limits.perAddress) return false;
  if (count(and(eq(rateEvents.bucket, bucket), gte(rateEvents.createdAt, since))) >= limits.global) return false;
  tx.insert(rateEvents).values({ bucket, address: key, createdAt: t }).run();
  return true;
}
