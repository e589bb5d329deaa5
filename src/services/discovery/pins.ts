// Pinned repositories of a profile (SPEC §4.2, §8): at most six public repositories, kind `repo`,
// no duplicates. Each is resolved through the caller's own visibility, so a repository the caller
// may not see is refused exactly like one that does not exist.
import { Invalid } from "../../errors.ts";
import { authorizeAccount, decide, loadFacts } from "../access/access.ts";
import { findOrg, findRepo } from "../access/lookup.ts";
import type { Principal } from "../access/principal.ts";
import type { Ctx } from "../context.ts";
import { requireLiveUser } from "./profiles.ts";
import type { PinList, PinsPut } from "./schemas.ts";
import * as store from "./store.ts";

/** SPEC §8: pins per profile. */
export const MAX_PINS = 6;

/** GET /v1/users/{handle}/pins: pins that are public now (made private or deleted: absent). */
export async function listPins(ctx: Ctx, handle: string): Promise<PinList> {
  const user = await requireLiveUser(ctx, handle);
  const rows = await store.publicPins(ctx.db.read, user.id);
  return { pins: rows.map((r) => ({ kind: "repo" as const, org: r.org, name: r.name, description: r.description, public: true })) };
}

/** PUT /v1/users/{handle}/pins: replaces the list; 400 for every pin rule, nothing changed. */
export async function putPins(ctx: Ctx, actor: Principal, handle: string, input: PinsPut): Promise<PinList> {
  const user = await requireLiveUser(ctx, handle);
  authorizeAccount(actor, { kind: "account:self", userId: user.id });
  if (input.pins.length > MAX_PINS) throw Invalid(`a profile has at most ${MAX_PINS} pins`);
  const ids: string[] = [];
  for (const [i, pin] of input.pins.entries()) {
    if (pin.kind !== undefined && pin.kind !== "repo") throw Invalid(`pins[${i}]: only kind repo can be pinned`);
    const org = await findOrg(ctx, pin.org);
    const repo = org ? await findRepo(ctx, org.id, pin.repo) : null;
    // Why: a repository the caller cannot read answers like a missing one, so pins never probe existence.
    if (!org || !repo || !decide(await loadFacts(ctx, actor, org, repo), "repo:read").allow) throw Invalid(`pins[${i}]: no repository ${pin.org}/${pin.repo}`);
    if (!repo.public) throw Invalid(`pins[${i}]: ${org.name}/${repo.name} is private; only public repositories can be pinned`);
    if (ids.includes(repo.id)) throw Invalid(`pins[${i}]: ${org.name}/${repo.name} is pinned twice`);
    ids.push(repo.id);
  }
  await ctx.db.transaction((tx) => store.replacePins(tx, user.id, ids));
  return listPins(ctx, user.handle);
}
