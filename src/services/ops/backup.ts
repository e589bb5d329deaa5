// Backup and restore (DECISIONS §4): a consistent snapshot of the database taken while the
// server runs (SQLite's VACUUM INTO), then every file in the object store that snapshot names, of
// every kind the service writes (object-kinds.ts: git packs, CI job logs; a new kind joins by
// declaring itself there). Stored files are immutable, and a file the database names is deleted
// only after it stops naming it (packs an hour after being replaced), so copying them after the
// database is enough. A manifest with every file's size and SHA-256 is written last: a target
// with a manifest holds a complete backup.
//
// On PostgreSQL (issue 27, plan-27 §3.2) the backup has the same format: the database part is a
// SQLite file, made by copying every table (src/db/copy.ts) inside one REPEATABLE READ, READ ONLY
// transaction (a consistent view while nodes write) into a fresh file migrated to the current
// SQLite migrations. One format for both databases: a backup of either restores onto either;
// restore into PostgreSQL (SVC_DATABASE_URL set) copies the backup's file into the database,
// which must be empty, with the verification `svc migrate-db` uses.
//
// Layout under the target (a directory or an S3 prefix):
//   svc.db                                  the database snapshot
//   objects/<key>                           each stored file under its object-store key, e.g.
//                                           objects/repos/<repo>/packs/pack-<sha>.{pack,idx}
//                                           objects/repos/<repo>/ci-logs/<job>/<offset>-<id>
//   data/<name>                             files of the data dir the caller names (the SSH
//                                           host keys: clients pin them)
//   manifest.json
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DatabaseConfig } from "../../config.ts";
import { migrate, openDatabase, openDatabaseFile, snapshotDatabase } from "../../db/client.ts";
import { copyTables, nonEmptyTables, openSqliteFile, verifyTables } from "../../db/copy.ts";
import type { Database, Queryable } from "../../db/database.ts";
import { AppError, Conflict, Invalid, NotFound } from "../../errors.ts";
import { createFsStore } from "../../storage/fs-store.ts";
import type { ObjectStore } from "../../storage/object-store.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import { OBJECT_KINDS, kindOf, objectRoots, type ObjectKind, type StoredFile } from "./object-kinds.ts";
import * as store from "./store.ts";
import { HOST_KEY_FILES, HOST_KEY_NAMES, readHostKeyFiles } from "./host-keys.ts";
import { copyIntoPg, storeHostKeys } from "./migrate-db.ts";
import { copyObject, eachLimited } from "./transfer.ts";

/** Where a backup goes or comes from: a store and a key prefix ("" or ending in "/"). */
export interface BackupLocation {
  store: ObjectStore;
  prefix: string;
  /** For messages: the directory or s3:// address as the operator wrote it. */
  label: string;
  /**
   * Makes (or checks that) the target private before anything is written, once it is known to be
   * empty: a backup holds password and token hashes. A directory becomes 0700; an S3 prefix must
   * not be readable without credentials.
   */
  makePrivate?(): Promise<void>;
}

/** One file of a backup. */
export interface ManifestFile {
  key: string;
  size: number;
  sha256: string;
}

/** manifest.json. Version 1 (before CI logs were backed up) held packs only; version 2 adds `kinds` and `data_files`. */
export interface Manifest {
  format: "svc-backup";
  version: 1 | 2;
  svc_version: string;
  created_at: number;
  database: ManifestFile & { migrations: string[] };
  repositories: number;
  objects: ManifestFile[];
  /** Files and bytes of each kind of stored file (object-kinds.ts), including kinds with none. */
  kinds?: Record<string, { files: number; bytes: number }>;
  /** Files of the data dir (key `data/<name>`): the SSH host keys, so clients see the same host. */
  data_files?: ManifestFile[];
  bytes: number;
}

/** Progress of a long operation: `done` of `total` files, `bytes` so far of `totalBytes`. */
export type ProgressFn = (p: { phase: "database" | "objects"; done: number; total: number; bytes: number; totalBytes: number }) => void;

const MANIFEST = "manifest.json";
const DATABASE = "svc.db";
const OBJECTS = "objects/";
const DATA = "data/";
/** Files copied at once. */
const PARALLEL = 4;

/**
 * Writes the committed state of the PostgreSQL database `db` at one instant into a new SQLite file
 * `dest` migrated to the current SQLite migrations: every table copied inside one REPEATABLE READ,
 * READ ONLY transaction, then verified (row counts and primary-key checksums per table).
 */
export async function snapshotPg(db: Database, dest: string): Promise<void> {
  const file = openSqliteFile(dest, { create: true });
  try {
    file.migrate();
    const target = file.q;
    const pg = db.read as unknown as {
      transaction(fn: (tx: Queryable) => Promise<void>, config: { isolationLevel: "repeatable read"; accessMode: "read only" }): Promise<void>;
    };
    await pg.transaction(
      async (tx) => {
        file.exec("BEGIN");
        try {
          await copyTables(tx, target);
          const bad = (await verifyTables(tx, target)).filter((c) => !c.ok);
          if (bad.length)
            throw new AppError("internal", `the database snapshot did not verify: ${bad.map((c) => `${c.table} (${c.source} → ${c.target})`).join(", ")}`);
          file.exec("COMMIT");
        } catch (error) {
          file.exec("ROLLBACK");
          throw error;
        }
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
  } finally {
    file.close();
  }
}

async function isEmpty(loc: BackupLocation): Promise<boolean> {
  for await (const _ of loc.store.list(loc.prefix)) return false;
  return true;
}

/**
 * Copies a database snapshot, every stored file it names and the data dir's `dataFiles` (those
 * present) to `target`; answers the manifest written.
 */
export async function backup(
  ctx: Ctx,
  target: BackupLocation,
  opts: { version: string; dataFiles?: readonly string[]; onProgress?: ProgressFn },
): Promise<Manifest> {
  if (!(await isEmpty(target))) throw Conflict(`${target.label} is not empty; back up into a new directory or prefix`);
  await target.makePrivate?.();
  const work = join(ctx.tmpDir, `backup-${newId()}`);
  mkdirSync(work, { recursive: true });
  const local = createFsStore(work);
  try {
    opts.onProgress?.({ phase: "database", done: 0, total: 1, bytes: 0, totalBytes: 0 });
    if (ctx.db.dialect === "pg") await snapshotPg(ctx.db, join(work, DATABASE));
    else snapshotDatabase(ctx.config.dataDir, join(work, DATABASE));
    const snap = openDatabaseFile(join(work, DATABASE));
    const byKind = new Map<ObjectKind, StoredFile[]>();
    let repositories: number;
    let migrations: string[];
    try {
      for (const kind of OBJECT_KINDS) byKind.set(kind, await kind.backup(snap.q));
      repositories = (await store.repoIds(snap.q)).size;
      migrations = (await store.appliedMigrations(snap.q)).sort();
    } finally {
      snap.close();
    }
    const dbSize = statSync(join(work, DATABASE)).size;
    const dbSha = await copyObject(local, DATABASE, dbSize, target.store, `${target.prefix}${DATABASE}`, { tmpDir: ctx.tmpDir });

    const files = [...byKind.values()].flat();
    const totalBytes = files.reduce((n, f) => n + f.size, 0);
    let done = 0;
    let bytes = 0;
    const report = () => opts.onProgress?.({ phase: "objects", done, total: files.length, bytes, totalBytes });
    report();
    const objects: ManifestFile[] = [];
    await eachLimited(files, PARALLEL, async (f) => {
      const found = await ctx.store.stat(f.key);
      // Why fail: a file the snapshot names can only vanish if the database stopped naming it and
      // it was swept since (a replaced pack: over an hour); the backup would not be the snapshot.
      if (!found) throw new AppError("internal", `${f.key}: named by the database snapshot but missing from the object store (run svc fsck)`);
      if (found.size !== f.size && !f.sizeVaries) throw new AppError("internal", `${f.key}: ${found.size} bytes stored, ${f.size} recorded (run svc fsck)`);
      const sha256 = await copyObject(ctx.store, f.key, found.size, target.store, `${target.prefix}${OBJECTS}${f.key}`, {
        tmpDir: ctx.tmpDir,
        onBytes: (n) => {
          bytes += n;
          report();
        },
      });
      objects.push({ key: f.key, size: found.size, sha256 });
      done++;
      report();
    });
    objects.sort((a, b) => (a.key < b.key ? -1 : 1));
    const dataFiles: ManifestFile[] = [];
    const dataDir = createFsStore(ctx.config.dataDir);
    for (const name of opts.dataFiles ?? []) {
      const path = join(ctx.config.dataDir, name);
      if (!existsSync(path)) continue;
      const size = statSync(path).size;
      dataFiles.push({
        key: `${DATA}${name}`,
        size,
        sha256: await copyObject(dataDir, name, size, target.store, `${target.prefix}${DATA}${name}`, { tmpDir: ctx.tmpDir }),
      });
    }
    const kinds = Object.fromEntries([...byKind].map(([k, list]) => [k.name, { files: list.length, bytes: list.reduce((n, f) => n + f.size, 0) }]));
    const manifest: Manifest = {
      format: "svc-backup",
      version: 2,
      svc_version: opts.version,
      created_at: now(),
      database: { key: DATABASE, size: dbSize, sha256: dbSha, migrations },
      repositories,
      objects,
      kinds,
      data_files: dataFiles,
      bytes: totalBytes + dbSize + dataFiles.reduce((n, f) => n + f.size, 0),
    };
    await target.store.put(`${target.prefix}${MANIFEST}`, new TextEncoder().encode(`${JSON.stringify(manifest, null, 1)}\n`));
    return manifest;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Reads and checks a backup's manifest; `dataFiles` are the names of data-dir files it may hold. */
export async function readManifest(source: BackupLocation, dataFiles: readonly string[] = []): Promise<Manifest> {
  const bytes = await source.store.get(`${source.prefix}${MANIFEST}`);
  if (!bytes) throw NotFound(`${source.label} holds no complete backup (no ${MANIFEST})`);
  let m: Manifest;
  try {
    m = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw Invalid(`${source.label}: ${MANIFEST} is not JSON`);
  }
  const hashed = (f: unknown): f is ManifestFile =>
    typeof f === "object" &&
    f !== null &&
    Number.isSafeInteger((f as ManifestFile).size) &&
    (f as ManifestFile).size >= 0 &&
    /^[0-9a-f]{64}$/.test(String((f as ManifestFile).sha256));
  // Keys are checked before use: a manifest must not make restore write anything but files of a
  // kind the service writes, under their own keys.
  const storedFile = (f: unknown): f is ManifestFile => hashed(f) && kindOf(String((f as ManifestFile).key)) !== null;
  const dataFile = (f: unknown): f is ManifestFile => hashed(f) && dataFiles.some((n) => (f as ManifestFile).key === `${DATA}${n}`);
  if (
    m?.format !== "svc-backup" ||
    (m.version !== 1 && m.version !== 2) ||
    !hashed(m.database) ||
    m.database.key !== DATABASE ||
    !Array.isArray(m.objects) ||
    !m.objects.every(storedFile) ||
    (m.data_files !== undefined && (!Array.isArray(m.data_files) || !m.data_files.every(dataFile)))
  ) {
    throw Invalid(`${source.label}: ${MANIFEST} is not a backup manifest this version understands`);
  }
  return m;
}

/** Whether a data dir may receive a restore: absent, or an empty directory. */
function dataDirEmpty(dir: string): boolean {
  if (!existsSync(dir)) return true;
  return statSync(dir).isDirectory() && readdirSync(dir).length === 0;
}

/** Refuses a PostgreSQL restore target that holds any row (checked before anything is copied). */
async function requireEmptyPg(target: DatabaseConfig): Promise<void> {
  const [{ openPg }, { migratePg }, { appErrorOf }] = await Promise.all([
    import("../../db/pg/client.ts"),
    import("../../db/pg/migrate.ts"),
    import("../../db/pg/errors.ts"),
  ]);
  const pg = openPg({ ...target, pool: 1 });
  try {
    await migratePg(pg.sql);
    const full = await nonEmptyTables(pg.db.read);
    if (full.length) throw Conflict(`the database of SVC_DATABASE_URL is not empty (${full.join(", ")} hold rows); restore into an empty database`);
  } catch (error) {
    throw appErrorOf(error) ?? error;
  } finally {
    await pg.close().catch(() => {});
  }
}

/**
 * Restores the backup at `source` into `dataDir` (absent or empty) and `objects` (the configured
 * object store, which must hold no repository data): every file is checked against the manifest,
 * objects first, the database last, then pending migrations are applied. With `database` (a
 * PostgreSQL installation) the backup's database file is migrated and copied into that database,
 * which must be empty, in one verified transaction; the data dir then holds no database.
 */
export async function restore(
  source: BackupLocation,
  dest: { dataDir: string; objects: ObjectStore; database?: DatabaseConfig | null },
  opts: { dataFiles?: readonly string[]; onProgress?: ProgressFn } = {},
): Promise<Manifest> {
  const manifest = await readManifest(source, opts.dataFiles);
  if (!dataDirEmpty(dest.dataDir)) throw Conflict(`${dest.dataDir} is not empty; restore into a new or empty data directory`);
  if (dest.database) await requireEmptyPg(dest.database);
  for (const root of objectRoots()) {
    for await (const o of dest.objects.list(root)) throw Conflict(`the object store already holds repository data (${o.key}); restore into an empty one`);
  }
  const tmpDir = join(dest.dataDir, "tmp");
  mkdirSync(tmpDir, { recursive: true });
  const totalBytes = manifest.bytes;
  let done = 0;
  let bytes = 0;
  const total = manifest.objects.length + 1;
  const report = (phase: "database" | "objects") => opts.onProgress?.({ phase, done, total, bytes, totalBytes });
  report("objects");
  await eachLimited(manifest.objects, PARALLEL, async (f) => {
    await copyObject(source.store, `${source.prefix}${OBJECTS}${f.key}`, f.size, dest.objects, f.key, {
      tmpDir,
      expectSha256: f.sha256,
      onBytes: (n) => {
        bytes += n;
        report("objects");
      },
    });
    done++;
    report("objects");
  });
  // Data-dir files (host keys) next, each checked; private to the service's user.
  const dataDir = createFsStore(dest.dataDir);
  for (const f of manifest.data_files ?? []) {
    const name = f.key.slice(DATA.length);
    await copyObject(source.store, `${source.prefix}${f.key}`, f.size, dataDir, name, { tmpDir, expectSha256: f.sha256 });
    chmodSync(join(dest.dataDir, name), 0o600);
  }
  // The database goes in last, under its final name only once complete and checked.
  const staging = createFsStore(tmpDir);
  const stagedKey = `restore-${newId()}.db`;
  await copyObject(source.store, `${source.prefix}${manifest.database.key}`, manifest.database.size, staging, stagedKey, {
    tmpDir,
    expectSha256: manifest.database.sha256,
    onBytes: (n) => {
      bytes += n;
      report("database");
    },
  });
  if (dest.database) {
    const staged = join(tmpDir, stagedKey);
    const file = openSqliteFile(staged);
    try {
      // The backup may be older than this version: its file is brought to the current schema first.
      file.migrate();
      // Host keys: a backup of a PostgreSQL installation holds them as node_secrets rows (copied
      // with the tables); one of a SQLite installation as data files, stored now in the same
      // transaction, so the restored nodes present the keys clients know.
      await copyIntoPg(file.q, dest.database, {
        beforeCommit: async (tx) => {
          await storeHostKeys(tx, readHostKeyFiles(dest.dataDir), { replace: false });
        },
      });
    } finally {
      file.close();
      rmSync(staged, { force: true });
    }
    // In the database now; a PostgreSQL node keeps no key files.
    for (const name of HOST_KEY_FILES) rmSync(join(dest.dataDir, name), { force: true });
    done++;
    report("database");
    return manifest;
  }
  renameSync(join(tmpDir, stagedKey), join(dest.dataDir, "svc.db"));
  done++;
  report("database");
  const { db, sqlite, close } = openDatabase(dest.dataDir);
  try {
    migrate(sqlite);
    // A backup of a PostgreSQL installation holds its host keys as node_secrets rows; SQLite keeps
    // them as files, so they are written out (those the backup did not carry as files).
    const stored = await store.nodeSecretValues(db.read, Object.values(HOST_KEY_NAMES));
    for (const [name, value] of stored) {
      const path = join(dest.dataDir, name);
      if (!existsSync(path)) writeFileSync(path, value, { mode: 0o600 });
    }
  } finally {
    close();
  }
  return manifest;
}
