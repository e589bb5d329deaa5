// The footer of `svc serve --help`: every setting with its default and what it does, so someone
// holding only the binary needs no README. test/unit/ops/settings-help.test.ts checks that every
// variable svc reads (SETTINGS in src/config.ts) is here, and nothing else.
import { SETTINGS } from "../src/config.ts";

/** [variable, default, meaning], grouped as the README's Configuration table is. */
export const SETTING_HELP: readonly (readonly [string, string, string])[] = [
  ["SVC_DATA_DIR", "./data", "SQLite file, local object store, temp files, SSH host keys"],
  [
    "SVC_DATABASE_URL",
    "unset",
    "postgres://user:password@host:5432/db: PostgreSQL 14+ holds the metadata instead of SQLite (several nodes); other schemes are refused",
  ],
  ["SVC_DATABASE_POOL", "16", "connections to PostgreSQL this process keeps at most (SVC_DATABASE_URL set)"],
  ["SVC_DATABASE_LISTEN_URL", "SVC_DATABASE_URL", "postgres://… for the one LISTEN connection, past a pooler in transaction mode (PgBouncer)"],
  ["SVC_HTTP_ADDR", "127.0.0.1:8080", "HTTP listen address; port 0 picks a free port"],
  ["SVC_BASE_URL", "http://{SVC_HTTP_ADDR}", "public base address used in clone URLs, links and mails"],
  ["SVC_SSH_ADDR", "unset", "SSH listen address (e.g. 127.0.0.1:2222); unset = no SSH"],
  ["SVC_SSH_PUBLIC", "from SVC_SSH_ADDR", "host:port written into ssh_clone_url"],
  ["SVC_STORAGE", "fs", "fs (objects under SVC_DATA_DIR/objects) or s3 (the SVC_S3_* settings)"],
  ["SVC_S3_ENDPOINT", "unset", "s3: the S3-compatible service's URL"],
  ["SVC_S3_BUCKET", "unset", "s3: the bucket"],
  ["SVC_S3_ACCESS_KEY", "unset", "s3: access key"],
  ["SVC_S3_SECRET_KEY", "unset", "s3: secret key"],
  ["SVC_S3_REGION", "unset", "s3: region, where the service needs one"],
  ["SVC_S3_PUBLIC_ENDPOINT", "SVC_S3_ENDPOINT", "s3: the address clients (runners, git lfs) reach the bucket by; presigned URLs name it"],
  ["SVC_RUNNER_CLAIM_WAIT_MS", "20000", "how long a runner's claim is held open when nothing is queued"],
  ["SVC_DRAIN_MS", "5000", "after SIGTERM, how long /readyz answers 503 (requests still served) before the server stops accepting"],
  ["SVC_RUNNER_HEARTBEAT_TIMEOUT_MS", "120000", "a running job whose runner sends no heartbeat for this long fails"],
  ["SVC_CI_CACHE_MAX", "10g", "CI dependency caches per repository (bytes or 500m, 10g): least recently used evicted beyond it"],
  ["SVC_CI_ARTIFACT_DAYS", "90", "days a CI artifact is kept before the sweep deletes it (1–3650); upload-artifact's retention-days may ask for fewer"],
  ["SVC_MAIL_TRANSPORT", "null", "null (drop every message), capture, smtp or cloudmail"],
  ["SVC_MAIL_FROM", "unset", "sender address (required for smtp and cloudmail)"],
  ["SVC_MAIL_DIR", "unset", "capture: one .eml file per message is written here"],
  [
    "SVC_NOTIFY_MAIL_FROM",
    "unset",
    'sender of notification mail; unset: "<name of SVC_MAIL_FROM>" <notifications@<SVC_BASE_URL\'s host>>, or SVC_MAIL_FROM when SVC_BASE_URL is unset or an IP address',
  ],
  ["SVC_ISSUE_RATE_LIMIT", "200", "issues and issue comments one person may create per hour; more answer 429 with Retry-After"],
  ["SVC_NOTIFY_MAIL_DELAY_MS", "10000", "how long a notification mail waits so a burst of activity on one thread folds into one mail (0–600000)"],
  ["SVC_MAIL_SMTP_HOST", "unset", "smtp: relay host or host:port (port 25 by default); cleartext, no STARTTLS"],
  ["SVC_MAIL_SMTP_USER", "unset", "smtp: user name (refused for a non-loopback relay without the next setting)"],
  ["SVC_MAIL_SMTP_PASSWORD", "unset", "smtp: password"],
  ["SVC_MAIL_SMTP_ALLOW_CLEARTEXT_AUTH", "0", "1 allows smtp credentials over cleartext to a non-loopback relay"],
  ["SVC_MAIL_CLOUD_REGION", "AWS_REGION", "cloudmail: the SES v2 region (credentials from the AWS default chain)"],
  ["SVC_MAIL_CLOUD_ENDPOINT", "unset", "cloudmail: endpoint override"],
  ["SVC_SIGNUP_LIMIT_PER_ADDRESS", "3", "signup-style mails an hour per address"],
  ["SVC_SIGNUP_LIMIT_GLOBAL", "300", "signup-style mails an hour in total"],
  ["SVC_LOGIN_LIMIT_PER_SOURCE", "30", "failed sign-ins an hour from one source address before attempts are spaced out"],
  ["SVC_LOGIN_LIMIT_PER_ACCOUNT", "10", "failed sign-ins an hour for one address, from unfamiliar sources"],
  ["SVC_AUTH_FAILURE_LIMIT_PER_SOURCE", "60", "unusable credentials an hour from one source address before it must wait"],
  ["SVC_RATE_BACKOFF_MAX_SECONDS", "900", "the longest wait the doubling delay reaches"],
  ["SVC_CHANGE_RUNS_LIMIT_PER_PERSON", "60", "calls an hour one person may make to start a change's runs before they are spaced out"],
  ["SVC_TRUST_PROXY", "0", "1: the source address is the last X-Forwarded-For entry (behind your proxy only)"],
  ["SVC_SSH_MAX_UNAUTHENTICATED", "64", "SSH connections not yet authenticated, in total"],
  ["SVC_SSH_MAX_UNAUTHENTICATED_PER_SOURCE", "8", "of those, from one source address"],
  ["SVC_SECRETS_KEY", "unset", "key sealing CI secrets: 32 bytes as base64 or 64 hex; unset = SVC_DATA_DIR/secrets.key (SQLite), none on PostgreSQL"],
  ["SVC_WEBHOOK_SECRET", "unset", "HMAC secret of inbound /webhooks/app and /webhooks/generic; unset = all 401"],
  ["SVC_WEBHOOK_ALLOW_PRIVATE", "0", "1 lets outbound webhook receivers be on loopback or private addresses"],
  ["SVC_MIRROR_ALLOW_PRIVATE", "as SVC_WEBHOOK_ALLOW_PRIVATE", "the same for mirror origins"],
  ["SVC_MIRROR_SYNC_INTERVAL_S", "600", "every mirror not synced for this long is synced again (at least 60)"],
  ["SVC_APP_ID", "unset", "app-based mirror provider: the app id (all three APP settings or none)"],
  ["SVC_APP_PRIVATE_KEY", "unset", "app-based mirror provider: its RSA private key (PEM; \\n escapes allowed)"],
  ["SVC_APP_API_URL", "unset", "app-based mirror provider: the provider's API base"],
  ["SVC_BILLING_PROVIDER", "unset", "stripe (with SVC_STRIPE_*); unset = nothing for sale"],
  ["SVC_STRIPE_SECRET_KEY", "unset", "stripe: the API key"],
  ["SVC_STRIPE_WEBHOOK_SECRET", "unset", "stripe: the signing secret of events at /webhooks/billing"],
  ["SVC_STRIPE_PRICE_ID", "unset", "stripe: the per-seat price"],
  ["SVC_STRIPE_API_BASE", "https://api.stripe.com", "where the provider's API is reached"],
  ["SVC_BILLING_FREE_SEATS", "5", "people an org on the free plan may hold (unlimited or a count)"],
  ["SVC_BILLING_FREE_MINUTES", "2000", "hosted CI minutes a month every namespace gets (unlimited or a count)"],
  ["SVC_BILLING_MINUTES_PER_SEAT", "1000", "hosted CI minutes a month each paid seat adds (unlimited or a count)"],
  ["SVC_METRICS_TOKEN", "unset", "bearer token (16+ characters) that turns on GET /metrics"],
  ["SVC_LOG", "info", "debug, info, warn or error; JSON lines on stderr"],
  ["SVC_GIT_MAX_PUSH", "2g", "largest git push: bytes or with a unit (500m, 2g), 1 KiB to 1 TiB"],
  ["SVC_GIT_MAX_OBJECT", "100m", "largest object a push or mirror sync may bring, once inflated: bytes or with a unit, 1 KiB to 1 TiB"],
  ["SVC_LFS_MAX_OBJECT", "5g", "largest Git LFS object a client may upload: bytes or with a unit, 1 KiB to 1 TiB"],
  ["SVC_ARCHIVE_MAX", "2g", "most uncompressed file bytes one archive download (.zip, .tar.gz) holds: bytes or with a unit"],
  ["SVC_ARCHIVE_MAX_ENTRIES", "200000", "most files and directories one archive download holds"],
  ["SVC_GIT_CACHE", "128m", "memory the git read caches hold together, bytes or with a unit"],
  ["SVC_GIT_MAX_NEGOTIATION", "500000", "most lines of each kind (want, have, shallow, ...) one fetch request may carry"],
];

/** The settings footer text: every setting, its default and its meaning, in columns. */
export function settingsHelp(): string {
  const described = new Set(SETTING_HELP.map(([n]) => n));
  // A setting added without a line here still shows (the unit test asks for its line).
  const rows = [...SETTING_HELP, ...SETTINGS.filter((s) => !described.has(s)).map((s) => [s, "", ""] as const)];
  const nameWidth = Math.max(...rows.map(([n]) => n.length));
  const defaultWidth = Math.max(...rows.map(([, d]) => d.length));
  return [
    "SETTINGS",
    "",
    "  Environment variables (flags above override some), checked at start: an unknown SVC_* name, a bad",
    "  value or a busy port exits 2 with one line naming the variable.",
    "",
    `  ${"VARIABLE".padEnd(nameWidth)}  ${"DEFAULT".padEnd(defaultWidth)}  MEANING`,
    ...rows.map(([n, d, m]) => `  ${n.padEnd(nameWidth)}  ${d.padEnd(defaultWidth)}  ${m}`.trimEnd()),
  ].join("\n");
}
