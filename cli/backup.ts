// `svc backup --to DIR|s3://bucket/prefix` and `svc restore --from DIR|s3://bucket/prefix`
// (DECISIONS §4; services/ops/backup.ts does the work).
import { defineCommand } from "citty";
import { chmodSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { ConfigError } from "../src/config.ts";
import { AppError } from "../src/errors.ts";
import { openContext } from "../src/runtime.ts";
import { backup, restore, type BackupLocation, type ProgressFn } from "../src/services/ops/backup.ts";
import { ChecksumMismatch } from "../src/services/ops/transfer.ts";
import { SECRETS_KEY_FILE } from "../src/services/ci/secrets-key.ts";
import { HOST_KEY_FILES } from "../src/services/ops/host-keys.ts";
import { createFsStore, createObjectStore, createS3Store } from "../src/storage/index.ts";
import { configOrExit, exitOnConfigError } from "./config.ts";
import { Progress, formatBytes, paint } from "./tty.ts";

/** The data dir files a backup carries: the SSH host keys and the CI secrets key (a restore without it loses every secret). */
const DATA_FILES: readonly string[] = [...HOST_KEY_FILES, SECRETS_KEY_FILE];

const SEGMENT = /^[A-Za-z0-9._-]+$/;

/**
 * A directory, or `s3://bucket[/prefix]` on the S3-compatible service of SVC_S3_ENDPOINT with
 * SVC_S3_ACCESS_KEY / SVC_S3_SECRET_KEY (and SVC_S3_REGION), whatever SVC_STORAGE is.
 */
export async function location(
  raw: string,
  flag: string,
  env: Record<string, string | undefined> = process.env,
  opts: { allowPublic?: boolean } = {},
): Promise<BackupLocation> {
  if (!raw.startsWith("s3://")) {
    const dir = resolve(raw);
    return {
      store: createFsStore(dir),
      prefix: "",
      label: dir,
      // The process umask (privateFiles) makes every file 0600 and directory 0700; the target itself may exist already.
      makePrivate: async () => {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        chmodSync(dir, 0o700);
      },
    };
  }
  const [bucket, ...rest] = raw
    .slice("s3://".length)
    .split("/")
    .filter((s) => s !== "");
  if (!bucket || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new ConfigError(`${flag}: expected s3://bucket/prefix, got ${JSON.stringify(raw)}`);
  if (!rest.every((s) => SEGMENT.test(s) && s !== "." && s !== "..")) throw new ConfigError(`${flag}: prefix segments may use A-Z a-z 0-9 . _ - only`);
  const need = (name: string) => {
    const v = env[name];
    if (!v) throw new ConfigError(`${name}: required for an s3:// ${flag} (with SVC_S3_ACCESS_KEY and SVC_S3_SECRET_KEY)`);
    return v;
  };
  const endpoint = need("SVC_S3_ENDPOINT");
  const store = await createS3Store({
    endpoint,
    bucket,
    accessKey: need("SVC_S3_ACCESS_KEY"),
    secretKey: need("SVC_S3_SECRET_KEY"),
    region: env.SVC_S3_REGION || undefined,
  });
  const prefix = rest.length ? `${rest.join("/")}/` : "";
  const label = `s3://${bucket}${rest.length ? `/${rest.join("/")}` : ""}`;
  return {
    store,
    prefix,
    label,
    // Objects are written without an ACL (private to the bucket's owner); a bucket policy could
    // still publish them, so a probe object is read back without credentials first.
    makePrivate: async () => {
      const key = `${prefix}.svc-private-check`;
      await store.put(key, new TextEncoder().encode("svc backup: checking that this prefix is private\n"));
      let status: number;
      try {
        const res = await fetch(`${endpoint.replace(/\/+$/, "")}/${bucket}/${key.split("/").map(encodeURIComponent).join("/")}`, {
          redirect: "manual",
          signal: AbortSignal.timeout(30_000),
        });
        status = res.status;
        await res.body?.cancel();
      } finally {
        await store.delete(key);
      }
      if (status === 200 && !opts.allowPublic) {
        throw new AppError(
          "conflict",
          `${label} can be read without credentials (an unsigned GET answered 200); a backup holds password and token hashes: make the bucket private, or pass --allow-public-target if it is reachable only from where it should be`,
        );
      }
    },
  };
}

/** Everything this process creates is private to its user (0700 directories, 0600 files): backups hold password and token hashes. */
function privateFiles(): void {
  process.umask(0o077);
}

/** A progress bar on stderr when it is a terminal. */
function progressBar(label: string): { fn: ProgressFn; bar: Progress } {
  const bar = new Progress(label);
  return { bar, fn: (p) => bar.update(p.done, p.total, `${p.phase} ${formatBytes(p.bytes)}/${formatBytes(p.totalBytes)}`) };
}

/** Prints an expected failure as one line and exits 1. */
function fail(error: unknown): never {
  if (error instanceof AppError || error instanceof ChecksumMismatch) {
    process.stderr.write(`${paint(process.stderr).red("svc:")} ${error.message}\n`);
    process.exit(1);
  }
  return exitOnConfigError(error);
}

/** `svc backup`. */
export const backupCmd = defineCommand({
  meta: {
    name: "backup",
    description:
      "Back up the database and every stored file it names (git packs, CI job logs) while the server runs (consistent snapshot), privately, with a manifest of SHA-256 checksums",
  },
  args: {
    to: {
      type: "string",
      required: true,
      description:
        "An empty or new directory (made 0700, files 0600), or s3://bucket/prefix (SVC_S3_ENDPOINT and keys; must not be readable without credentials)",
    },
    "allow-public-target": { type: "boolean", description: "Back up to an S3 prefix even though it answers unsigned reads" },
    "data-dir": { type: "string", description: "Data directory (overrides SVC_DATA_DIR)" },
  },
  async run({ args }) {
    privateFiles();
    const config = configOrExit({ SVC_DATA_DIR: args["data-dir"] });
    const target = await location(args.to, "--to", process.env, { allowPublic: args["allow-public-target"] }).catch(fail);
    const ctx = await openContext(config);
    const { fn, bar } = progressBar("backup");
    try {
      const m = await backup(ctx, target, { version: pkg.version, dataFiles: DATA_FILES, onProgress: fn }).catch(fail);
      bar.clear();
      process.stdout.write(
        `${JSON.stringify({ to: target.label, repositories: m.repositories, files: m.objects.length + 1 + (m.data_files?.length ?? 0), bytes: m.bytes, created_at: m.created_at })}\n`,
      );
    } finally {
      bar.clear();
      ctx.close();
    }
    // Explicitly: an S3 client's keep-alive sockets must not hold the process open.
    process.exit(0);
  },
});

/** `svc restore`. */
export const restoreCmd = defineCommand({
  meta: {
    name: "restore",
    description:
      "Restore a backup into an empty data directory (and an empty object store; with SVC_DATABASE_URL, into that empty PostgreSQL database), checking every checksum; never overwrites",
  },
  args: {
    from: { type: "string", required: true, description: "A backup directory, or s3://bucket/prefix (SVC_S3_ENDPOINT and keys)" },
    "data-dir": { type: "string", description: "Data directory to create (overrides SVC_DATA_DIR); must be absent or empty" },
  },
  async run({ args }) {
    privateFiles();
    const config = configOrExit({ SVC_DATA_DIR: args["data-dir"] });
    const source = await location(args.from, "--from").catch(fail);
    const objects = await createObjectStore(config.storage);
    const { fn, bar } = progressBar("restore");
    try {
      const m = await restore(source, { dataDir: config.dataDir, objects, database: config.database }, { dataFiles: DATA_FILES, onProgress: fn }).catch(fail);
      bar.clear();
      process.stdout.write(
        `${JSON.stringify({ from: source.label, data_dir: config.dataDir, repositories: m.repositories, files: m.objects.length + 1 + (m.data_files?.length ?? 0), bytes: m.bytes, backup_created_at: m.created_at })}\n`,
      );
    } finally {
      bar.clear();
    }
    process.exit(0);
  },
});
