// The Git LFS scenarios shared by lfs-fs.test.ts (svc streams the bytes) and lfs-s3.test.ts (the
// client moves them to and from the bucket on presigned URLs): the real `git lfs` client pushes and
// clones over HTTP; the batch API's shapes, errors and refusals; a fork clones its parent's files.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createRepo, repoUrl, setupOwner, basicAuth, type GitSandbox, type OrgOwner } from "../../helpers/git.ts";
import { client, startServer, type RunningServer } from "../../helpers/server.ts";
import { dbRows, until } from "../ci/helpers.ts";
import { batchBody, lfsRepo, lfsSandbox, LFS_TYPE, oidOf, postBatch, randomFiles, sameFiles } from "./lfs-helpers.ts";

/** A storage backend for the server: its SVC_* environment, the bucket's address (S3) and how to stop it. */
export interface Backend {
  env: Record<string, string>;
  endpoint?: string;
  stop(): Promise<void>;
}

const METRICS_TOKEN = "metrics-secret-for-lfs-tests";

/** The object store's byte counters, from /metrics. */
async function storeBytes(server: RunningServer): Promise<{ read: number; written: number }> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const value = (counter: string) => Number(new RegExp(`svc_object_store_backend_events_total\\{counter="${counter}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
  return { read: value("bytesRead"), written: value("bytesWritten") };
}

/** Defines the scenarios against a server started with `boot()`'s environment. */
export function lfsScenarios(label: string, boot: () => Promise<Backend>) {
  setDefaultTimeout(90_000);
  describe(`Git LFS on ${label}`, () => {
    let backend: Backend;
    let server: RunningServer;
    let g: GitSandbox;
    let owner: OrgOwner;
    let reader: OrgOwner;
    let outsider: OrgOwner;

    beforeAll(async () => {
      backend = await boot();
      server = await startServer({ env: { ...backend.env, SVC_METRICS_TOKEN: METRICS_TOKEN, SVC_LFS_MAX_OBJECT: "1m" } });
      g = await lfsSandbox();
      owner = await setupOwner(server, "acme");
      // A viewer of acme (repo:read) and someone of another org.
      reader = await setupOwner(server, "acme", "viewer");
      outsider = await setupOwner(server, "other");
      await createRepo(server, owner, "assets");
      await createRepo(server, owner, "pub", true);
    }, 90_000);

    afterAll(async () => {
      await server?.stop();
      g?.[Symbol.dispose]();
      await backend?.stop();
    });

    test("push and clone over HTTP: the files come back byte-identical, and the objects count only once stored", async () => {
      const files = randomFiles(["a.bin", "b.bin", "c.bin"], 200 * 1024);
      const dir = await lfsRepo(g, files);
      const url = repoUrl(server, "acme", "assets", owner.token);
      const before = await storeBytes(server);
      // The LFS objects alone first (no git push): what the store moved for them is what svc moved.
      await g.ok(["lfs", "push", "--all", url, "main"], { cwd: dir });
      const afterUpload = await storeBytes(server);
      await g.ok(["push", "-q", url, "main"], { cwd: dir });
      const rows = dbRows<{ oid: string; size: number }>(server, "SELECT oid, size FROM lfs_objects ORDER BY oid");
      expect(rows).toEqual(
        Object.values(files)
          .map((b) => ({ oid: oidOf(b), size: b.length }))
          .sort((x, y) => (x.oid < y.oid ? -1 : 1)),
      );
      const clone = g.path("clone");
      await g.ok(["clone", "-q", url, clone]);
      expect(sameFiles(clone, files)).toBe(true);
      // The objects count toward the repository's usage.
      const usage = await client(server, { cookie: owner.cookie }).get("/v1/orgs/acme/usage");
      const lfsBytes = Object.values(files).reduce((n, b) => n + b.length, 0);
      expect(usage.body.repos.find((r: { name: string }) => r.name === "assets").bytes).toBeGreaterThan(lfsBytes);
      if (label === "s3") {
        // svc moved none of the LFS bytes: no object-store traffic for the uploads (only the
        // verify calls' HEADs), and none for the downloads beyond the git clone's own reads.
        expect(afterUpload.written - before.written).toBe(0);
        expect(afterUpload.read - before.read).toBe(0);
        const total = Object.values(files).reduce((n, b) => n + b.length, 0);
        const afterClone = await storeBytes(server);
        expect(afterClone.read - afterUpload.read).toBeLessThan(total / 4);
      } else {
        // fs: the objects live under one prefix per network.
        const repoId = dbRows<{ id: string }>(server, "SELECT id FROM repos WHERE name = 'assets'")[0]!.id;
        for (const b of Object.values(files)) {
          const oid = oidOf(b);
          expect(existsSync(join(server.dataDir, "objects", "lfs", repoId, oid.slice(0, 2), oid))).toBe(true);
        }
      }
    });

    test("batch API: actions, the objects held skipped, per-object errors", async () => {
      const held = randomFiles(["held.bin"], 1000)["held.bin"]!;
      const dir = await lfsRepo(g, { "held.bin": held });
      await g.ok(["lfs", "push", "--all", repoUrl(server, "acme", "assets", owner.token), "main"], { cwd: dir });
      const missing = "0".repeat(64);
      const auth = { authorization: basicAuth(owner.token) };
      const up = await postBatch(
        server.url,
        "acme",
        "assets",
        batchBody("upload", [
          { oid: oidOf(held), size: held.length },
          { oid: missing, size: 10 },
          { oid: "not-an-oid", size: 10 },
          { oid: missing, size: -1 },
          { oid: "1".repeat(64), size: 2 * 1024 * 1024 },
        ]),
        auth,
      );
      expect(up.status).toBe(200);
      expect(up.headers.get("content-type")).toBe(LFS_TYPE);
      expect(up.body.transfer).toBe("basic");
      expect(up.body.hash_algo).toBe("sha256");
      const [h, m, bad, neg, big] = up.body.objects;
      expect(h).toEqual({ oid: oidOf(held), size: held.length, authenticated: true });
      expect(m.actions.upload.expires_in).toBeGreaterThan(0);
      if (label === "s3") {
        // A presigned URL of the bucket, with only the size and checksum headers and no Authorization;
        // both signed, so that the bucket refuses a body of another size (SVC_LFS_MAX_OBJECT holds on S3).
        expect(m.actions.upload.href.startsWith(`${backend.endpoint}/`)).toBe(true);
        expect(m.actions.upload.href).toContain("X-Amz-Signature=");
        expect(new URL(m.actions.upload.href).searchParams.get("X-Amz-SignedHeaders")).toBe("content-length;host;x-amz-checksum-sha256");
        expect(m.actions.upload.header).toEqual({ "Content-Length": "10", "x-amz-checksum-sha256": Buffer.from(missing, "hex").toString("base64") });
        expect(m.actions.upload.header["x-amz-checksum-sha256"]).toBe(Buffer.from(missing, "hex").toString("base64"));
        expect(m.actions.verify.href).toBe(`${server.url}/acme/assets.git/info/lfs/verify`);
        expect(m.actions.verify.header.Authorization).toMatch(/^RemoteAuth svclfs_/);
      } else {
        expect(m.actions.upload.href).toBe(`${server.url}/acme/assets.git/info/lfs/objects/${missing}`);
        expect(m.actions.upload.header.Authorization).toMatch(/^RemoteAuth svclfs_/);
        expect(m.actions.verify).toBeUndefined();
      }
      expect(bad.error.code).toBe(422);
      expect(neg.error.code).toBe(422);
      expect(big.error.code).toBe(413);

      const down = await postBatch(
        server.url,
        "acme",
        "assets",
        batchBody("download", [
          { oid: oidOf(held), size: held.length },
          { oid: missing, size: 10 },
        ]),
        auth,
      );
      expect(down.status).toBe(200);
      expect(down.body.objects[1]).toEqual({ oid: missing, size: 10, error: { code: 404, message: "Object does not exist" } });
      const action = down.body.objects[0].actions.download;
      if (label === "s3") {
        expect(action.href.startsWith(`${backend.endpoint}/`)).toBe(true);
        expect(action.header).toBeUndefined();
      }
      // The action works as given: the exact bytes.
      const got = await fetch(action.href, { headers: action.header ?? {} });
      expect(got.status).toBe(200);
      expect(Buffer.from(await got.arrayBuffer()).equals(Buffer.from(held))).toBe(true);
      if (label === "fs") {
        // Resumable: a range is answered 206 with exactly those bytes.
        const part = await fetch(action.href, { headers: { ...action.header, range: "bytes=100-" } });
        expect(part.status).toBe(206);
        expect(part.headers.get("content-range")).toBe(`bytes 100-${held.length - 1}/${held.length}`);
        expect(Buffer.from(await part.arrayBuffer()).equals(Buffer.from(held.subarray(100)))).toBe(true);
        // Without the action's credential there is nothing.
        expect((await fetch(action.href)).status).toBe(401);
      }

      // Request-level errors.
      expect((await postBatch(server.url, "acme", "assets", batchBody("upload", [], { hash_algo: "sha512" }), auth)).status).toBe(409);
      const tooMany = Array.from({ length: 1001 }, () => ({ oid: missing, size: 1 }));
      expect((await postBatch(server.url, "acme", "assets", batchBody("download", tooMany), auth)).status).toBe(413);
      expect((await postBatch(server.url, "acme", "assets", "{not json", auth)).status).toBe(422);
      expect((await postBatch(server.url, "acme", "assets", JSON.stringify({ operation: "delete", objects: [] }), auth)).status).toBe(422);
      expect((await postBatch(server.url, "acme", "assets", batchBody("download", []), { ...auth, accept: "text/html" })).status).toBe(406);
      const huge = await postBatch(server.url, "acme", "assets", "x".repeat(300 * 1024), auth);
      expect(huge.status).toBe(413);
      expect(huge.body.message).toBeString();
      // The requests are counted under their route, not "unrouted".
      const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
      expect(metrics).toMatch(/svc_http_requests_total\{method="POST",route="\/:org\/:repo\.git\/info\/lfs\/objects\/batch",status="200"\} \d+/);
    });

    test("an upload whose bytes are not the object's is not counted", async () => {
      const auth = { authorization: basicAuth(owner.token) };
      const real = new Uint8Array(5000).fill(7);
      const oid = oidOf(real);
      const up = await postBatch(server.url, "acme", "assets", batchBody("upload", [{ oid, size: real.length }]), auth);
      const { upload, verify } = up.body.objects[0].actions;
      const wrong = new Uint8Array(5000).fill(8);
      const put = await fetch(upload.href, { method: "PUT", headers: upload.header, body: wrong });
      if (label === "fs") {
        expect(put.status).toBe(422);
      } else {
        // s3rver checks neither x-amz-checksum-sha256 against the body nor V4 signatures (AWS and
        // MinIO check both; test/unit/storage/presign-headers.test.ts pins the signature): the bytes
        // land, and verify checks what it can, the size.
        expect(put.status).toBe(200);
        const short = await fetch(verify.href, {
          method: "POST",
          headers: { ...verify.header, "content-type": LFS_TYPE },
          body: JSON.stringify({ oid, size: 4999 }),
        });
        expect(short.status).toBe(422);
      }
      expect(dbRows(server, "SELECT oid FROM lfs_objects WHERE oid = ?", oid)).toEqual([]);
      const down = await postBatch(server.url, "acme", "assets", batchBody("download", [{ oid, size: real.length }]), auth);
      expect(down.body.objects[0].error.code).toBe(404);
    });

    test("refusals: anonymous on private 401 with LFS-Authenticate, outsider 404, reader may download but not upload", async () => {
      const body = batchBody("download", [{ oid: "0".repeat(64), size: 1 }]);
      const anon = await postBatch(server.url, "acme", "assets", body);
      expect(anon.status).toBe(401);
      expect(anon.headers.get("lfs-authenticate")).toBe('Basic realm="svc"');
      expect(anon.body.message).toBeString();
      const out = await postBatch(server.url, "acme", "assets", body, { authorization: basicAuth(outsider.token) });
      expect(out.status).toBe(404);
      expect((await postBatch(server.url, "acme", "nope", body, { authorization: basicAuth(owner.token) })).status).toBe(404);
      const bad = await postBatch(server.url, "acme", "assets", body, { authorization: basicAuth("svc_pat_nonsense") });
      expect(bad.status).toBe(401);
      expect((await postBatch(server.url, "acme", "assets", body, { authorization: basicAuth(reader.token) })).status).toBe(200);
      const up = await postBatch(server.url, "acme", "assets", batchBody("upload", [{ oid: "0".repeat(64), size: 1 }]), {
        authorization: basicAuth(reader.token),
      });
      expect(up.status).toBe(403);
      // A public repository: anyone downloads, nobody anonymous uploads.
      expect((await postBatch(server.url, "acme", "pub", body)).status).toBe(200);
      expect((await postBatch(server.url, "acme", "pub", batchBody("upload", [{ oid: "0".repeat(64), size: 1 }]))).status).toBe(401);
      // A push of LFS files by the reader fails at the upload, with the reason.
      const dir = await lfsRepo(g, randomFiles(["r.bin"], 1000));
      const r = await g.run(["lfs", "push", "--all", repoUrl(server, "acme", "assets", reader.token), "main"], { cwd: dir });
      expect(r.code).not.toBe(0);
    });

    test("web: a pointer's page says Stored with Git LFS with the real size and text; Raw and Download serve the real bytes", async () => {
      await createRepo(server, owner, "site");
      const text = new TextEncoder().encode("hello from a big text file\n".repeat(200));
      const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...randomFiles(["p"], 3000).p!]);
      const dir = await lfsRepo(g, { "notes.txt": text, "logo.png": png }, { track: ["*.txt", "*.png"] });
      await g.ok(["push", "-q", repoUrl(server, "acme", "site", owner.token), "main"], { cwd: dir });
      const cookie = { cookie: owner.cookie };
      const page = await fetch(`${server.url}/acme/site/blob/main/notes.txt`, { headers: cookie });
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain("Stored with Git LFS");
      expect(html).toContain("5.3 KiB");
      expect(html).toContain("hello from a big text file");
      expect(html).not.toContain("oid sha256:");
      for (const [name, bytes, type] of [
        ["notes.txt", text, "text/plain; charset=utf-8"],
        ["logo.png", png, "image/png"],
      ] as const) {
        for (const suffix of ["", "?download=1"]) {
          const raw = await fetch(`${server.url}/acme/site/raw/main/${name}${suffix}`, { headers: cookie, redirect: "manual" });
          let res = raw;
          if (label === "s3") {
            // The bucket serves the bytes on a presigned URL, with the type (and disposition) asked for.
            expect(raw.status).toBe(302);
            const location = raw.headers.get("location")!;
            expect(location.startsWith(`${backend.endpoint}/`)).toBe(true);
            res = await fetch(location);
          }
          expect({ name, suffix, status: res.status, type: res.headers.get("content-type") }).toEqual({ name, suffix, status: 200, type });
          if (suffix) expect(res.headers.get("content-disposition")).toContain(`filename="${name}"`);
          expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
        }
      }
      // Anonymous on a private repository: nothing.
      expect((await fetch(`${server.url}/acme/site/raw/main/logo.png`, { redirect: "manual" })).status).not.toBe(200);
    });

    test("a fork clones its parent's LFS files", async () => {
      const files = randomFiles(["f1.bin", "f2.bin"], 50 * 1024);
      await createRepo(server, owner, "parent");
      const dir = await lfsRepo(g, files);
      await g.ok(["push", "-q", repoUrl(server, "acme", "parent", owner.token), "main"], { cwd: dir });
      const f = await client(server, { cookie: owner.cookie }).post("/v1/orgs/acme/repos/parent/forks", { org: "acme", name: "child" }, { origin: server.url });
      expect(f.status).toBe(202);
      await until("the fork to be ready", async () => {
        const r = await client(server, { token: owner.token }).get("/v1/orgs/acme/repos/child");
        return r.status === 200 && r.body.fork_state === "ready";
      });
      const clone = g.path("fork-clone");
      await g.ok(["clone", "-q", repoUrl(server, "acme", "child", owner.token), clone]);
      expect(sameFiles(clone, files)).toBe(true);
      // Pointers, not the bytes, are what git itself stores.
      const pointer = await g.ok(["show", "HEAD:f1.bin"], { cwd: clone });
      expect(pointer).toContain(`oid sha256:${oidOf(files["f1.bin"]!)}`);
    });
  });
}
