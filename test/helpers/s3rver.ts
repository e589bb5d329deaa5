// Starts s3rver (an S3-compatible server from npm) in a child process on a random port with a
// temp directory. A child process rather than in-process: a test that blocks its own event
// loop (spawnSync of git, say) would otherwise starve the S3 server the svc child talks to.
// This file is also the child's entry point (see the import.meta.main block at the bottom).

import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopChild } from "./child.ts";

/** A running s3rver and how to reach it; the bucket is not created (svc creates it). */
export interface S3rverHandle {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  bucket: string;
  /** The s3rver child process (benchmarks account its CPU). */
  pid: number;
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Start s3rver on 127.0.0.1 and a free port; resolves once it accepts requests. Its files go to a
 * temp directory removed on stop, or to `opts.directory`, kept (benchmarks that resume).
 */
export async function startS3rver(opts: { directory?: string } = {}): Promise<S3rverHandle> {
  const keep = opts.directory !== undefined;
  const directory = opts.directory ?? (await mkdtemp(join(tmpdir(), "svc-s3rver-")));
  const child = Bun.spawn([process.execPath, import.meta.path, directory], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  let port: number;
  try {
    port = await readReadyPort(child.stdout, child.exited);
  } catch (err) {
    await stopChild(child);
    if (!keep) await rm(directory, { recursive: true, force: true });
    throw err;
  }
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await stopChild(child);
      if (!keep) await rm(directory, { recursive: true, force: true });
    })());
  return {
    endpoint: `http://127.0.0.1:${port}`,
    accessKey: "S3RVER",
    secretKey: "S3RVER",
    bucket: "svc-test",
    pid: child.pid,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** The part of a Koa context the multipart middleware uses. */
interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  status: number;
  type: string;
  body: unknown;
}

/**
 * s3rver answers ListMultipartUploads and AbortMultipartUpload with NotImplemented / 405; real S3
 * has both, and tests need them to prove no upload is left behind. They are served here from
 * s3rver's own upload folders (`<dir>/<bucket>/._S3rver_uploads/<uploadId>/`, holding `key`).
 */
function multipartUploads(directory: string) {
  const escapeXml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return async (ctx: KoaContext, next: () => Promise<void>): Promise<void> => {
    const segments = ctx.path.split("/").filter(Boolean).map(decodeURIComponent);
    const bucket = segments[0];
    if (!bucket) return next();
    const root = join(directory, bucket, "._S3rver_uploads");
    if (ctx.method === "GET" && segments.length === 1 && "uploads" in ctx.query) {
      const prefix = typeof ctx.query.prefix === "string" ? ctx.query.prefix : "";
      const uploads = (existsSync(root) ? readdirSync(root) : [])
        .filter((id) => existsSync(join(root, id, "key")))
        .map((id) => ({ id, key: readFileSync(join(root, id, "key"), "utf8"), initiated: statSync(join(root, id)).mtime }))
        .filter((u) => u.key.startsWith(prefix))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.id < b.id ? -1 : 1));
      ctx.status = 200;
      ctx.type = "application/xml";
      ctx.body =
        `<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
        `<Bucket>${escapeXml(bucket)}</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker><Prefix>${escapeXml(prefix)}</Prefix>` +
        `<MaxUploads>10000</MaxUploads><IsTruncated>false</IsTruncated>` +
        uploads
          .map(
            (u) =>
              `<Upload><Key>${escapeXml(u.key)}</Key><UploadId>${escapeXml(u.id)}</UploadId><Initiated>${u.initiated.toISOString()}</Initiated><StorageClass>STANDARD</StorageClass></Upload>`,
          )
          .join("") +
        `</ListMultipartUploadsResult>`;
      return;
    }
    const uploadId = ctx.query.uploadId;
    if (ctx.method === "DELETE" && segments.length > 1 && typeof uploadId === "string") {
      const dir = join(root, uploadId);
      if (!/^[A-Za-z0-9-]+$/.test(uploadId) || !existsSync(join(dir, "key"))) {
        ctx.status = 404;
        ctx.type = "application/xml";
        ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>`;
        return;
      }
      rmSync(dir, { recursive: true, force: true });
      ctx.status = 204;
      ctx.body = null;
      return;
    }
    return next();
  };
}

// Reads the child's first stdout line ({"port":N}), then keeps draining so the pipe never fills.
async function readReadyPort(stdout: ReadableStream<Uint8Array>, exited: Promise<number>): Promise<number> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`s3rver exited before it was ready (exit code ${await exited})`);
    text += decoder.decode(value, { stream: true });
    const newline = text.indexOf("\n");
    if (newline >= 0) {
      const { port } = JSON.parse(text.slice(0, newline)) as { port: number };
      (async () => {
        while (!(await reader.read()).done);
      })().catch(() => {});
      return port;
    }
  }
}

if (import.meta.main) {
  // s3rver ships no type declarations; this is the part of its API we use.
  type S3rverClass = new (options: {
    port: number;
    address: string;
    directory: string;
    silent: boolean;
  }) => {
    run(): Promise<{ port: number }>;
    close(): Promise<void>;
    middleware: ((ctx: KoaContext, next: () => Promise<void>) => Promise<void>)[];
  };
  const { default: S3rver } = (await import("s3rver" as string)) as { default: S3rverClass };
  const directory = process.argv[2];
  if (!directory) throw new Error("usage: bun test/helpers/s3rver.ts <directory>");
  const server = new S3rver({ port: 0, address: "127.0.0.1", directory, silent: true });
  // Koa composes its middleware when it starts listening, so this runs before s3rver's router.
  server.middleware.unshift(multipartUploads(directory));
  const { port } = await server.run();
  process.stdout.write(`${JSON.stringify({ port })}\n`);
  // Nothing here outlives the process (the parent deletes the directory), and close() waits for
  // every keep-alive connection a client still holds, so a bounded close, then exit.
  const shutdown = () => Promise.race([server.close(), Bun.sleep(500)]).finally(() => process.exit(0));
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  // The parent holds our stdin open; when it goes away (even by crashing), so do we.
  process.stdin.on("end", shutdown).on("close", shutdown).resume();
}
