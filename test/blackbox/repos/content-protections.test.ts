// Branch protections (DECISIONS §3): managed by admins, enforced alike for git push, the ref API
// and the commit API. Pushes use the real git client; every refusal is checked to move nothing.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { clone, lsRemote } from "../../helpers/git.ts";
import { commitOk, expectNothingWritten, newRepo, put, repoApi, startWorld, type Person, type TestRepo, type World } from "../../helpers/content.ts";

setDefaultTimeout(60_000);

let w: World;
let member: Person;
let n = 0;
beforeAll(async () => {
  w = await startWorld("acme");
  member = w.member;
}, 60_000);
afterAll(async () => {
  await w?.close();
}, 30_000);

/**
 * A repository whose main has c1 → c2, plus `side` (a child of c1: not a fast-forward of main)
 * and `ahead` (a child of c2: a fast-forward of main), and a clone that fetched them all.
 */
async function scene(branch = "main") {
  const repo = await newRepo(w, `prot-${++n}`);
  const c1 = (await commitOk(repo.api, { branch, message: "c1", operations: [put("f.txt", "1\n")] })).commit;
  const c2 = (await commitOk(repo.api, { branch, message: "c2", operations: [put("f.txt", "2\n")] })).commit;
  expect((await repo.api.putRef("refs/heads/side", { target: c1, expected: null })).status).toBe(200);
  const side = (await commitOk(repo.api, { branch: "side", message: "side", operations: [put("side.txt", "s\n")] })).commit;
  expect((await repo.api.putRef("refs/heads/ahead", { target: c2, expected: null })).status).toBe(200);
  const ahead = (await commitOk(repo.api, { branch: "ahead", message: "ahead", operations: [put("ahead.txt", "a\n")] })).commit;
  const dir = await clone(w.g, repo.url);
  return { repo, dir, c1, c2, side, ahead };
}

/** `git push <args>` from `dir`; never throws. */
const push = (dir: string, ...args: string[]) => w.g.run(["push", "origin", ...args], { cwd: dir });

const protection = (
  pattern: string,
  o: Partial<{ allow_force_push: boolean; allow_deletion: boolean; require_change: boolean; required_checks: string[] }> = {},
) => ({
  pattern,
  allow_force_push: false,
  allow_deletion: false,
  require_change: false,
  required_checks: [],
  required_approvals: 0,
  dismiss_stale_approvals: true,
  ...o,
});

describe("protection management", () => {
  let repo: TestRepo;
  beforeAll(async () => {
    repo = await newRepo(w, "manage");
  });

  test("admins create, read, replace and delete protections; patterns main and release/*", async () => {
    const admin = w.admin;
    const api = repoApi(w.server, "acme", repo.name, admin.token);
    expect(await api.protections()).toMatchObject({ status: 200, body: { protections: [] } });

    const main = await api.putProtection("main", {
      allow_force_push: false,
      allow_deletion: false,
      require_change: true,
      required_checks: ["build", "test (node=20)"],
    });
    expect(main.status).toBe(200);
    expect(main.body).toEqual(protection("main", { require_change: true, required_checks: ["build", "test (node=20)"] }));
    const release = await api.putProtection("release/*", { allow_force_push: true });
    expect(release.status).toBe(200);
    expect(release.body).toEqual(protection("release/*", { allow_force_push: true }));
    // The slash may also be sent encoded; it is the same pattern.
    const encoded = await api.putProtection("release%2F*", { allow_deletion: true, required_checks: ["lint"] });
    expect(encoded.body).toEqual(protection("release/*", { allow_deletion: true, required_checks: ["lint"] }));

    const list = await repo.api.protections();
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      protections: [
        protection("main", { require_change: true, required_checks: ["build", "test (node=20)"] }),
        protection("release/*", { allow_deletion: true, required_checks: ["lint"] }),
      ],
    });

    expect((await api.deleteProtection("release%2F*")).status).toBe(204);
    expect((await api.deleteProtection("release/*")).status).toBe(404);
    expect((await repo.api.protections()).body.protections.map((p: { pattern: string }) => p.pattern)).toEqual(["main"]);
    expect((await api.deleteProtection("main")).status).toBe(204);
    expect((await repo.api.protections()).body).toEqual({ protections: [] });
  });

  test("members and viewers get 403, outsiders 404, anonymous 401, and nothing changes", async () => {
    expect((await repo.api.putProtection("main", { require_change: true })).status).toBe(200);
    const { viewer, outsider } = w;
    for (const [who, token, status] of [
      ["member", member.token, 403],
      ["viewer", viewer.token, 403],
      ["outsider", outsider.token, 404],
      ["anonymous", undefined, 401],
    ] as [string, string | undefined, number][]) {
      const api = repoApi(w.server, "acme", repo.name, token);
      const got = {
        who,
        put: (await api.putProtection("main", { require_change: false })).status,
        create: (await api.putProtection("dev", {})).status,
        del: (await api.deleteProtection("main")).status,
        list: (await api.protections()).status,
      };
      expect(got).toEqual({ who, put: status, create: status, del: status, list: status });
    }
    expect((await repo.api.protections()).body).toEqual({ protections: [protection("main", { require_change: true })] });
    expect((await repo.api.deleteProtection("main")).status).toBe(204);
  });

  test("bad patterns and bad values are 400", async () => {
    for (const pattern of ["bad..name", "x.lock", "a%20b", "refs%2Fheads%2F..%2Fx"]) {
      expect({ pattern, status: (await repo.api.putProtection(pattern, {})).status }).toEqual({ pattern, status: 400 });
    }
    for (const body of [{ allow_force_push: "yes" }, { required_checks: "build" }, { required_checks: [1] }, { require_change: 1 }]) {
      expect({ body, status: (await repo.api.putProtection("main", body)).status }).toEqual({ body, status: 400 });
    }
    expect((await repo.api.protections()).body).toEqual({ protections: [] });
  });

  test("a malformed percent-escape in the pattern is 400, not 500", async () => {
    const got = { put: (await repo.api.putProtection("50%", {})).status, del: (await repo.api.deleteProtection("50%")).status };
    expect(got).toEqual({ put: 400, del: 400 });
  });
});

describe("allow_force_push: false", () => {
  test("git push -f of a non-fast-forward is refused as protected; a fast-forward push goes through", async () => {
    const s = await scene();
    expect((await s.repo.api.putProtection("main", { allow_force_push: false, allow_deletion: true })).status).toBe(200);

    const forced = await expectNothingWritten(w, s.repo, () => push(s.dir, "-f", "origin/side:refs/heads/main"));
    expect(forced.code).not.toBe(0);
    expect(forced.stderr).toMatch(/protected/i);
    expect(forced.stderr).toMatch(/force/i);

    const ff = await push(s.dir, "origin/ahead:refs/heads/main");
    expect(ff.code).toBe(0);
    expect((await lsRemote(w.g, s.repo.url))["refs/heads/main"]).toBe(s.ahead);

    // The ref API obeys it too: a backwards move is 403, a forward one fine.
    const back = await expectNothingWritten(w, s.repo, () => s.repo.api.putRef("refs/heads/main", { target: s.c2 }));
    expect(back.status).toBe(403);
    expect(back.body.error).toMatch(/protected/i);
    const sideways = await expectNothingWritten(w, s.repo, () => s.repo.api.putRef("refs/heads/main", { target: s.side, expected: s.ahead }));
    expect(sideways.status).toBe(403);
    // Commits through the API are fast-forwards by construction.
    expect((await s.repo.api.commit({ message: "api", operations: [put("api.txt", "x")] })).status).toBe(201);

    // Other branches are not protected.
    expect((await push(s.dir, "-f", "origin/side:refs/heads/ahead")).code).toBe(0);
  });

  test("pattern release/* protects release/1.0 but not release-2", async () => {
    const s = await scene("release/1.0");
    expect(
      (await s.repo.api.putRef("refs/heads/release-2", { target: (await lsRemote(w.g, s.repo.url))["refs/heads/release/1.0"]!, expected: null })).status,
    ).toBe(200);
    expect((await s.repo.api.putProtection("release/*", { allow_force_push: false })).status).toBe(200);

    const forced = await expectNothingWritten(w, s.repo, () => push(s.dir, "-f", "origin/side:refs/heads/release/1.0"));
    expect(forced.code).not.toBe(0);
    expect(forced.stderr).toMatch(/protected/i);
    expect((await push(s.dir, "origin/ahead:refs/heads/release/1.0")).code).toBe(0);

    expect((await push(s.dir, "-f", "origin/side:refs/heads/release-2")).code).toBe(0);
    expect((await lsRemote(w.g, s.repo.url))["refs/heads/release-2"]).toBe(s.side);
  });

  test("allow_force_push: true lets a forced push through", async () => {
    const s = await scene();
    expect((await s.repo.api.putProtection("main", { allow_force_push: true })).status).toBe(200);
    expect((await push(s.dir, "-f", "origin/side:refs/heads/main")).code).toBe(0);
    expect((await lsRemote(w.g, s.repo.url))["refs/heads/main"]).toBe(s.side);
  });
});

describe("allow_deletion: false", () => {
  test("git push origin :main and the ref API DELETE are refused; with allow_deletion true they work", async () => {
    const s = await scene();
    expect((await s.repo.api.putProtection("main", { allow_force_push: true, allow_deletion: false })).status).toBe(200);

    const del = await expectNothingWritten(w, s.repo, () => push(s.dir, ":main"));
    expect(del.code).not.toBe(0);
    expect(del.stderr).toMatch(/protected/i);
    for (const expected of [undefined, s.c2]) {
      const api = await expectNothingWritten(w, s.repo, () => s.repo.api.deleteRef("refs/heads/main", expected));
      expect(api.status).toBe(403);
      expect(api.body.error).toMatch(/protected/i);
    }
    // A pattern protects every match.
    expect((await s.repo.api.putRef("refs/heads/release/9", { target: s.c2, expected: null })).status).toBe(200);
    expect((await s.repo.api.putProtection("release/*", {})).status).toBe(200);
    const rel = await expectNothingWritten(w, s.repo, () => push(s.dir, ":refs/heads/release/9"));
    expect(rel.code).not.toBe(0);
    expect((await expectNothingWritten(w, s.repo, () => s.repo.api.deleteRef("refs/heads/release/9"))).status).toBe(403);

    // Unprotected branches delete fine.
    expect((await push(s.dir, ":ahead")).code).toBe(0);
    expect((await s.repo.api.deleteRef("refs/heads/side", s.side)).status).toBe(204);

    expect((await s.repo.api.putProtection("main", { allow_force_push: true, allow_deletion: true })).status).toBe(200);
    expect((await s.repo.api.deleteRef("refs/heads/main", s.c2)).status).toBe(204);
    expect((await lsRemote(w.g, s.repo.url))["refs/heads/main"]).toBeUndefined();
  });
});

describe("require_change", () => {
  test("direct pushes, the commit API and the ref API are refused with advice to land through a change", async () => {
    const s = await scene();
    expect((await s.repo.api.putProtection("main", { require_change: true, required_checks: ["ci"] })).status).toBe(200);

    const direct = await expectNothingWritten(w, s.repo, () => push(s.dir, "origin/ahead:refs/heads/main"));
    expect(direct.code).not.toBe(0);
    expect(direct.stderr).toMatch(/protected/i);
    expect(direct.stderr).toMatch(/change/i);

    const viaCommit = await expectNothingWritten(w, s.repo, () => s.repo.api.commit({ message: "direct", operations: [put("x.txt", "x")] }));
    expect(viaCommit.status).toBe(403);
    expect(viaCommit.body.error).toMatch(/change/i);
    const withParent = await expectNothingWritten(w, s.repo, () =>
      s.repo.api.commit({ message: "direct", expected_parent: s.c2, operations: [put("x.txt", "x")] }),
    );
    expect(withParent.status).toBe(403);
    // A member is refused the same way as the owner.
    const byMember = await expectNothingWritten(w, s.repo, () =>
      repoApi(w.server, "acme", s.repo.name, member.token).commit({ message: "m", operations: [put("x.txt", "x")] }),
    );
    expect(byMember.status).toBe(403);

    const viaRef = await expectNothingWritten(w, s.repo, () => s.repo.api.putRef("refs/heads/main", { target: s.ahead, expected: s.c2 }));
    expect(viaRef.status).toBe(403);
    expect(viaRef.body.error).toMatch(/change/i);
    const unconditional = await expectNothingWritten(w, s.repo, () => s.repo.api.putRef("refs/heads/main", { target: s.ahead }));
    expect(unconditional.status).toBe(403);

    // Other branches still take direct writes.
    expect((await s.repo.api.commit({ branch: "ahead", message: "ok", operations: [put("y.txt", "y")] })).status).toBe(201);
    expect((await push(s.dir, "-f", "origin/side:refs/heads/topic")).code).toBe(0);

    // required_checks is stored and returned.
    expect((await s.repo.api.protections()).body).toEqual({ protections: [protection("main", { require_change: true, required_checks: ["ci"] })] });
  });

  test("a require_change pattern also refuses creating a matching branch directly", async () => {
    const s = await scene();
    expect((await s.repo.api.putProtection("release/*", { require_change: true })).status).toBe(200);
    const pushed = await expectNothingWritten(w, s.repo, () => push(s.dir, "origin/ahead:refs/heads/release/2"));
    expect(pushed.code).not.toBe(0);
    const committed = await expectNothingWritten(w, s.repo, () =>
      s.repo.api.commit({ branch: "release/2", expected_parent: null, message: "r", operations: [put("r", "r")] }),
    );
    expect(committed.status).toBe(403);
    const created = await expectNothingWritten(w, s.repo, () => s.repo.api.putRef("refs/heads/release/2", { target: s.c2, expected: null }));
    expect(created.status).toBe(403);
  });
});

describe("lifting a protection", () => {
  test("DELETE /protections/{pattern} lifts it for push, commit API and ref API", async () => {
    const s = await scene();
    expect((await s.repo.api.putProtection("main", { require_change: true })).status).toBe(200);
    expect((await push(s.dir, "origin/ahead:refs/heads/main")).code).not.toBe(0);

    expect((await s.repo.api.deleteProtection("main")).status).toBe(204);
    expect((await s.repo.api.protections()).body).toEqual({ protections: [] });
    expect((await push(s.dir, "origin/ahead:refs/heads/main")).code).toBe(0);
    expect((await s.repo.api.commit({ message: "now allowed", operations: [put("z.txt", "z")] })).status).toBe(201);
    expect((await s.repo.api.putRef("refs/heads/main", { target: s.side })).status).toBe(200);
    expect((await push(s.dir, ":main")).code).toBe(0);
    expect((await lsRemote(w.g, s.repo.url))["refs/heads/main"]).toBeUndefined();
  });
});
