// The one git service behind both transports (issue 10): serveGit / advertiseGit answer a typed
// outcome for every caller, publish answers a typed outcome per ref, and every pack goes up the
// one upload path. In-process: the real context (SQLite, fs object store) and real services.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq, isNull } from "drizzle-orm";
import type { User } from "../../../src/db/schema/index.ts";
import { TooLarge } from "../../../src/errors.ts";
import { concatBytes, FLUSH_PKT, PktLineReader, pktLine } from "../../../src/git/pkt-line.ts";
import { ZERO_OID, type Oid } from "../../../src/git/types.ts";
import { gitHandler } from "../../../src/http/git.ts";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Ctx } from "../../../src/services/context.ts";
import { ANONYMOUS, type Principal } from "../../../src/services/access/principal.ts";
import { findOrg, findRepo } from "../../../src/services/access/lookup.ts";
import { gcRepo } from "../../../src/services/git/maintenance.ts";
import { publish, refusalReason, type RefCheck, type RefOutcome, type RefUpdate } from "../../../src/services/git/publish.ts";
import { advertiseGit, serveGit, type GitServiceRequest } from "../../../src/services/git/serve.ts";
import { openSnapshot, packKey } from "../../../src/services/git/snapshot.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createCommit } from "../../../src/services/repos/commits.ts";
import { createRepo, openRepo, deleteRepo } from "../../../src/services/repos/repos.ts";

const root = mkdtempSync(join(tmpdir(), "svc-git-service-"));
let ctx: Ctx & { close(): void };
let owner: Principal, viewer: Principal, stranger: Principal;
/** The tip of acme/secret's main. */
let tip: Oid;

const session = (user: User): Principal => ({ kind: "session", user, sessionId: "test" });
const PASSWORD = "a long enough password";

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: "http://svc.test", SVC_LOG: "error" });
  const person = async (email: string, org: string, role: string) =>
    session(await createUserWithOrg(ctx, { org, email, name: email.split("@")[0]!, password: PASSWORD, role }));
  owner = await person("olga@example.com", "acme", "owner");
  viewer = await person("vic@example.com", "acme", "viewer");
  stranger = await person("sam@example.com", "other", "owner");
  await createRepo(ctx, owner, "acme", { name: "secret" });
  await createRepo(ctx, owner, "acme", { name: "open", public: true });
  tip = (await createCommit(ctx, await openRepo(ctx, owner, "acme", "secret"), { message: "one", operations: [{ op: "put", path: "a.txt", content: "1\n" }] }))
    .commit;
  await createCommit(ctx, await openRepo(ctx, owner, "acme", "open"), { message: "one", operations: [{ op: "put", path: "a.txt", content: "1\n" }] });
});

// As the server does at the start of every request: facts are re-validated against the database.
beforeEach(() => ctx.facts.fresh());

afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

/** The packets of a response as text lines (flush as null). */
async function packets(bytes: Uint8Array): Promise<(string | null)[]> {
  const reader = new PktLineReader(
    (async function* () {
      yield bytes;
    })(),
  );
  const out: (string | null)[] = [];
  for (;;) {
    const p = await reader.read();
    if (p.type === "eof") return out;
    out.push(p.type === "data" ? new TextDecoder().decode(p.data) : null);
  }
}

/** An io that records what the service writes, reading `input`. */
function recorder(input: Iterable<Uint8Array> | AsyncIterable<Uint8Array> = []) {
  const written: Uint8Array[] = [];
  const io = {
    input: (async function* () {
      yield* input;
    })(),
    write: (chunk: Uint8Array) => void written.push(chunk),
  };
  return { io, bytes: () => concatBytes(written) };
}

const call = (actor: Principal, req: Partial<GitServiceRequest> & Pick<GitServiceRequest, "service" | "io">) =>
  serveGit(ctx, actor, { org: "acme", repo: "secret", protocol: 0, stateless: true, via: "http", ...req });

describe("advertiseGit: the info/refs outcome for every kind of caller", () => {
  test("a table of callers, repositories and services", async () => {
    const cases: [string, Principal, string, "git-upload-pack" | "git-receive-pack"][] = [
      ["anonymous reads private", ANONYMOUS, "secret", "git-upload-pack"],
      ["anonymous reads public", ANONYMOUS, "open", "git-upload-pack"],
      ["anonymous pushes public", ANONYMOUS, "open", "git-receive-pack"],
      ["stranger reads private", stranger, "secret", "git-upload-pack"],
      ["stranger pushes public", stranger, "open", "git-receive-pack"],
      ["owner reads a missing repo", owner, "nope", "git-upload-pack"],
      ["viewer reads", viewer, "secret", "git-upload-pack"],
      ["viewer pushes", viewer, "secret", "git-receive-pack"],
      ["owner pushes", owner, "secret", "git-receive-pack"],
    ];
    const got: Record<string, string> = {};
    for (const [label, actor, repo, service] of cases) {
      const o = await advertiseGit(ctx, actor, { service, org: "acme", repo, protocol: 0 });
      got[label] = o.kind === "refused" ? `refused ${o.refusal}` : o.kind;
    }
    expect(got).toEqual({
      "anonymous reads private": "refused unauthenticated",
      "anonymous reads public": "served",
      "anonymous pushes public": "refused unauthenticated",
      "stranger reads private": "refused not-found",
      "stranger pushes public": "refused forbidden-in-band",
      "owner reads a missing repo": "refused not-found",
      "viewer reads": "served",
      "viewer pushes": "refused forbidden-in-band",
      "owner pushes": "served",
    });
  });

  test("served: the smart-HTTP preamble, then the refs (v0) or the capabilities (v2)", async () => {
    const v0 = await advertiseGit(ctx, owner, { service: "git-upload-pack", org: "acme", repo: "secret", protocol: 0 });
    const v2 = await advertiseGit(ctx, owner, { service: "git-upload-pack", org: "acme", repo: "secret", protocol: 2 });
    if (v0.kind !== "served" || v2.kind !== "served") throw new Error("not served");
    const lines0 = await packets(v0.body);
    expect(lines0.slice(0, 2)).toEqual(["# service=git-upload-pack\n", null]);
    expect(lines0[2]).toStartWith(`${tip} HEAD\0`);
    expect((await packets(v2.body))[0]).toBe("version 2\n");
  });

  test("a reader's push: the preamble and one ERR naming the repository and advising a fork", async () => {
    const o = await advertiseGit(ctx, viewer, { service: "git-receive-pack", org: "acme", repo: "secret", protocol: 0 });
    if (o.kind !== "refused" || o.refusal !== "forbidden-in-band") throw new Error(`unexpected ${o.kind}`);
    expect(await packets(o.body)).toEqual(["# service=git-receive-pack\n", null, `ERR ${o.message}\n`]);
    expect(o.message).toContain("acme/secret");
    expect(o.message).toMatch(/fork/i);
  });
});

describe("serveGit: one outcome per invocation", () => {
  test("a reader's push over stateless HTTP is a plain 'forbidden' (the advertisement has passed); nothing written", async () => {
    const r = recorder();
    expect(await call(viewer, { service: "git-receive-pack", io: r.io })).toEqual({
      kind: "refused",
      refusal: "forbidden",
      message: expect.stringContaining("acme/secret"),
    });
    expect(r.bytes().length).toBe(0);
  });

  test("a reader's push over a conversation (SSH) is told in band: exactly one ERR packet, no preamble", async () => {
    const r = recorder();
    const o = await call(viewer, { service: "git-receive-pack", io: r.io, stateless: false, via: "ssh" });
    expect(o).toEqual({ kind: "refused", refusal: "forbidden-in-band", message: expect.stringMatching(/fork/i) });
    expect(await packets(r.bytes())).toEqual([`ERR ${o.kind === "refused" ? o.message : ""}\n`]);
  });

  test("callers who may not see the repository get not-found / unauthenticated, and nothing is written", async () => {
    const got: Record<string, unknown> = {};
    const written: Record<string, number> = {};
    for (const [label, actor, service] of [
      ["stranger clones", stranger, "git-upload-pack"],
      ["stranger pushes", stranger, "git-receive-pack"],
      ["anonymous clones", ANONYMOUS, "git-upload-pack"],
    ] as const) {
      const r = recorder();
      const o = await call(actor, { service, io: r.io, stateless: false, via: "ssh" });
      got[label] = o.kind === "refused" ? o.refusal : o.kind;
      written[label] = r.bytes().length;
    }
    expect({ got, written }).toEqual({
      got: { "stranger clones": "not-found", "stranger pushes": "not-found", "anonymous clones": "unauthenticated" },
      written: { "stranger clones": 0, "stranger pushes": 0, "anonymous clones": 0 },
    });
  });

  test("served: a stateless fetch of main answers NAK and a pack", async () => {
    const r = recorder([concatBytes([pktLine(`want ${tip} ofs-delta`), FLUSH_PKT, pktLine("done")])]);
    expect(await call(owner, { service: "git-upload-pack", io: r.io })).toEqual({ kind: "served" });
    const out = Buffer.from(r.bytes());
    expect(out.subarray(0, 12).toString()).toBe("0008NAK\nPACK");
  });

  test("a body over the limit, refused while the engine reads it, is 'too-large'", async () => {
    async function* tooBig(): AsyncGenerator<Uint8Array> {
      yield pktLine(`${tip} ${"1".repeat(40)} refs/heads/main\0report-status`);
      throw TooLarge("request body larger than 10 bytes");
    }
    const r = recorder(tooBig());
    expect(await call(owner, { service: "git-receive-pack", io: r.io })).toEqual({
      kind: "refused",
      refusal: "too-large",
      message: "request body larger than 10 bytes",
    });
  });

  test("an unexpected failure (the client's connection breaks) is 'failed', logged once with its stack", async () => {
    const logged: { msg: string; fields?: Record<string, unknown> }[] = [];
    const quiet = { ...ctx, log: { ...ctx.log, error: (msg: string, fields?: Record<string, unknown>) => void logged.push({ msg, fields }) } };
    const io = {
      input: (async function* () {})(),
      write: () => Promise.reject(new Error("connection reset by peer")),
    };
    const o = await serveGit(quiet, owner, { service: "git-upload-pack", org: "acme", repo: "secret", protocol: 0, io, stateless: false, via: "ssh" });
    expect(o).toEqual({ kind: "failed" });
    expect(logged).toEqual([
      {
        msg: "git service failed",
        fields: { service: "git-upload-pack", repo: "acme/secret", via: "ssh", error: expect.stringContaining("connection reset by peer") },
      },
    ]);
  });
});

describe("the smart-HTTP transport renders outcomes and request problems", () => {
  const handle = (path: string, init: RequestInit = {}) => gitHandler(ctx)(new Request(`http://svc.test${path}`, init));

  test("a malformed percent-escape in the repository path is 400, not a server error", async () => {
    const r = (await handle("/acme/%ZZ.git/info/refs?service=git-upload-pack"))!;
    expect({ status: r.status, text: await r.text() }).toEqual({ status: 400, text: "malformed repository path\n" });
    const post = (await handle("/%E0%A4%A/secret.git/git-upload-pack", {
      method: "POST",
      headers: { "content-type": "application/x-git-upload-pack-request" },
      body: "0000",
    }))!;
    expect(post.status).toBe(400);
  });

  test("request problems: wrong method 405, wrong content type 415, dumb HTTP 403; other paths are not ours", async () => {
    const got = {
      method: (await handle("/acme/secret.git/git-upload-pack"))!.status,
      infoRefsMethod: (await handle("/acme/secret.git/info/refs?service=git-upload-pack", { method: "POST" }))!.status,
      contentType: (await handle("/acme/secret.git/git-upload-pack", { method: "POST", headers: { "content-type": "text/plain" }, body: "0000" }))!.status,
      dumb: (await handle("/acme/secret.git/info/refs"))!.status,
      notGit: await handle("/acme/secret.git/HEAD"),
    };
    expect(got).toEqual({ method: 405, infoRefsMethod: 405, contentType: 415, dumb: 403, notGit: null });
  });

  test("Git-Protocol is a colon-separated list: any version=2 item selects v2, as git's own server reads it", async () => {
    const first = async (value: string) => {
      const r = (await handle("/acme/open.git/info/refs?service=git-upload-pack", { headers: { "git-protocol": value } }))!;
      return (await packets(new Uint8Array(await r.arrayBuffer())))[0];
    };
    expect({
      plain: await first("version=2"),
      listed: await first("object-format=sha1:version=2"),
      v1: await first("version=1"),
      lookalike: await first("version=20"),
    }).toEqual({ plain: "version 2\n", listed: "version 2\n", v1: "# service=git-upload-pack\n", lookalike: "# service=git-upload-pack\n" });
  });
});

describe("publish: a typed outcome per ref", () => {
  async function target() {
    const org = (await findOrg(ctx, "acme"))!;
    const repo = (await findRepo(ctx, org.id, "secret"))!;
    return { org, repo };
  }
  const run = async (updates: RefUpdate[], opts: { atomic?: boolean; policy?: RefCheck } = {}) => {
    const { org, repo } = await target();
    const policy = opts.policy && (async () => opts.policy!);
    return Object.fromEntries(await publish(ctx, org, repo, updates, null, { atomic: opts.atomic ?? false, event: null, actorUserId: null, policy }));
  };

  test("applied, stale, moved, missing and clash, each with git's wire reason", async () => {
    const got = await run([
      { ref: "refs/heads/feature", oldOid: ZERO_OID, newOid: tip },
      { ref: "refs/heads/gone", oldOid: tip, newOid: tip },
      { ref: "refs/heads/main", oldOid: ZERO_OID, newOid: tip },
      { ref: "refs/heads/none", oldOid: ZERO_OID, newOid: ZERO_OID },
      { ref: "refs/heads/main/sub", oldOid: ZERO_OID, newOid: tip },
      { ref: "refs/heads/feature/x", oldOid: ZERO_OID, newOid: tip },
    ]);
    expect(got).toEqual({
      "refs/heads/feature": { kind: "applied" },
      "refs/heads/gone": { kind: "stale" },
      "refs/heads/main": { kind: "moved", current: tip },
      "refs/heads/none": { kind: "missing" },
      "refs/heads/main/sub": { kind: "clash", existing: "refs/heads/main" },
      // Created in the same call: a clash with the ref created just before it.
      "refs/heads/feature/x": { kind: "clash", existing: "refs/heads/feature" },
    });
    const reasons = Object.fromEntries(Object.entries(got).map(([ref, o]) => [ref, refusalReason(ref, o as RefOutcome)]));
    expect(reasons).toEqual({
      "refs/heads/feature": null,
      "refs/heads/gone": "stale info: the ref no longer exists",
      "refs/heads/main": "fetch first: the ref moved since you fetched",
      "refs/heads/none": "no such ref",
      "refs/heads/main/sub": "cannot create refs/heads/main/sub: refs/heads/main exists",
      "refs/heads/feature/x": "cannot create refs/heads/feature/x: refs/heads/feature exists",
    });
  });

  test("a policy refusal carries its message; atomic: the rest become atomic-failed and nothing moves", async () => {
    const policy = (u: RefUpdate) => (u.ref === "refs/heads/main" ? "protected branch main: force push is not allowed" : null);
    const got = await run(
      [
        { ref: "refs/heads/main", oldOid: tip, newOid: tip },
        { ref: "refs/heads/other", oldOid: ZERO_OID, newOid: tip },
      ],
      { atomic: true, policy },
    );
    expect(got).toEqual({
      "refs/heads/main": { kind: "policy", message: "protected branch main: force push is not allowed" },
      "refs/heads/other": { kind: "atomic-failed" },
    });
    const { repo } = await target();
    expect((await openSnapshot(ctx.db.read, ctx.git, repo)).refs.some((r) => r.name === "refs/heads/other")).toBe(false);
  });

  test("the ref API answers a name clash with 409 naming the existing ref", async () => {
    const { putRef } = await import("../../../src/services/repos/refs.ts");
    const err = await putRef(ctx, await openRepo(ctx, owner, "acme", "secret"), "refs/heads/main/deeper", { target: tip, expected: null }).catch((e) => e);
    expect({ status: err.status, message: err.message, extra: err.extra }).toEqual({
      status: 409,
      message: "cannot create refs/heads/main/deeper: refs/heads/main exists",
      extra: { current: null },
    });
  });
});

describe("one pack upload path", () => {
  test("publish (commit API) and GC upload .pack and .idx and keep the idx cached", async () => {
    await createRepo(ctx, owner, "acme", { name: "packed" });
    for (const n of [1, 2])
      await createCommit(ctx, await openRepo(ctx, owner, "acme", "packed"), {
        message: `c${n}`,
        operations: [{ op: "put", path: `${n}.txt`, content: `${n}\n` }],
      });
    const org = (await findOrg(ctx, "acme"))!;
    const repo = (await findRepo(ctx, org.id, "packed"))!;
    const { packs } = testTables;
    const live = () =>
      ctx.db.read
        .select()
        .from(packs)
        .where(and(eq(packs.repoId, repo.id), isNull(packs.replacedAt)));
    const committed = await live();
    expect(committed).toHaveLength(2);
    for (const p of committed) {
      expect({
        pack: (await ctx.store.stat(packKey(repo.id, p.name, "pack")))?.size,
        idx: (await ctx.store.stat(packKey(repo.id, p.name, "idx")))?.size,
      }).toEqual({ pack: p.size, idx: p.idxSize });
    }

    // Two commits, two trees, two blobs.
    expect(await gcRepo(ctx, { repoId: repo.id })).toEqual({ objects: 6, packsReplaced: 2 });
    const [gc] = await live();
    expect((await ctx.store.stat(packKey(repo.id, gc!.name, "pack")))?.size).toBe(gc!.size);
    // The idx was remembered when uploaded: with the stored copy gone, reads still work.
    await ctx.store.delete(packKey(repo.id, gc!.name, "idx"));
    const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
    const main = snapshot.refs.find((r) => r.name === "refs/heads/main")!.oid;
    expect((await snapshot.objects.read(main))?.type).toBe("commit");
  });

  test("a push, commit or ref update to a deleted repository is 'repo-deleted'", async () => {
    await createRepo(ctx, owner, "acme", { name: "doomed" });
    const org = (await findOrg(ctx, "acme"))!;
    const repo = (await findRepo(ctx, org.id, "doomed"))!;
    await deleteRepo(ctx, await openRepo(ctx, owner, "acme", "doomed"));
    const results = await publish(ctx, org, repo, [{ ref: "refs/heads/main", oldOid: ZERO_OID, newOid: tip }], null, {
      atomic: false,
      event: null,
      actorUserId: null,
    });
    expect(Object.fromEntries(results)).toEqual({ "refs/heads/main": { kind: "repo-deleted" } });
  });
});
