// What the repository layout needs to know about the viewer (issue 33): whether they watch the
// repository (the Watch/Unwatch button) and whether they may ask a mirror to sync (Sync now).
import { may, type RepoTarget } from "../access/target.ts";
import type { Ctx } from "../context.ts";
import { watchLevel, type WatchLevel } from "../discovery/watching.ts";

/** The viewer's side of the layout. */
export interface ViewerFacts {
  /** Their watch level, null when not watching; undefined for anyone but a signed-in person. */
  watching?: WatchLevel | null;
  /** A mirror whose sync they may request (`repo:sync`, the API's rule). */
  canSync?: boolean;
}

/** The viewer's facts for a readable repository (one small query for a signed-in person, none otherwise). */
export async function viewerFacts(ctx: Ctx, t: RepoTarget): Promise<ViewerFacts> {
  const watching = await watchLevel(ctx, t);
  return { watching, canSync: t.repo.kind === "mirror" && may(t, "repo:sync") };
}
