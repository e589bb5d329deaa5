// Git LFS over SSH (issue 31): the real `git lfs` client, remote ssh://…, asks the server for
// `git-lfs-transfer` (refused at once, so it falls back) then `git-lfs-authenticate`, whose
// answer (href and a short-lived header, with the key's authority) it uses for the batch API
// over HTTP. On fs and on S3 (s3rver).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { GitSandbox } from "../../helpers/git.ts";
import { startS3rver, type S3rverHandle } from "../../helpers/s3rver.ts";
import {
  gitSshEnv,
  makeRepo,
  registerKey,
  sshExec,
  sshPerson,
  sshUrl,
  sshWorkspace,
  startSshServer,
  type SshKey,
  type SshRunningServer,
  type SshWorkspace,
} from "../../helpers/ssh.ts";
import { batchBody, lfsRepo, lfsSandbox, oidOf, postBatch, randomFiles, sameFiles } from "./lfs-helpers.ts";

setDefaultTimeout(90_000);

for (const backend of ["fs", "s3"] as const) {
  describe(`Git LFS over SSH on ${backend}`, () => {
    let s3: S3rverHandle | null = null;
    let server: SshRunningServer;
    let ws: SshWorkspace;
    let g: GitSandbox;
    let ownerKey: SshKey;
    let viewerKey: SshKey;
    let outsiderKey: SshKey;

    beforeAll(async () => {
      s3 = backend === "s3" ? await startS3rver() : null;
      const env: Record<string, string> = s3
        ? { SVC_STORAGE: "s3", SVC_S3_ENDPOINT: s3.endpoint, SVC_S3_BUCKET: s3.bucket, SVC_S3_ACCESS_KEY: s3.accessKey, SVC_S3_SECRET_KEY: s3.secretKey }
        : {};
      server = await startSshServer({ env });
      ws = sshWorkspace();
      g = await lfsSandbox();
      const owner = await sshPerson(server, "acme", "owner@acme.example", "owner");
      const viewer = await sshPerson(server, "acme", "viewer@acme.example", "viewer");
      const outsider = await sshPerson(server, "other", "eve@other.example", "owner");
      ownerKey = await ws.keygen("owner", "ed25519");
      viewerKey = await ws.keygen("viewer", "ed25519");
      outsiderKey = await ws.keygen("outsider", "ed25519");
      await registerKey(server, { cookie: owner.cookie }, "acme", ownerKey);
      await registerKey(server, { cookie: viewer.cookie }, "acme", viewerKey);
      await registerKey(server, { cookie: outsider.cookie }, "other", outsiderKey);
      await makeRepo(server, { cookie: owner.cookie }, "acme", "assets");
    });

    afterAll(async () => {
      await server?.stop();
      ws?.[Symbol.dispose]();
      g?.[Symbol.dispose]();
      await s3?.stop();
    });

    test("push and clone over SSH: the files come back byte-identical", async () => {
      const files = randomFiles(["one.bin", "two.bin"], 100 * 1024);
      const env = gitSshEnv(ownerKey);
      const dir = await lfsRepo(g, files);
      await g.ok(["push", "-q", sshUrl(server, "acme", "assets"), "main"], { cwd: dir, env });
      const clone = g.path("ssh-clone");
      await g.ok(["clone", "-q", sshUrl(server, "acme", "assets"), clone], { env });
      expect(sameFiles(clone, files)).toBe(true);
    });

    test("git-lfs-authenticate answers href and a short-lived header for both path forms; the header works for its repository and operation only", async () => {
      for (const path of ["acme/assets.git", "/acme/assets.git", "'acme/assets.git'"]) {
        const r = await sshExec(ws, server, ownerKey, `git-lfs-authenticate ${path} download`);
        expect({ path, code: r.code, stderr: r.stderr }).toEqual({ path, code: 0, stderr: "" });
        const answer = JSON.parse(r.stdout);
        expect(answer.href).toBe(`${server.url}/acme/assets.git/info/lfs`);
        expect(answer.header.Authorization).toMatch(/^RemoteAuth svclfs_/);
        expect(answer.expires_in).toBeGreaterThan(0);
      }
      const down = JSON.parse((await sshExec(ws, server, ownerKey, "git-lfs-authenticate acme/assets.git download")).stdout);
      const body = batchBody("download", [{ oid: "0".repeat(64), size: 1 }]);
      expect((await postBatch(server.url, "acme", "assets", body, down.header)).status).toBe(200);
      // A download header uploads nothing.
      expect((await postBatch(server.url, "acme", "assets", batchBody("upload", [{ oid: "0".repeat(64), size: 1 }]), down.header)).status).toBe(403);
      // A forged or altered header is no credential.
      const forged = { Authorization: `${down.header.Authorization.slice(0, -4)}AAAA` };
      expect((await postBatch(server.url, "acme", "assets", body, forged)).status).toBe(401);
      const up = JSON.parse((await sshExec(ws, server, ownerKey, "git-lfs-authenticate acme/assets.git upload")).stdout);
      const data = new Uint8Array(3000).fill(3);
      const r = await postBatch(server.url, "acme", "assets", batchBody("upload", [{ oid: oidOf(data), size: data.length }]), up.header);
      expect(r.status).toBe(200);
      expect(r.body.objects[0].actions.upload).toBeDefined();
    });

    test("the key's authority: a viewer may download but not upload, an outsider sees nothing, git-lfs-transfer is refused at once", async () => {
      expect((await sshExec(ws, server, viewerKey, "git-lfs-authenticate acme/assets.git download")).code).toBe(0);
      const up = await sshExec(ws, server, viewerKey, "git-lfs-authenticate acme/assets.git upload");
      expect(up.code).toBe(1);
      expect(up.stderr).toContain("cannot write");
      const out = await sshExec(ws, server, outsiderKey, "git-lfs-authenticate acme/assets.git download");
      expect(out.code).toBe(1);
      expect(out.stderr).toBe("ERROR: repository 'acme/assets' not found\n");
      const bad = await sshExec(ws, server, ownerKey, "git-lfs-authenticate acme/assets.git delete");
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain("usage:");
      const transfer = await sshExec(ws, server, ownerKey, "git-lfs-transfer acme/assets.git upload");
      expect(transfer.code).toBe(1);
      expect(transfer.stderr).toContain("git-lfs-transfer is not supported");
    });
  });
}
