// Landing rules on reviews (issue 28), black-box: protections requiring approvals, the land
// request's 409 naming what is missing, the lander's verdict `approval`, stale approvals after a
// git push, and stacks. Landings go through the real lander; C git checks the target afterwards.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { commitFiles, initRepo, lsRemote } from "../../helpers/git.ts";
import { castReviewers, type Cast } from "../../helpers/cast.ts";
import { newRepo, startWorld, type TestRepo, type World } from "../../helpers/content.ts";
import { until } from "../ci/helpers.ts";
import { client } from "../../helpers/server.ts";
import { getPage, textOf } from "../../helpers/web.ts";

const ORG = "appr";
let w: World;

const people: Record<string, Cast> = {};

beforeAll(async () => {
  w = await startWorld(ORG);
  Object.assign(people, await castReviewers(w.server, ORG));
});
afterAll(async () => w.close());

const as = (who: Cast) => (who.handle === "cy" ? client(w.server, { cookie: who.cookie }) : client(w.server, { token: who.token }));

/** A repository with main, a local clone, and a helper that pushes a branch and opens a change from it as ada. */
async function seeded(name: string) {
  const repo = await newRepo(w, name);
  const dir = await initRepo(w.g, name);
  await w.g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  const main = await commitFiles(w.g, dir, { "a.txt": "a\n" }, "seed");
  await w.g.ok(["push", "-q", repo.url, "main"], { cwd: dir });
  const changes = `${repo.api.base}/changes`;
  /** Pushes `branch` (from `from`) with `files` and, unless it is open already, opens a change from it. */
  const push = async (branch: string, from: string, files: Record<string, string>, open?: Record<string, unknown>) => {
    await w.g.ok(["checkout", "-q", "-B", branch, from], { cwd: dir });
    const head = await commitFiles(w.g, dir, files, branch);
    await w.g.ok(["push", "-q", "-f", repo.url, branch], { cwd: dir });
    if (open) {
      const r = await as(people.ada!).post(changes, { title: branch, branch, ...open });
      if (r.status !== 201) throw new Error(`open failed ${r.status} ${JSON.stringify(r.body)}`);
    }
    return head;
  };
  return { repo, dir, main, changes, push };
}

const review = (who: Cast, changes: string, n: number, verdict: string) => as(who).post(`${changes}/${n}/reviews`, { verdict });
const land = (changes: string, n: number) => as(people.ada!).post(`${changes}/${n}/land`);
/** The web status box's list of what landing needs (the change page's conversation tab), as text. */
async function needs(repo: TestRepo, n: number): Promise<string> {
  const page = await getPage(w.server, `/${ORG}/${repo.name}/changes/${n}`, people.ada!.cookie);
  expect(page.status).toBe(200);
  const list = /<ul class="needs"[^>]*>([\s\S]*?)<\/ul>/.exec(page.text);
  return textOf(list?.[1] ?? "").replace(/\s+/g, " ");
}
async function settled(repo: TestRepo, n: number) {
  return until(`change #${n} to settle`, async () => {
    const c = (await repo.api.c.get(`${repo.api.base}/changes/${n}`)).body;
    return ["landed", "ejected"].includes(c.state) ? c : null;
  });
}

describe("protections", () => {
  test("required_approvals 0-10 (422 outside) and dismiss_stale_approvals (default true) are stored and answered", async () => {
    const { repo } = await seeded("prot");
    expect((await repo.api.putProtection("main", { required_approvals: 11 })).status).toBe(422);
    expect((await repo.api.putProtection("main", { required_approvals: -1 })).status).toBe(422);
    const p = await repo.api.putProtection("main", { required_approvals: 2 });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ pattern: "main", required_approvals: 2, dismiss_stale_approvals: true });
    const q = await repo.api.putProtection("main", { required_approvals: 1, dismiss_stale_approvals: false });
    expect(q.body).toMatchObject({ required_approvals: 1, dismiss_stale_approvals: false });
    expect((await repo.api.protections()).body.protections).toEqual([q.body]);
  });
});

describe("approvals", () => {
  test("2 required: 409 naming 0/2; a viewer's approval does not count; two writers' approvals land it through the lander", async () => {
    const { repo, dir, main, changes, push } = await seeded("two");
    await repo.api.putProtection("main", { required_approvals: 2 });
    const head = await push("feature", main, { "b.txt": "b\n" }, {});
    const refused = await land(changes, 1);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      error: "change #1 needs 2 approvals from people with write access (has 0)",
      approval: { required: 2, approvals: 0, changes_requested_by: [] },
    });
    expect((await as(people.ada!).get(`${changes}/1`)).body.state).toBe("open");
    // The web status box says what the 409 says (one rule: landingApprovals).
    expect(await needs(repo, 1)).toContain("✗ 2 approvals needed (0 of 2 required)");

    expect((await review(people.cy!, changes, 1, "approve")).status).toBe(201);
    expect((await review(people.bo!, changes, 1, "approve")).status).toBe(201);
    expect((await land(changes, 1)).body).toMatchObject({ approval: { required: 2, approvals: 1 } });
    expect(await needs(repo, 1)).toContain("✗ 1 approval needed (1 of 2 required)");

    expect((await review(people.dee!, changes, 1, "approve")).status).toBe(201);
    const met = await needs(repo, 1);
    expect(met).toContain("✓ 2 of 2 required approvals");
    expect(met).toContain("✓ Up to date with main");
    expect(met).not.toContain("✗");
    expect((await land(changes, 1)).status).toBe(202);
    const done = await settled(repo, 1);
    expect(done).toMatchObject({ state: "landed", landed_commit: head });
    // C git agrees: main is the change's head, and the history is sound.
    expect((await lsRemote(w.g, repo.url))["refs/heads/main"]).toBe(head);
    await w.g.ok(["fetch", "-q", repo.url, "main"], { cwd: dir });
    expect(await w.g.ok(["rev-parse", "FETCH_HEAD"], { cwd: dir })).toBe(head);
    await w.g.ok(["fsck", "--strict"], { cwd: dir });
  });

  test("a writer's request for changes blocks until they approve; a later comment review keeps the standing", async () => {
    const { repo, main, changes, push } = await seeded("block");
    await repo.api.putProtection("main", { required_approvals: 1 });
    await push("feature", main, { "b.txt": "b\n" }, {});
    expect((await review(people.bo!, changes, 1, "approve")).status).toBe(201);
    expect((await review(people.dee!, changes, 1, "request_changes")).status).toBe(201);
    const blocked = await land(changes, 1);
    expect(blocked.status).toBe(409);
    expect(blocked.body).toMatchObject({
      error: "change #1 has changes requested by dee",
      approval: { required: 1, approvals: 1, changes_requested_by: ["dee"] },
    });
    expect(await needs(repo, 1)).toContain("✗ Changes requested by @dee");
    // A later comment review keeps dee's standing.
    await as(people.dee!).post(`${changes}/1/reviews`, { verdict: "comment", body: "still no tests" });
    expect((await land(changes, 1)).status).toBe(409);
    expect((await review(people.dee!, changes, 1, "approve")).status).toBe(201);
    expect((await land(changes, 1)).status).toBe(202);
    expect((await settled(repo, 1)).state).toBe("landed");
  });

  test("an admin's dismissal of a request for changes unblocks", async () => {
    const { repo, main, changes, push } = await seeded("dismissed");
    await repo.api.putProtection("main", { required_approvals: 1 });
    await push("feature", main, { "b.txt": "b\n" }, {});
    await review(people.bo!, changes, 1, "approve");
    const rc = (await review(people.dee!, changes, 1, "request_changes")).body;
    expect((await land(changes, 1)).status).toBe(409);
    expect((await as(people.dee!).post(`${changes}/1/reviews/${rc.id}/dismiss`, {})).status).toBe(200);
    expect((await land(changes, 1)).status).toBe(202);
    expect((await settled(repo, 1)).state).toBe("landed");
  });

  test("a queued change is ejected with verdict approval after a request for changes", async () => {
    const { repo, main, changes, push } = await seeded("eject");
    // A required check nobody reports holds the queue, so the review arrives while it is queued.
    await repo.api.putProtection("main", { required_approvals: 1, required_checks: ["hold"] });
    await push("feature", main, { "b.txt": "b\n" }, {});
    await review(people.bo!, changes, 1, "approve");
    expect((await land(changes, 1)).status).toBe(202);
    await until("the change to wait for its check", async () => (await as(people.ada!).get(`${changes}/1`)).body.waiting);
    expect((await review(people.dee!, changes, 1, "request_changes")).status).toBe(201);
    const ejected = await settled(repo, 1);
    expect(ejected.state).toBe("ejected");
    expect(ejected.verdict).toEqual({
      kind: "approval",
      message: "change #1 has changes requested by dee",
      required: 1,
      approvals: 1,
      changes_requested_by: ["dee"],
    });
    expect((await lsRemote(w.g, repo.url))["refs/heads/main"]).toBe(main);
  });

  test("dismiss_stale_approvals: a push dismisses approvals (land 409); with false they still count", async () => {
    const { repo, main, changes, push } = await seeded("stale");
    await repo.api.putProtection("main", { required_approvals: 1 });
    await push("feature", main, { "b.txt": "b\n" }, {});
    await review(people.bo!, changes, 1, "approve");
    const rc = (await review(people.dee!, changes, 1, "request_changes")).body;
    const head2 = await push("feature", "feature", { "b.txt": "b2\n" });
    expect((await as(people.ada!).get(`${changes}/1`)).body).toMatchObject({ patchset: 2, head: head2 });
    const reviews = (await as(people.ada!).get(`${changes}/1/reviews`)).body.reviews;
    expect(reviews.map((r: { verdict: string; dismissed: boolean; dismissed_reason: string | null }) => [r.verdict, r.dismissed, r.dismissed_reason])).toEqual([
      ["approve", true, "stale"],
      ["request_changes", false, null],
    ]);
    await as(people.dee!).post(`${changes}/1/reviews/${rc.id}/dismiss`, {});
    const refused = await land(changes, 1);
    expect(refused.status).toBe(409);
    expect(refused.body.approval).toEqual({ required: 1, approvals: 0, changes_requested_by: [] });

    // The same with the rule off: the approval of patchset 1 still counts after a push.
    await repo.api.putProtection("main", { required_approvals: 1, dismiss_stale_approvals: false });
    await push("other", main, { "c.txt": "c\n" }, {});
    await review(people.bo!, changes, 2, "approve");
    const head3 = await push("other", "other", { "c.txt": "c2\n" });
    const r2 = (await as(people.ada!).get(`${changes}/2/reviews`)).body.reviews;
    expect(r2.map((r: { dismissed: boolean; patchset: number }) => [r.dismissed, r.patchset])).toEqual([[false, 1]]);
    expect((await land(changes, 2)).status).toBe(202);
    expect(await settled(repo, 2)).toMatchObject({ state: "landed", patchset: 2, landed_commit: head3 });
    expect((await lsRemote(w.g, repo.url))["refs/heads/main"]).toBe(head3);
  });

  test("a stack: each change beneath needs its own approvals (409 names it); approved, the stack lands", async () => {
    const { repo, main, changes, push } = await seeded("stack");
    await repo.api.putProtection("main", { required_approvals: 1 });
    const low = await push("low", main, { "l.txt": "l\n" }, {});
    const top = await push("top", low, { "t.txt": "t\n" }, { depends_on: 1 });
    await review(people.bo!, changes, 2, "approve");
    const refused = await land(changes, 2);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe("change #1 needs 1 approval from people with write access (has 0)");
    expect(await needs(repo, 2)).toContain("✗ #1 beneath lacks approvals: change #1 needs 1 approval");
    await review(people.dee!, changes, 1, "approve");
    expect((await land(changes, 2)).status).toBe(202);
    expect(await settled(repo, 2)).toMatchObject({ state: "landed", landed_commit: top });
    expect((await as(people.ada!).get(`${changes}/1`)).body).toMatchObject({ state: "landed", included_in: 2 });
    expect((await lsRemote(w.g, repo.url))["refs/heads/main"]).toBe(top);
  });
});
