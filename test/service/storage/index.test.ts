import { afterAll, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createObjectStore } from "../../../src/storage/index.ts";
import { startS3rver } from "../../helpers/s3rver.ts";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

test("createObjectStore picks the backend from the configuration", async () => {
  const root = await mkdtemp(join(tmpdir(), "svc-index-"));
  dirs.push(root);
  await using server = await startS3rver();
  const fs = await createObjectStore({ kind: "fs", root });
  const s3 = await createObjectStore({ kind: "s3", ...server });
  for (const store of [fs, s3]) await store.put("a/b", new Uint8Array([store.kind.length]));
  expect({ fs: [fs.kind, await fs.get("a/b")], s3: [s3.kind, await s3.get("a/b")] }).toEqual({
    fs: ["fs", new Uint8Array([2])],
    s3: ["s3", new Uint8Array([2])],
  });
});
