// loadConfig as a table (DECISIONS §0): defaults, valid settings, and every malformed variable
// refused with a one-line reason naming that variable.
import { describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { resolve } from "node:path";
import { ConfigError, loadConfig } from "../../src/config.ts";

const S3 = { SVC_STORAGE: "s3", SVC_S3_ENDPOINT: "http://127.0.0.1:9000", SVC_S3_BUCKET: "b", SVC_S3_ACCESS_KEY: "ak", SVC_S3_SECRET_KEY: "sk" };
const RSA_PEM = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const EC_PEM = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const APP = { SVC_APP_ID: "4242", SVC_APP_API_URL: "https://api.example.com", SVC_APP_PRIVATE_KEY: RSA_PEM };
const STRIPE = { SVC_BILLING_PROVIDER: "stripe", SVC_STRIPE_SECRET_KEY: "sk_test", SVC_STRIPE_WEBHOOK_SECRET: "whsec", SVC_STRIPE_PRICE_ID: "price_1" };

describe("loadConfig defaults", () => {
  test("an empty environment gives the documented defaults", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      dataDir: resolve("./data"),
      database: null,
      httpHost: "127.0.0.1",
      httpPort: 8080,
      baseUrl: null,
      ssh: null,
      storage: { kind: "fs", root: resolve("./data/objects") },
      runnerClaimWaitMs: 20000,
      runnerHeartbeatTimeoutMs: 120000,
      notifyMailDelayMs: 10000,
      issueRateLimit: 200,
      mail: { transport: "null" },
      webhookSecret: null,
      webhookAllowPrivate: false,
      mirrorAllowPrivate: false,
      mirrorSyncIntervalMs: 600_000,
      app: null,
      billing: null,
      logLevel: "info",
      signupLimitPerAddress: 3,
      signupLimitGlobal: 300,
      metricsToken: null,
      gitMaxPush: 2 * 1024 ** 3,
      gitCacheBytes: 128 * 1024 ** 2,
    });
  });

  test("variables outside SVC_ are ignored", () => {
    expect(() => loadConfig({ PATH: "/bin", HOME: "/root", SVCX: "1" })).not.toThrow();
  });
});

describe("loadConfig accepts", () => {
  test("SVC_DATABASE_URL postgres:// and postgresql:// (PostgreSQL), with the pool size", () => {
    expect(loadConfig({ SVC_DATABASE_URL: "postgres://svc:p%40ss@db.internal:5433/svc_prod" }).database).toEqual({
      url: "postgres://svc:p%40ss@db.internal:5433/svc_prod",
      name: "svc_prod",
      pool: 16,
      listen: null,
    });
    expect(loadConfig({ SVC_DATABASE_URL: "postgresql://db/svc", SVC_DATABASE_POOL: "4" }).database).toMatchObject({ name: "svc", pool: 4 });
    expect(loadConfig({ SVC_DATABASE_URL: "" }).database).toBeNull();
  });

  test("SVC_DATABASE_LISTEN_URL: the LISTEN connection's own address (PgBouncer in transaction mode)", () => {
    const env = { SVC_DATABASE_URL: "postgres://svc@pgbouncer:6432/svc", SVC_DATABASE_LISTEN_URL: "postgresql://svc@db.internal:5432/svc" };
    expect(loadConfig(env).database).toMatchObject({ url: env.SVC_DATABASE_URL, listen: { url: env.SVC_DATABASE_LISTEN_URL, name: "svc" } });
  });

  const rows: [string, Record<string, string>, Record<string, unknown>][] = [
    ["port 0 picks a free port", { SVC_HTTP_ADDR: "127.0.0.1:0" }, { httpHost: "127.0.0.1", httpPort: 0 }],
    ["a bracketed IPv6 address", { SVC_HTTP_ADDR: "[::1]:9000" }, { httpHost: "::1", httpPort: 9000 }],
    ["a hostname", { SVC_HTTP_ADDR: "0.0.0.0:80" }, { httpHost: "0.0.0.0", httpPort: 80 }],
    ["a data dir", { SVC_DATA_DIR: "/var/lib/svc" }, { dataDir: "/var/lib/svc", storage: { kind: "fs", root: "/var/lib/svc/objects" } }],
    ["an https base URL", { SVC_BASE_URL: "https://git.example.com" }, { baseUrl: "https://git.example.com" }],
    ["SSH on", { SVC_SSH_ADDR: "127.0.0.1:2222" }, { ssh: { host: "127.0.0.1", port: 2222 } }],
    [
      "SSH with a public address",
      { SVC_SSH_ADDR: "0.0.0.0:2222", SVC_SSH_PUBLIC: "git.example.com:22" },
      { ssh: { host: "0.0.0.0", port: 2222, publicAddr: "git.example.com:22" } },
    ],
    ["s3 storage", S3, { storage: { kind: "s3", endpoint: "http://127.0.0.1:9000", bucket: "b", accessKey: "ak", secretKey: "sk" } }],
    ["a claim wait", { SVC_RUNNER_CLAIM_WAIT_MS: "500" }, { runnerClaimWaitMs: 500 }],
    ["a heartbeat timeout", { SVC_RUNNER_HEARTBEAT_TIMEOUT_MS: "3000" }, { runnerHeartbeatTimeoutMs: 3000 }],
    ["notification mail at once", { SVC_NOTIFY_MAIL_DELAY_MS: "0" }, { notifyMailDelayMs: 0 }],
    ["notification mail after 10 minutes", { SVC_NOTIFY_MAIL_DELAY_MS: "600000" }, { notifyMailDelayMs: 600000 }],
    ["capture mail", { SVC_MAIL_TRANSPORT: "capture", SVC_MAIL_DIR: "/tmp/mail" }, { mail: { transport: "capture", dir: "/tmp/mail" } }],
    [
      "smtp mail with a port",
      { SVC_MAIL_TRANSPORT: "smtp", SVC_MAIL_SMTP_HOST: "mail.example.com:2525", SVC_MAIL_FROM: "svc@example.com" },
      { mail: { transport: "smtp", host: "mail.example.com", port: 2525 } },
    ],
    [
      "smtp mail without a port",
      { SVC_MAIL_TRANSPORT: "smtp", SVC_MAIL_SMTP_HOST: "mail.example.com", SVC_MAIL_FROM: "svc@example.com" },
      { mail: { transport: "smtp", host: "mail.example.com" } },
    ],
    [
      "smtp credentials to loopback",
      {
        SVC_MAIL_TRANSPORT: "smtp",
        SVC_MAIL_SMTP_HOST: "127.0.0.1:2525",
        SVC_MAIL_FROM: "svc@example.com",
        SVC_MAIL_SMTP_USER: "u",
        SVC_MAIL_SMTP_PASSWORD: "p",
      },
      { mail: { transport: "smtp", host: "127.0.0.1", port: 2525 } },
    ],
    [
      "smtp credentials to a remote host when allowed",
      {
        SVC_MAIL_TRANSPORT: "smtp",
        SVC_MAIL_SMTP_HOST: "mail.example.com",
        SVC_MAIL_FROM: "svc@example.com",
        SVC_MAIL_SMTP_USER: "u",
        SVC_MAIL_SMTP_PASSWORD: "p",
        SVC_MAIL_SMTP_ALLOW_CLEARTEXT_AUTH: "1",
      },
      { mail: { transport: "smtp", host: "mail.example.com" } },
    ],
    [
      "cloudmail with a region",
      { SVC_MAIL_TRANSPORT: "cloudmail", SVC_MAIL_FROM: "svc@example.com", SVC_MAIL_CLOUD_REGION: "eu-central-1" },
      { mail: { transport: "cloudmail", region: "eu-central-1" } },
    ],
    [
      "cloudmail defaults to the ambient region",
      { SVC_MAIL_TRANSPORT: "cloudmail", SVC_MAIL_FROM: "svc@example.com", AWS_REGION: "ap-south-1" },
      { mail: { transport: "cloudmail", region: "ap-south-1" } },
    ],
    ["a webhook secret", { SVC_WEBHOOK_SECRET: "s3cret" }, { webhookSecret: "s3cret" }],
    ["private receivers allowed (and so private origins)", { SVC_WEBHOOK_ALLOW_PRIVATE: "1" }, { webhookAllowPrivate: true, mirrorAllowPrivate: true }],
    [
      "private receivers allowed, private origins not",
      { SVC_WEBHOOK_ALLOW_PRIVATE: "1", SVC_MIRROR_ALLOW_PRIVATE: "0" },
      { webhookAllowPrivate: true, mirrorAllowPrivate: false },
    ],
    ["private origins only", { SVC_MIRROR_ALLOW_PRIVATE: "1" }, { webhookAllowPrivate: false, mirrorAllowPrivate: true }],
    ["a mirror sync interval", { SVC_MIRROR_SYNC_INTERVAL_S: "3600" }, { mirrorSyncIntervalMs: 3_600_000 }],
    ["the app provider", APP, { app: { id: "4242", apiUrl: "https://api.example.com", privateKey: RSA_PEM } }],
    [
      "the app key with escaped newlines, as env files write it",
      { ...APP, SVC_APP_PRIVATE_KEY: RSA_PEM.replaceAll("\n", "\\n") },
      { app: { privateKey: RSA_PEM } },
    ],
    [
      "stripe billing",
      STRIPE,
      {
        billing: {
          provider: "stripe",
          secretKey: "sk_test",
          priceId: "price_1",
          apiBase: "https://api.stripe.com",
          freeSeats: 5,
          freeMinutes: 2000,
          minutesPerSeat: 1000,
        },
      },
    ],
    [
      "billing allowances",
      {
        ...STRIPE,
        SVC_BILLING_FREE_SEATS: "0",
        SVC_BILLING_FREE_MINUTES: "unlimited",
        SVC_BILLING_MINUTES_PER_SEAT: "250",
        SVC_STRIPE_API_BASE: "http://127.0.0.1:4242/",
      },
      { billing: { freeSeats: 0, freeMinutes: null, minutesPerSeat: 250, apiBase: "http://127.0.0.1:4242" } },
    ],
    ["each log level", { SVC_LOG: "debug" }, { logLevel: "debug" }],
    ["a metrics token", { SVC_METRICS_TOKEN: "0123456789abcdef" }, { metricsToken: "0123456789abcdef" }],
    ["a push limit in bytes", { SVC_GIT_MAX_PUSH: "104857600" }, { gitMaxPush: 100 * 1024 ** 2 }],
    ["a push limit with a unit", { SVC_GIT_MAX_PUSH: "500m" }, { gitMaxPush: 500 * 1024 ** 2 }],
    ["a push limit in GiB", { SVC_GIT_MAX_PUSH: "4GiB" }, { gitMaxPush: 4 * 1024 ** 3 }],
    ["a git cache budget", { SVC_GIT_CACHE: "48m" }, { gitCacheBytes: 48 * 1024 ** 2 }],
  ];
  test.each(rows)("%s", (_name, env, expected) => {
    expect(loadConfig(env)).toMatchObject(expected);
  });
});

describe("loadConfig refuses a malformed value, naming the variable", () => {
  const rows: [string, Record<string, string>, string][] = [
    ["an unknown SVC_ variable", { SVC_FOO: "1" }, "SVC_FOO"],
    ["a misspelt variable", { SVC_HTTP_ADR: "127.0.0.1:1" }, "SVC_HTTP_ADR"],
    ["SVC_HTTP_ADDR nonsense", { SVC_HTTP_ADDR: "nonsense" }, "SVC_HTTP_ADDR"],
    ["SVC_HTTP_ADDR without host", { SVC_HTTP_ADDR: ":8080" }, "SVC_HTTP_ADDR"],
    ["SVC_HTTP_ADDR port out of range", { SVC_HTTP_ADDR: "127.0.0.1:65536" }, "SVC_HTTP_ADDR"],
    ["SVC_HTTP_ADDR port not a number", { SVC_HTTP_ADDR: "127.0.0.1:http" }, "SVC_HTTP_ADDR"],
    ["SVC_BASE_URL not a URL", { SVC_BASE_URL: "git.example.com" }, "SVC_BASE_URL"],
    ["SVC_BASE_URL not http", { SVC_BASE_URL: "ftp://git.example.com" }, "SVC_BASE_URL"],
    ["SVC_SSH_ADDR malformed", { SVC_SSH_ADDR: "localhost" }, "SVC_SSH_ADDR"],
    ["SVC_SSH_PUBLIC malformed", { SVC_SSH_ADDR: "127.0.0.1:2222", SVC_SSH_PUBLIC: "git.example.com" }, "SVC_SSH_PUBLIC"],
    ["SVC_STORAGE unknown", { SVC_STORAGE: "gcs" }, "SVC_STORAGE"],
    ["SVC_DATABASE_URL of another database", { SVC_DATABASE_URL: "mysql://svc@db/svc" }, "SVC_DATABASE_URL"],
    ["SVC_DATABASE_URL a file path", { SVC_DATABASE_URL: "/var/lib/svc/svc.db" }, "SVC_DATABASE_URL"],
    ["SVC_DATABASE_URL without a database", { SVC_DATABASE_URL: "postgres://svc@db" }, "SVC_DATABASE_URL"],
    ["SVC_DATABASE_LISTEN_URL without SVC_DATABASE_URL", { SVC_DATABASE_LISTEN_URL: "postgres://svc@db/svc" }, "SVC_DATABASE_LISTEN_URL"],
    [
      "SVC_DATABASE_LISTEN_URL of another database",
      { SVC_DATABASE_URL: "postgres://svc@db/svc", SVC_DATABASE_LISTEN_URL: "mysql://svc@db/svc" },
      "SVC_DATABASE_LISTEN_URL",
    ],
    ["SVC_DATABASE_POOL zero", { SVC_DATABASE_URL: "postgres://svc@db/svc", SVC_DATABASE_POOL: "0" }, "SVC_DATABASE_POOL"],
    ["s3 without endpoint", { SVC_STORAGE: "s3" }, "SVC_S3_ENDPOINT"],
    ["s3 endpoint not a URL", { ...S3, SVC_S3_ENDPOINT: "minio:9000" }, "SVC_S3_ENDPOINT"],
    ["s3 without bucket", { ...S3, SVC_S3_BUCKET: "" }, "SVC_S3_BUCKET"],
    ["s3 without access key", { ...S3, SVC_S3_ACCESS_KEY: "" }, "SVC_S3_ACCESS_KEY"],
    ["s3 without secret key", { ...S3, SVC_S3_SECRET_KEY: "" }, "SVC_S3_SECRET_KEY"],
    ["claim wait not a number", { SVC_RUNNER_CLAIM_WAIT_MS: "soon" }, "SVC_RUNNER_CLAIM_WAIT_MS"],
    ["claim wait zero", { SVC_RUNNER_CLAIM_WAIT_MS: "0" }, "SVC_RUNNER_CLAIM_WAIT_MS"],
    ["claim wait negative", { SVC_RUNNER_CLAIM_WAIT_MS: "-5" }, "SVC_RUNNER_CLAIM_WAIT_MS"],
    ["heartbeat timeout not a number", { SVC_RUNNER_HEARTBEAT_TIMEOUT_MS: "2m" }, "SVC_RUNNER_HEARTBEAT_TIMEOUT_MS"],
    ["notification mail delay past 10 minutes", { SVC_NOTIFY_MAIL_DELAY_MS: "600001" }, "SVC_NOTIFY_MAIL_DELAY_MS"],
    ["notification mail delay negative", { SVC_NOTIFY_MAIL_DELAY_MS: "-1" }, "SVC_NOTIFY_MAIL_DELAY_MS"],
    ["mail transport unknown", { SVC_MAIL_TRANSPORT: "pigeon" }, "SVC_MAIL_TRANSPORT"],
    ["capture without a dir", { SVC_MAIL_TRANSPORT: "capture" }, "SVC_MAIL_DIR"],
    ["smtp without a host", { SVC_MAIL_TRANSPORT: "smtp", SVC_MAIL_FROM: "svc@example.com" }, "SVC_MAIL_SMTP_HOST"],
    [
      "smtp host with a bad port",
      { SVC_MAIL_TRANSPORT: "smtp", SVC_MAIL_SMTP_HOST: "mail.example.com:smtp", SVC_MAIL_FROM: "svc@example.com" },
      "SVC_MAIL_SMTP_HOST",
    ],
    ["smtp without a sender", { SVC_MAIL_TRANSPORT: "smtp", SVC_MAIL_SMTP_HOST: "mail.example.com" }, "SVC_MAIL_FROM"],
    ["cloudmail without a sender", { SVC_MAIL_TRANSPORT: "cloudmail" }, "SVC_MAIL_FROM"],
    ["billing provider unknown", { SVC_BILLING_PROVIDER: "paypal" }, "SVC_BILLING_PROVIDER"],
    ["stripe without a secret key", { ...STRIPE, SVC_STRIPE_SECRET_KEY: "" }, "SVC_STRIPE_SECRET_KEY"],
    ["stripe without a webhook secret", { ...STRIPE, SVC_STRIPE_WEBHOOK_SECRET: "" }, "SVC_STRIPE_WEBHOOK_SECRET"],
    ["stripe without a price", { ...STRIPE, SVC_STRIPE_PRICE_ID: "" }, "SVC_STRIPE_PRICE_ID"],
    ["stripe API base not a URL", { ...STRIPE, SVC_STRIPE_API_BASE: "localhost" }, "SVC_STRIPE_API_BASE"],
    ["free seats not a count", { ...STRIPE, SVC_BILLING_FREE_SEATS: "-1" }, "SVC_BILLING_FREE_SEATS"],
    ["free minutes not a count", { ...STRIPE, SVC_BILLING_FREE_MINUTES: "lots" }, "SVC_BILLING_FREE_MINUTES"],
    ["minutes per seat not a count", { ...STRIPE, SVC_BILLING_MINUTES_PER_SEAT: "1.5" }, "SVC_BILLING_MINUTES_PER_SEAT"],
    ["app without a private key", { SVC_APP_ID: "1", SVC_APP_API_URL: "https://api.example.com" }, "SVC_APP_PRIVATE_KEY"],
    ["app without an API URL", { SVC_APP_ID: "1", SVC_APP_PRIVATE_KEY: "k" }, "SVC_APP_API_URL"],
    ["app key not a PEM key", { ...APP, SVC_APP_PRIVATE_KEY: "not a key" }, "SVC_APP_PRIVATE_KEY"],
    ["app key not RSA", { ...APP, SVC_APP_PRIVATE_KEY: EC_PEM }, "SVC_APP_PRIVATE_KEY"],
    ["app settings without SVC_APP_ID", { SVC_APP_API_URL: "https://api.example.com" }, "SVC_APP_ID"],
    ["SVC_WEBHOOK_ALLOW_PRIVATE not 0 or 1", { SVC_WEBHOOK_ALLOW_PRIVATE: "yes" }, "SVC_WEBHOOK_ALLOW_PRIVATE"],
    ["SVC_MIRROR_ALLOW_PRIVATE not 0 or 1", { SVC_MIRROR_ALLOW_PRIVATE: "true" }, "SVC_MIRROR_ALLOW_PRIVATE"],
    ["mirror sync interval under a minute", { SVC_MIRROR_SYNC_INTERVAL_S: "10" }, "SVC_MIRROR_SYNC_INTERVAL_S"],
    ["mirror sync interval not a number", { SVC_MIRROR_SYNC_INTERVAL_S: "hourly" }, "SVC_MIRROR_SYNC_INTERVAL_S"],
    ["log level unknown", { SVC_LOG: "loud" }, "SVC_LOG"],
    ["signup limit not a number", { SVC_SIGNUP_LIMIT_PER_ADDRESS: "many" }, "SVC_SIGNUP_LIMIT_PER_ADDRESS"],
    ["metrics token too short", { SVC_METRICS_TOKEN: "0123456789abcde" }, "SVC_METRICS_TOKEN"],
    ["metrics token with a space", { SVC_METRICS_TOKEN: "0123456789 abcdef" }, "SVC_METRICS_TOKEN"],
    ["push limit not a size", { SVC_GIT_MAX_PUSH: "lots" }, "SVC_GIT_MAX_PUSH"],
    ["git cache not a size", { SVC_GIT_CACHE: "plenty" }, "SVC_GIT_CACHE"],
    ["push limit negative", { SVC_GIT_MAX_PUSH: "-1" }, "SVC_GIT_MAX_PUSH"],
    ["push limit with an unknown unit", { SVC_GIT_MAX_PUSH: "2x" }, "SVC_GIT_MAX_PUSH"],
    ["push limit below 1 KiB", { SVC_GIT_MAX_PUSH: "100" }, "SVC_GIT_MAX_PUSH"],
    ["push limit above 1 TiB", { SVC_GIT_MAX_PUSH: "2t" }, "SVC_GIT_MAX_PUSH"],
  ];
  test.each(rows)("%s", (_name, env, variable) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain(variable);
    expect(message).not.toContain("\n");
  });

  test("cleartext SMTP credentials to a remote host are refused at boot", () => {
    const env = {
      SVC_MAIL_TRANSPORT: "smtp",
      SVC_MAIL_SMTP_HOST: "mail.example.com",
      SVC_MAIL_FROM: "svc@example.com",
      SVC_MAIL_SMTP_USER: "u",
      SVC_MAIL_SMTP_PASSWORD: "p",
    };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(/SVC_MAIL_SMTP_(USER|PASSWORD|ALLOW_CLEARTEXT_AUTH)/);
  });
});
