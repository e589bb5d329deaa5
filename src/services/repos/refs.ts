// Refs API (DECISIONS §3): list, compare-and-swap PUT, DELETE with ?expected=.
import { checkRefFormat } from "../../git/ref-name.ts";
import { isAncestor } from "../../git/walk.ts";
import { ZERO_OID, type Oid } from "../../git/types.ts";
import { Conflict, Forbidden, Invalid, NotFound, Unprocessable } from "../../errors.ts";
import { need, type RepoTarget } from "../access/target.ts";
import type { Ctx } from "../context.ts";
import { openSnapshot, readRef, readRefs } from "../git/snapshot.ts";
import { firstUnreachableNamed } from "../git/reach.ts";
import { personOf } from "../access/principal.ts";
import { forbidsForcePush, refPolicy, withRefusals } from "../git/policy.ts";
import { lockRefusals } from "../git/lfs-locks.ts";
import { publish, refusalReason, type RefOutcome } from "../git/publish.ts";
import type { Ref, RefList, RefPut } from "./schemas.ts";

/** GET …/refs */
export async function listRefs(ctx: Ctx, t: RepoTarget): Promise<RefList> {
  need(t, "repo:read");
  const repo = t.repo;
  return { refs: (await readRefs(ctx.db.read, repo.id)).map((r) => ({ name: r.name, target: r.oid })) };
}

function checkName(name: string): void {
  if (!name.startsWith("refs/") || !checkRefFormat(name)) throw Invalid(`invalid ref name ${JSON.stringify(name)}`);
}

/**
 * Answers a ref the publish step did not apply: a protection is 403, a name clash 409 naming the
 * existing ref, a deleted repository 404, anything else a 409 with where the ref is now.
 */
async function throwUnlessApplied(ctx: Ctx, repoId: string, name: string, outcome: RefOutcome): Promise<void> {
  switch (outcome.kind) {
    case "applied":
      return;
    case "policy":
      throw Forbidden(outcome.message);
    case "clash":
      throw Conflict(refusalReason(name, outcome)!, { current: null });
    case "repo-deleted":
      throw NotFound("repository not found");
    case "moved":
      throw Conflict(`ref ${name} is not where you expected`, { current: outcome.current });
    case "stale":
    case "missing":
    case "atomic-failed":
      throw Conflict(`ref ${name} is not where you expected`, { current: await readRef(ctx.db.read, repoId, name) });
  }
}

/** PUT …/refs/{name} `{ target, expected? }`: expected null = must not exist; omitted = unconditional. */
export async function putRef(ctx: Ctx, t: RepoTarget, name: string, body: RefPut): Promise<Ref> {
  need(t, "repo:write");
  const { org, repo, actor } = t;
  checkName(name);
  const hasExpected = body.expected !== undefined;
  const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
  // A fork may point a ref only at what it reaches (services/git/reach.ts): the same answer as a missing object.
  const named = await firstUnreachableNamed(snapshot, repo.id, { tips: [body.target] });
  const header = named ? null : await snapshot.objects.readHeader(body.target);
  const allowed = name.startsWith("refs/tags/") ? header?.type === "commit" || header?.type === "tag" : header?.type === "commit";
  if (!header) throw Unprocessable(`object ${body.target} does not exist in this repository`);
  if (!allowed)
    throw Unprocessable(
      `object ${body.target} is a ${header.type}; ${name.startsWith("refs/tags/") ? "a tag needs a commit or tag object" : "a ref needs a commit"}`,
    );
  const current = snapshot.refs.find((r) => r.name === name)?.oid ?? null;
  const old: Oid | null = hasExpected ? (body.expected ?? null) : current;
  if (hasExpected && old !== current) throw Conflict(`ref ${name} is not where you expected`, { current });
  const fastForward =
    old && header.type === "commit" && (await forbidsForcePush(ctx, repo, name)) ? await isAncestor(snapshot.objects, old, body.target) : undefined;
  const update = { ref: name, oldOid: old ?? ZERO_OID, newOid: body.target };
  // LFS locks of others refuse moving a branch onto a commit that changes their paths, as a push would.
  const locked = await lockRefusals(ctx, repo, snapshot.refs, snapshot.objects, [update], personOf(actor)?.id ?? null);
  const results = await publish(ctx, org, repo, [{ ...update, fastForward }], null, {
    atomic: true,
    event: { via: "api" },
    actorUserId: personOf(actor)?.id ?? null,
    policy: withRefusals(refPolicy(repo, "ref-api"), locked),
  });
  await throwUnlessApplied(ctx, repo.id, name, results.get(name)!);
  return { name, target: body.target };
}

/** DELETE …/refs/{name}?expected=SHA (the route's schema checks the sha's format). */
export async function deleteRef(ctx: Ctx, t: RepoTarget, name: string, expected: string | undefined): Promise<void> {
  need(t, "repo:write");
  const { org, repo, actor } = t;
  checkName(name);
  const current = await readRef(ctx.db.read, repo.id, name);
  if (current === null) throw Conflict(`ref ${name} does not exist`, { current: null });
  if (expected !== undefined && expected !== current) throw Conflict(`ref ${name} is not where you expected`, { current });
  const results = await publish(ctx, org, repo, [{ ref: name, oldOid: expected ?? current, newOid: ZERO_OID }], null, {
    atomic: true,
    event: { via: "api" },
    actorUserId: personOf(actor)?.id ?? null,
    policy: refPolicy(repo, "ref-api"),
  });
  await throwUnlessApplied(ctx, repo.id, name, results.get(name)!);
}
