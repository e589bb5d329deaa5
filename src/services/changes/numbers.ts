// The one number sequence of a repository's changes and issues (DECISIONS §5 "Issues": `#N` names
// one thing), for the domains above changes (issues) that open numbered threads.
import type { Tx } from "../../db/database.ts";
import * as store from "./store.ts";

/** The next number of repository `repoId`'s changes and issues, inside the creating transaction (race-free on both databases). */
export function nextThreadNumber(tx: Tx, repoId: string): Promise<number> {
  return store.nextNumber(tx, repoId);
}
