// Configuration from environment variables (DECISIONS §0), validated once at boot.
import { createPrivateKey } from "node:crypto";
import { resolve } from "node:path";
import { parseSecretsKey } from "./services/ci/seal.ts";

/** A boot failure: the CLI prints the message as one line and exits 2. */
export class ConfigError extends Error {}

export type MailConfig =
  | { transport: "null" }
  | { transport: "capture"; dir: string; from: string }
  | { transport: "smtp"; host: string; port: number; from: string; user?: string; password?: string }
  | { transport: "cloudmail"; region: string; from: string; endpoint?: string };

export type StorageConfig =
  | { kind: "fs"; root: string }
  | { kind: "s3"; endpoint: string; bucket: string; accessKey: string; secretKey: string; region?: string; publicEndpoint?: string };

/** A PostgreSQL database (DECISIONS §5 "Several nodes"): its URL and the pool's size. */
export interface DatabaseConfig {
  url: string;
  /** The database name from the URL (passed explicitly: Bun.sql lets PGDATABASE win over the URL). */
  name: string;
  pool: number;
  /**
   * SVC_DATABASE_LISTEN_URL: where the LISTEN connection goes when it must bypass a pooler that
   * cannot hold one (PgBouncer in transaction mode); unset = SVC_DATABASE_URL.
   */
  listen?: { url: string; name: string } | null;
}

/** The whole validated configuration of one `svc` process. */
export interface Config {
  dataDir: string;
  /** SVC_DATABASE_URL (PostgreSQL) and SVC_DATABASE_POOL; null = the embedded SQLite database in dataDir. */
  database: DatabaseConfig | null;
  httpHost: string;
  httpPort: number;
  /** Explicit SVC_BASE_URL, or null to derive it from the bound address. */
  baseUrl: string | null;
  ssh: { host: string; port: number; publicAddr: string | null } | null;
  storage: StorageConfig;
  runnerClaimWaitMs: number;
  /** SVC_DRAIN_MS: after SIGTERM, how long /readyz answers 503 before the server stops accepting (rolling upgrades). */
  drainMs: number;
  /** A running job whose runner sends no heartbeat for this long fails (default 2 minutes). */
  runnerHeartbeatTimeoutMs: number;
  /** SVC_CI_CACHE_MAX: CI dependency caches per repository, in bytes (and the largest one entry may be); default 10 GiB. */
  ciCacheMax: number;
  /** SVC_CI_ARTIFACT_DAYS: days a CI artifact is kept (1–3650, default 90); an upload's retention-days may ask for fewer. */
  ciArtifactDays: number;
  mail: MailConfig;
  /** SVC_NOTIFY_MAIL_DELAY_MS: how long a notification mail waits so a burst of activity folds into one (0–600000, default 10000). */
  notifyMailDelayMs: number;
  /** SVC_ISSUE_RATE_LIMIT: issues and issue comments one person may create per hour (default 200). */
  issueRateLimit: number;
  /** SVC_NOTIFY_MAIL_FROM: the sender of notification mail, or null for the rule (services/notify/mail.ts notificationSender). */
  notifyMailFrom: string | null;
  webhookSecret: string | null;
  /** SVC_SECRETS_KEY, decoded (32 bytes): seals CI secrets; null = the data dir's secrets.key (SQLite only). */
  secretsKey: Uint8Array | null;
  /** Outbound webhook receivers may be on loopback, private or link-local addresses (SVC_WEBHOOK_ALLOW_PRIVATE=1). */
  webhookAllowPrivate: boolean;
  /** Mirror origins may be on such addresses (SVC_MIRROR_ALLOW_PRIVATE, default: as SVC_WEBHOOK_ALLOW_PRIVATE). */
  mirrorAllowPrivate: boolean;
  /** How often every mirror is synced as a safety net, besides inbound pushes (SVC_MIRROR_SYNC_INTERVAL_S). */
  mirrorSyncIntervalMs: number;
  app: { id: string; privateKey: string; apiUrl: string } | null;
  billing: BillingConfig | null;
  logLevel: "debug" | "info" | "warn" | "error";
  signupLimitPerAddress: number;
  signupLimitGlobal: number;
  /** Bearer token that GET /metrics requires; null = no metrics endpoint. */
  metricsToken: string | null;
  /** Largest git push (request body over HTTP, pack over SSH) in bytes; SVC_GIT_MAX_PUSH. */
  gitMaxPush: number;
  /** Largest object a push or mirror sync may bring, once inflated, in bytes; SVC_GIT_MAX_OBJECT. */
  gitMaxObject: number;
  /** Largest Git LFS object a client may upload, in bytes; SVC_LFS_MAX_OBJECT. */
  lfsMaxObject: number;
  /** Uncompressed bytes of files one archive download may hold; SVC_ARCHIVE_MAX. */
  archiveMax: number;
  /** Entries (files, directories, symlinks) one archive download may hold; SVC_ARCHIVE_MAX_ENTRIES. */
  archiveMaxEntries: number;
  /** Bytes the git read caches (pack blocks, delta bases, pack and multi-pack indexes) hold together; SVC_GIT_CACHE. */
  gitCacheBytes: number;
  /** Lines of each kind (want, have, shallow, ref-prefix, ...) one upload-pack request may carry; SVC_GIT_MAX_NEGOTIATION. */
  gitMaxNegotiation: number;
  /** Rate limits of guessing and flooding (README "Operations"). */
  limits: Limits;
}

/** The payment provider and what the free plan and each paid seat include (README "Billing"). */
export interface BillingConfig {
  provider: "stripe";
  secretKey: string;
  webhookSecret: string;
  priceId: string;
  apiBase: string;
  /** People an org on the free plan may hold (members plus pending invitations); null = unlimited. */
  freeSeats: number | null;
  /** Hosted CI minutes a month every org gets; null = unlimited. */
  freeMinutes: number | null;
  /** Hosted CI minutes a month each paid seat adds; null = unlimited on a paid plan. */
  minutesPerSeat: number | null;
}

/** Rate limits where guessing or flooding pays (README "Operations: limits"). */
export interface Limits {
  /** Take the client address from the last X-Forwarded-For entry (behind one trusted proxy). */
  trustProxy: boolean;
  /** Failed sign-ins an hour one source address may make before its attempts are spaced out. */
  loginPerSource: number;
  /** Failed sign-ins an hour for one address (from sources it never signed in from) before attempts are spaced out. */
  loginPerAccount: number;
  /** Unusable credentials (tokens, registration tokens, Basic) an hour one source may present before it must wait. */
  credentialFailuresPerSource: number;
  /** The longest wait the doubling delay reaches, in milliseconds. */
  backoffMaxMs: number;
  /** Calls an hour one person may make to start a change's runs before they are spaced out. */
  changeRunsPerPerson: number;
  /** SSH connections not yet authenticated, in total and per source address. */
  sshUnauthenticated: number;
  sshUnauthenticatedPerSource: number;
}

const KNOWN: ReadonlySet<string> = new Set([
  "SVC_DATA_DIR",
  "SVC_SECRETS_KEY",
  "SVC_NOTIFY_MAIL_DELAY_MS",
  "SVC_NOTIFY_MAIL_FROM",
  "SVC_ISSUE_RATE_LIMIT",
  "SVC_DRAIN_MS",
  "SVC_DATABASE_URL",
  "SVC_DATABASE_POOL",
  "SVC_DATABASE_LISTEN_URL",
  "SVC_HTTP_ADDR",
  "SVC_BASE_URL",
  "SVC_SSH_ADDR",
  "SVC_SSH_PUBLIC",
  "SVC_STORAGE",
  "SVC_S3_ENDPOINT",
  "SVC_S3_BUCKET",
  "SVC_S3_ACCESS_KEY",
  "SVC_S3_SECRET_KEY",
  "SVC_S3_REGION",
  "SVC_S3_PUBLIC_ENDPOINT",
  "SVC_RUNNER_CLAIM_WAIT_MS",
  "SVC_RUNNER_HEARTBEAT_TIMEOUT_MS",
  "SVC_CI_CACHE_MAX",
  "SVC_CI_ARTIFACT_DAYS",
  "SVC_MAIL_TRANSPORT",
  "SVC_MAIL_DIR",
  "SVC_MAIL_SMTP_HOST",
  "SVC_MAIL_FROM",
  "SVC_MAIL_SMTP_USER",
  "SVC_MAIL_SMTP_PASSWORD",
  "SVC_MAIL_SMTP_ALLOW_CLEARTEXT_AUTH",
  "SVC_MAIL_CLOUD_REGION",
  "SVC_MAIL_CLOUD_ENDPOINT",
  "SVC_WEBHOOK_SECRET",
  "SVC_WEBHOOK_ALLOW_PRIVATE",
  "SVC_MIRROR_ALLOW_PRIVATE",
  "SVC_MIRROR_SYNC_INTERVAL_S",
  "SVC_APP_ID",
  "SVC_APP_PRIVATE_KEY",
  "SVC_APP_API_URL",
  "SVC_BILLING_PROVIDER",
  "SVC_STRIPE_SECRET_KEY",
  "SVC_STRIPE_WEBHOOK_SECRET",
  "SVC_STRIPE_PRICE_ID",
  "SVC_STRIPE_API_BASE",
  "SVC_BILLING_FREE_SEATS",
  "SVC_BILLING_FREE_MINUTES",
  "SVC_BILLING_MINUTES_PER_SEAT",
  "SVC_LOG",
  "SVC_SIGNUP_LIMIT_PER_ADDRESS",
  "SVC_SIGNUP_LIMIT_GLOBAL",
  "SVC_METRICS_TOKEN",
  "SVC_GIT_MAX_PUSH",
  "SVC_GIT_MAX_OBJECT",
  "SVC_LFS_MAX_OBJECT",
  "SVC_ARCHIVE_MAX",
  "SVC_ARCHIVE_MAX_ENTRIES",
  "SVC_GIT_CACHE",
  "SVC_GIT_MAX_NEGOTIATION",
  "SVC_TRUST_PROXY",
  "SVC_LOGIN_LIMIT_PER_SOURCE",
  "SVC_LOGIN_LIMIT_PER_ACCOUNT",
  "SVC_AUTH_FAILURE_LIMIT_PER_SOURCE",
  "SVC_RATE_BACKOFF_MAX_SECONDS",
  "SVC_CHANGE_RUNS_LIMIT_PER_PERSON",
  "SVC_SSH_MAX_UNAUTHENTICATED",
  "SVC_SSH_MAX_UNAUTHENTICATED_PER_SOURCE",
]);

/** Every configuration variable svc reads (the settings table of README.md). */
export const SETTINGS: readonly string[] = [...KNOWN];

/** SVC_GIT_MAX_PUSH when unset: 2 GiB, as the big hosts allow. */
export const DEFAULT_GIT_MAX_PUSH = 2 * 1024 ** 3;
/** SVC_CI_CACHE_MAX when unset: 10 GiB per repository, GitHub's limit. */
export const DEFAULT_CI_CACHE_MAX = 10 * 1024 ** 3;
/** SVC_GIT_MAX_OBJECT when unset: 100 MiB, the largest file the big hosts take. */
export const DEFAULT_GIT_MAX_OBJECT = 100 * 1024 ** 2;
/** SVC_LFS_MAX_OBJECT when unset: 5 GiB, the largest object one S3 PUT may carry. */
export const DEFAULT_LFS_MAX_OBJECT = 5 * 1024 ** 3;
/** SVC_GIT_MAX_NEGOTIATION when unset: far above what git clients send (git/upload-request.ts). */
export const DEFAULT_GIT_MAX_NEGOTIATION = 500_000;
/** SVC_GIT_CACHE when unset: 128 MiB for all git read caches together (README "Operations: memory"). */
export const DEFAULT_GIT_CACHE = 128 * 1024 ** 2;

/**
 * A size in bytes: digits, optionally followed by k, m or g (powers of 1024; "KiB", "MB" and
 * the like are read the same way). At least 1 KiB, at most 1 TiB.
 */
export function parseSize(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const m = /^(\d+)\s*(?:([kmgt])(?:i?b)?|b)?$/i.exec(value.trim());
  const scale = m?.[2] ? 1024 ** ("kmgt".indexOf(m[2].toLowerCase()) + 1) : 1;
  const bytes = m ? Number(m[1]) * scale : NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 1024 || bytes > 1024 ** 4) {
    throw new ConfigError(`${name}: expected a size such as 2147483648, 500m or 2g (1 KiB to 1 TiB), got ${JSON.stringify(value)}`);
  }
  return bytes;
}

/** Parses `host:port` (IPv6 in brackets); port 0 allowed when `allowZero`. */
export function parseHostPort(name: string, value: string, allowZero: boolean): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535 || (!allowZero && port === 0)) {
    throw new ConfigError(`${name}: expected host:port, got ${JSON.stringify(value)}`);
  }
  return { host: m[1]!.replace(/^\[|\]$/g, ""), port };
}

function httpUrl(name: string, value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new ConfigError(`${name}: not a URL: ${JSON.stringify(value)}`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new ConfigError(`${name}: must be an http or https URL`);
  return value.replace(/\/+$/, "");
}

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) <= 0) throw new ConfigError(`${name}: expected a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

function nonNegativeInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  if (!/^\d+$/.test(value)) throw new ConfigError(`${name}: expected a whole number (0 or more), got ${JSON.stringify(value)}`);
  return Number(value);
}

function flag(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === "") return fallback;
  if (value !== "0" && value !== "1") throw new ConfigError(`${name}: expected 0 or 1, got ${JSON.stringify(value)}`);
  return value === "1";
}

/** The app's private key as PEM (literal `\n` sequences allowed, as env files write them); must be an RSA key. */
function rsaPrivateKey(name: string, value: string): string {
  const pem = value.includes("-----BEGIN") ? value.replace(/\\n/g, "\n") : value;
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== "rsa") throw new ConfigError(`${name}: expected an RSA private key, got ${key.asymmetricKeyType}`);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(`${name}: not a PEM private key`);
  }
  return pem;
}

/** A count of 0 or more, or `unlimited` (null). */
function countOrUnlimited(name: string, value: string | undefined, fallback: number | null): number | null {
  if (value === undefined || value === "") return fallback;
  if (value === "unlimited") return null;
  if (!/^\d{1,9}$/.test(value)) throw new ConfigError(`${name}: expected a whole number or unlimited, got ${JSON.stringify(value)}`);
  return Number(value);
}

function required(env: Record<string, string | undefined>, name: string, why: string): string {
  const v = env[name];
  if (!v) throw new ConfigError(`${name}: required when ${why}`);
  return v;
}

/** SVC_DATABASE_URL: unset = SQLite; postgres:// or postgresql:// = PostgreSQL; anything else refused. */
function databaseConfig(env: Record<string, string | undefined>): DatabaseConfig | null {
  const raw = env.SVC_DATABASE_URL;
  const pool = positiveInt("SVC_DATABASE_POOL", env.SVC_DATABASE_POOL, 16);
  const listenRaw = env.SVC_DATABASE_LISTEN_URL;
  if (raw === undefined || raw === "") {
    if (listenRaw) throw new ConfigError("SVC_DATABASE_LISTEN_URL: only with SVC_DATABASE_URL (PostgreSQL)");
    return null;
  }
  const listen = listenRaw ? postgresUrl("SVC_DATABASE_LISTEN_URL", listenRaw) : null;
  return { ...postgresUrl("SVC_DATABASE_URL", raw), pool, listen };
}

/** A PostgreSQL URL (`variable` names it in errors) and the database it names. */
function postgresUrl(variable: string, raw: string): { url: string; name: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${variable}: expected a URL such as postgres://svc:secret@db.internal:5432/svc`);
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:")
    throw new ConfigError(
      `${variable}: ${url.protocol.replace(/:$/, "")} is not supported; use a postgres:// (or postgresql://) URL of PostgreSQL 14+, or unset it for the embedded SQLite database`,
    );
  const name = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (!url.hostname || !name || name.includes("/"))
    throw new ConfigError(`${variable}: name the host and the database, e.g. postgres://svc:secret@db.internal:5432/svc`);
  return { url: raw, name };
}

/** SVC_SECRETS_KEY: 32 bytes as base64 or 64 hex digits. Why the message never quotes it: it is a key. */
function secretsKeySetting(value: string | undefined): Uint8Array | null {
  if (!value) return null;
  try {
    return parseSecretsKey(value);
  } catch (e) {
    throw new ConfigError(`SVC_SECRETS_KEY: ${(e as Error).message}`);
  }
}

/** Reads and validates the configuration; throws ConfigError naming the variable at fault. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  for (const key of Object.keys(env)) {
    // SVC_TEST_* are test switches read where they act (SVC_TEST_TX_REPLAY, jobs/kind.ts), not settings.
    if (key.startsWith("SVC_") && !key.startsWith("SVC_TEST_") && !KNOWN.has(key)) throw new ConfigError(`${key}: unknown configuration variable`);
  }
  const dataDir = resolve(env.SVC_DATA_DIR || "./data");
  const database = databaseConfig(env);
  const http = parseHostPort("SVC_HTTP_ADDR", env.SVC_HTTP_ADDR || "127.0.0.1:8080", true);
  const baseUrl = env.SVC_BASE_URL ? httpUrl("SVC_BASE_URL", env.SVC_BASE_URL) : null;

  let ssh: Config["ssh"] = null;
  if (env.SVC_SSH_ADDR) {
    const a = parseHostPort("SVC_SSH_ADDR", env.SVC_SSH_ADDR, true);
    let publicAddr: string | null = null;
    if (env.SVC_SSH_PUBLIC) {
      const p = parseHostPort("SVC_SSH_PUBLIC", env.SVC_SSH_PUBLIC, false);
      publicAddr = `${p.host.includes(":") ? `[${p.host}]` : p.host}:${p.port}`;
    }
    ssh = { ...a, publicAddr };
  } else if (env.SVC_SSH_PUBLIC) {
    throw new ConfigError("SVC_SSH_PUBLIC: set without SVC_SSH_ADDR");
  }

  const storageKind = env.SVC_STORAGE || "fs";
  let storage: StorageConfig;
  if (storageKind === "fs") storage = { kind: "fs", root: resolve(dataDir, "objects") };
  else if (storageKind === "s3") {
    storage = {
      kind: "s3",
      endpoint: httpUrl("SVC_S3_ENDPOINT", required(env, "SVC_S3_ENDPOINT", "SVC_STORAGE=s3")),
      bucket: required(env, "SVC_S3_BUCKET", "SVC_STORAGE=s3"),
      accessKey: required(env, "SVC_S3_ACCESS_KEY", "SVC_STORAGE=s3"),
      secretKey: required(env, "SVC_S3_SECRET_KEY", "SVC_STORAGE=s3"),
      region: env.SVC_S3_REGION || undefined,
    };
    if (env.SVC_S3_PUBLIC_ENDPOINT) storage.publicEndpoint = httpUrl("SVC_S3_PUBLIC_ENDPOINT", env.SVC_S3_PUBLIC_ENDPOINT);
  } else throw new ConfigError(`SVC_STORAGE: expected fs or s3, got ${JSON.stringify(storageKind)}`);

  const mail = loadMail(env);

  let app: Config["app"] = null;
  if (env.SVC_APP_ID) {
    const apiUrl = httpUrl("SVC_APP_API_URL", required(env, "SVC_APP_API_URL", "SVC_APP_ID is set"));
    app = { id: env.SVC_APP_ID, privateKey: rsaPrivateKey("SVC_APP_PRIVATE_KEY", required(env, "SVC_APP_PRIVATE_KEY", "SVC_APP_ID is set")), apiUrl };
  }
  if (!app && (env.SVC_APP_PRIVATE_KEY || env.SVC_APP_API_URL))
    throw new ConfigError("SVC_APP_ID: required when SVC_APP_PRIVATE_KEY or SVC_APP_API_URL is set");
  const webhookAllowPrivate = flag("SVC_WEBHOOK_ALLOW_PRIVATE", env.SVC_WEBHOOK_ALLOW_PRIVATE, false);
  const mirrorAllowPrivate = flag("SVC_MIRROR_ALLOW_PRIVATE", env.SVC_MIRROR_ALLOW_PRIVATE, webhookAllowPrivate);
  const mirrorSyncIntervalS = positiveInt("SVC_MIRROR_SYNC_INTERVAL_S", env.SVC_MIRROR_SYNC_INTERVAL_S, 600);
  if (mirrorSyncIntervalS < 60) throw new ConfigError(`SVC_MIRROR_SYNC_INTERVAL_S: at least 60 seconds, got ${mirrorSyncIntervalS}`);

  let billing: Config["billing"] = null;
  if (env.SVC_BILLING_PROVIDER) {
    if (env.SVC_BILLING_PROVIDER !== "stripe") throw new ConfigError(`SVC_BILLING_PROVIDER: expected stripe, got ${JSON.stringify(env.SVC_BILLING_PROVIDER)}`);
    billing = {
      provider: "stripe",
      secretKey: required(env, "SVC_STRIPE_SECRET_KEY", "SVC_BILLING_PROVIDER=stripe"),
      webhookSecret: required(env, "SVC_STRIPE_WEBHOOK_SECRET", "SVC_BILLING_PROVIDER=stripe"),
      priceId: required(env, "SVC_STRIPE_PRICE_ID", "SVC_BILLING_PROVIDER=stripe"),
      apiBase: env.SVC_STRIPE_API_BASE ? httpUrl("SVC_STRIPE_API_BASE", env.SVC_STRIPE_API_BASE) : "https://api.stripe.com",
      freeSeats: countOrUnlimited("SVC_BILLING_FREE_SEATS", env.SVC_BILLING_FREE_SEATS, 5),
      freeMinutes: countOrUnlimited("SVC_BILLING_FREE_MINUTES", env.SVC_BILLING_FREE_MINUTES, 2000),
      minutesPerSeat: countOrUnlimited("SVC_BILLING_MINUTES_PER_SEAT", env.SVC_BILLING_MINUTES_PER_SEAT, 1000),
    };
  }

  const logLevel = env.SVC_LOG || "info";
  if (!["debug", "info", "warn", "error"].includes(logLevel))
    throw new ConfigError(`SVC_LOG: expected debug, info, warn or error, got ${JSON.stringify(logLevel)}`);

  const metricsToken = env.SVC_METRICS_TOKEN || null;
  // Why: the token guards internals (routes, queue depths); a short one is guessable.
  if (metricsToken !== null && (metricsToken.length < 16 || /\s/.test(metricsToken))) {
    throw new ConfigError("SVC_METRICS_TOKEN: expected at least 16 characters without spaces");
  }

  return {
    dataDir,
    database,
    httpHost: http.host,
    httpPort: http.port,
    baseUrl,
    ssh,
    storage,
    runnerClaimWaitMs: positiveInt("SVC_RUNNER_CLAIM_WAIT_MS", env.SVC_RUNNER_CLAIM_WAIT_MS, 20000),
    drainMs: nonNegativeInt("SVC_DRAIN_MS", env.SVC_DRAIN_MS, 5000),
    runnerHeartbeatTimeoutMs: positiveInt("SVC_RUNNER_HEARTBEAT_TIMEOUT_MS", env.SVC_RUNNER_HEARTBEAT_TIMEOUT_MS, 120000),
    ciCacheMax: parseSize("SVC_CI_CACHE_MAX", env.SVC_CI_CACHE_MAX, DEFAULT_CI_CACHE_MAX),
    ciArtifactDays: artifactDays(env.SVC_CI_ARTIFACT_DAYS),
    mail,
    notifyMailDelayMs: notifyMailDelay(env),
    notifyMailFrom: senderSetting("SVC_NOTIFY_MAIL_FROM", env.SVC_NOTIFY_MAIL_FROM),
    issueRateLimit: positiveInt("SVC_ISSUE_RATE_LIMIT", env.SVC_ISSUE_RATE_LIMIT, 200),
    webhookSecret: env.SVC_WEBHOOK_SECRET || null,
    secretsKey: secretsKeySetting(env.SVC_SECRETS_KEY),
    webhookAllowPrivate,
    mirrorAllowPrivate,
    mirrorSyncIntervalMs: mirrorSyncIntervalS * 1000,
    app,
    billing,
    logLevel: logLevel as Config["logLevel"],
    signupLimitPerAddress: positiveInt("SVC_SIGNUP_LIMIT_PER_ADDRESS", env.SVC_SIGNUP_LIMIT_PER_ADDRESS, 3),
    signupLimitGlobal: positiveInt("SVC_SIGNUP_LIMIT_GLOBAL", env.SVC_SIGNUP_LIMIT_GLOBAL, 300),
    metricsToken,
    gitMaxPush: parseSize("SVC_GIT_MAX_PUSH", env.SVC_GIT_MAX_PUSH, DEFAULT_GIT_MAX_PUSH),
    gitMaxObject: parseSize("SVC_GIT_MAX_OBJECT", env.SVC_GIT_MAX_OBJECT, DEFAULT_GIT_MAX_OBJECT),
    lfsMaxObject: parseSize("SVC_LFS_MAX_OBJECT", env.SVC_LFS_MAX_OBJECT, DEFAULT_LFS_MAX_OBJECT),
    archiveMax: parseSize("SVC_ARCHIVE_MAX", env.SVC_ARCHIVE_MAX, 2 * 1024 ** 3),
    archiveMaxEntries: positiveInt("SVC_ARCHIVE_MAX_ENTRIES", env.SVC_ARCHIVE_MAX_ENTRIES, 200_000),
    gitCacheBytes: parseSize("SVC_GIT_CACHE", env.SVC_GIT_CACHE, DEFAULT_GIT_CACHE),
    gitMaxNegotiation: positiveInt("SVC_GIT_MAX_NEGOTIATION", env.SVC_GIT_MAX_NEGOTIATION, DEFAULT_GIT_MAX_NEGOTIATION),
    limits: loadLimits(env),
  };
}

/** A sender address setting (`addr` or `Name <addr>`): one header line, at most 320 characters; unset or empty: null. */
function senderSetting(name: string, raw: string | undefined): string | null {
  if (!raw) return null;
  if (raw.length > 320 || /[\r\n\0]/.test(raw) || !/@/.test(raw))
    throw new ConfigError(`${name}: expected one address (addr or Name <addr>), got ${JSON.stringify(raw.slice(0, 80))}`);
  return raw.trim();
}

function artifactDays(raw: string | undefined): number {
  const days = positiveInt("SVC_CI_ARTIFACT_DAYS", raw, 90);
  if (days > 3650) throw new ConfigError(`SVC_CI_ARTIFACT_DAYS: at most 3650 (ten years), got ${days}`);
  return days;
}

function notifyMailDelay(env: Record<string, string | undefined>): number {
  const ms = nonNegativeInt("SVC_NOTIFY_MAIL_DELAY_MS", env.SVC_NOTIFY_MAIL_DELAY_MS, 10_000);
  if (ms > 600_000) throw new ConfigError(`SVC_NOTIFY_MAIL_DELAY_MS: at most 600000 (10 minutes), got ${ms}`);
  return ms;
}

function loadLimits(env: Record<string, string | undefined>): Limits {
  const trust = env.SVC_TRUST_PROXY ?? "0";
  if (trust !== "0" && trust !== "1") throw new ConfigError(`SVC_TRUST_PROXY: expected 0 or 1, got ${JSON.stringify(trust)}`);
  const global = positiveInt("SVC_SSH_MAX_UNAUTHENTICATED", env.SVC_SSH_MAX_UNAUTHENTICATED, 64);
  const perSource = positiveInt("SVC_SSH_MAX_UNAUTHENTICATED_PER_SOURCE", env.SVC_SSH_MAX_UNAUTHENTICATED_PER_SOURCE, 8);
  if (perSource > global) throw new ConfigError("SVC_SSH_MAX_UNAUTHENTICATED_PER_SOURCE: larger than SVC_SSH_MAX_UNAUTHENTICATED");
  return {
    trustProxy: trust === "1",
    loginPerSource: positiveInt("SVC_LOGIN_LIMIT_PER_SOURCE", env.SVC_LOGIN_LIMIT_PER_SOURCE, 30),
    loginPerAccount: positiveInt("SVC_LOGIN_LIMIT_PER_ACCOUNT", env.SVC_LOGIN_LIMIT_PER_ACCOUNT, 10),
    credentialFailuresPerSource: positiveInt("SVC_AUTH_FAILURE_LIMIT_PER_SOURCE", env.SVC_AUTH_FAILURE_LIMIT_PER_SOURCE, 60),
    backoffMaxMs: positiveInt("SVC_RATE_BACKOFF_MAX_SECONDS", env.SVC_RATE_BACKOFF_MAX_SECONDS, 900) * 1000,
    changeRunsPerPerson: positiveInt("SVC_CHANGE_RUNS_LIMIT_PER_PERSON", env.SVC_CHANGE_RUNS_LIMIT_PER_PERSON, 60),
    sshUnauthenticated: global,
    sshUnauthenticatedPerSource: perSource,
  };
}

function loadMail(env: Record<string, string | undefined>): MailConfig {
  const transport = env.SVC_MAIL_TRANSPORT || "null";
  switch (transport) {
    case "null":
      return { transport: "null" };
    case "capture":
      return { transport: "capture", dir: resolve(required(env, "SVC_MAIL_DIR", "SVC_MAIL_TRANSPORT=capture")), from: env.SVC_MAIL_FROM || "svc@localhost" };
    case "smtp": {
      const raw = required(env, "SVC_MAIL_SMTP_HOST", "SVC_MAIL_TRANSPORT=smtp");
      const hp = raw.includes(":") ? parseHostPort("SVC_MAIL_SMTP_HOST", raw, false) : { host: raw, port: 25 };
      const from = required(env, "SVC_MAIL_FROM", "SVC_MAIL_TRANSPORT=smtp");
      const user = env.SVC_MAIL_SMTP_USER || undefined;
      const password = env.SVC_MAIL_SMTP_PASSWORD || undefined;
      const loopback = hp.host === "localhost" || hp.host === "::1" || hp.host.startsWith("127.");
      // Why: the relay is cleartext (no STARTTLS); credentials may cross a network only when the operator says so.
      if ((user || password) && !loopback && env.SVC_MAIL_SMTP_ALLOW_CLEARTEXT_AUTH !== "1") {
        throw new ConfigError("SVC_MAIL_SMTP_USER: cleartext SMTP credentials to a non-loopback host need SVC_MAIL_SMTP_ALLOW_CLEARTEXT_AUTH=1");
      }
      return { transport: "smtp", host: hp.host, port: hp.port, from, user, password };
    }
    case "cloudmail":
      return {
        transport: "cloudmail",
        region: env.SVC_MAIL_CLOUD_REGION || env.AWS_REGION || env.AWS_DEFAULT_REGION || "us-east-1",
        from: required(env, "SVC_MAIL_FROM", "SVC_MAIL_TRANSPORT=cloudmail"),
        // Only to point the API client at a stand-in (tests) or a regional/FIPS endpoint.
        endpoint: env.SVC_MAIL_CLOUD_ENDPOINT ? httpUrl("SVC_MAIL_CLOUD_ENDPOINT", env.SVC_MAIL_CLOUD_ENDPOINT) : undefined,
      };
    default:
      throw new ConfigError(`SVC_MAIL_TRANSPORT: expected null, capture, smtp or cloudmail, got ${JSON.stringify(transport)}`);
  }
}
