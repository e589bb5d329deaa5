// Rate limits on mail-sending routes, counted per address and globally, never per source address
// (SPEC §8; DECISIONS §1): a shared office or VPN never locks everyone out, and a botnet is still capped.
import type { Tx } from "../../db/database.ts";
import { now } from "../context.ts";
import * as store from "./store.ts";

const WINDOW_MS = 3600_000;

/** Records one event for `address` in `bucket` if both limits allow it; false when limited. Call inside the write's transaction. */
export async function takeRateSlot(tx: Tx, bucket: string, address: string, limits: { perAddress: number; global: number }): Promise<boolean> {
  const t = now();
  const since = t - WINDOW_MS;
  const key = address.toLowerCase();
  await store.pruneRateEvents(tx, bucket, since);
  const counts = await store.rateEventCounts(tx, bucket, key, since);
  if (counts.address >= limits.perAddress || counts.total >= limits.global) return false;
  await store.insertRateEvent(tx, bucket, key, t);
  return true;
}
