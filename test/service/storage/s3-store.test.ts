import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "minio";
import { createS3Store } from "../../../src/storage/s3-store.ts";
import { MIN_PART_SIZE, partSizeFor } from "../../../src/storage/s3-multipart.ts";
import { startS3rver, type S3rverHandle } from "../../helpers/s3rver.ts";
import { bytes, objectStoreContract, same } from "../../unit/storage/object-store-contract.ts";

let server: S3rverHandle;
beforeAll(async () => {
  server = await startS3rver();
});
afterAll(() => server.stop());

objectStoreContract("s3", () => createS3Store(server));

describe("s3 store", () => {
  test("creates a missing bucket, and opening an existing one is fine", async () => {
    const cfg = { ...server, bucket: "fresh-bucket" };
    const first = await createS3Store(cfg);
    await first.put("k", new Uint8Array([1]));
    const second = await createS3Store(cfg);
    expect(await second.get("k")).toEqual(new Uint8Array([1]));
  });

  test("putFile above the part size uploads in parts; at or below it, in one request", async () => {
    const store = await createS3Store(server);
    const scratch = await mkdtemp(join(tmpdir(), "svc-s3-parts-"));
    const uploadPart = spyOn(Client.prototype, "uploadPart");
    try {
      const big = bytes(2 * MIN_PART_SIZE + 1, 4);
      await writeFile(join(scratch, "big"), big);
      await store.putFile("parts/big", join(scratch, "big"));
      expect(uploadPart.mock.calls.map(([cfg]) => cfg.partNumber).sort()).toEqual([1, 2, 3]);
      expect(same(await store.get("parts/big"), big)).toBe(true);

      uploadPart.mockClear();
      const small = bytes(MIN_PART_SIZE, 6);
      await writeFile(join(scratch, "small"), small);
      await store.putFile("parts/small", join(scratch, "small"));
      expect(uploadPart).not.toHaveBeenCalled();
      expect(same(await store.get("parts/small"), small)).toBe(true);
    } finally {
      uploadPart.mockRestore();
      await rm(scratch, { recursive: true, force: true });
    }
  }, 60_000);

  test("part size grows so that no object needs more than 10,000 parts", () => {
    for (const size of [1, MIN_PART_SIZE * 10_000, MIN_PART_SIZE * 10_000 + 1, 5 * 1024 ** 4]) {
      const part = partSizeFor(size);
      expect(part >= MIN_PART_SIZE && Math.ceil(size / part) <= 10_000 && part % (1024 * 1024) === 0).toBe(true);
    }
  });

  test("an unreachable endpoint fails at creation", async () => {
    const probe = Bun.serve({ port: 0, fetch: () => new Response("") });
    const port = probe.port;
    probe.stop(true);
    await expect(createS3Store({ ...server, endpoint: `http://127.0.0.1:${port}` })).rejects.toThrow();
  });

  test("a malformed endpoint is rejected", async () => {
    await expect(createS3Store({ ...server, endpoint: "ftp://x:1" })).rejects.toThrow("http(s)://host:port");
  });
});
