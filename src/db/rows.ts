// Small helpers over the rows an awaited drizzle query answers (portable across dialects).

/**
 * The first row, or undefined: what bun-sqlite's synchronous `.get()` answered. Pair it with
 * `.limit(1)` on a select (`one(await q.select().from(t).where(…).limit(1))`).
 */
export function one<T>(rows: readonly T[]): T | undefined {
  return rows[0];
}
