// Request and response shapes of the agent's cache calls (issue 30, `actions/cache`): lookup,
// reserve, commit. Bounds the schema can say are said here (the service checks them again with
// GitHub's messages); the size limit is a setting, checked by the service.
import { Type, type Static } from "@sinclair/typebox";

const Key = Type.String({ minLength: 1, maxLength: 512, description: "the cache key: at most 512 characters, no commas (GitHub's rules)" });
const Version = Type.String({
  minLength: 16,
  maxLength: 128,
  description: "a hex digest of what the cache holds (the agent's: SHA-256 of the paths); another version is another cache",
});

const TransferUrl = Type.String({ description: "an absolute presigned bucket URL (add no credential), or a path on this server (send the job token)" });
const TransferHeaders = Type.Record(Type.String(), Type.String(), { description: "extra request headers to send as given" });
/** Where a client fetches bytes: the bucket itself (S3, presigned) or a path on this server (fs: the job token authorizes). */
const Download = Type.Object({ url: TransferUrl, headers: TransferHeaders });
/** Where a client sends bytes, the same way. */
const Upload = Type.Object({ url: TransferUrl, method: Type.String({ description: "always PUT" }), headers: TransferHeaders });

export const CacheLookup = Type.Object(
  {
    key: Key,
    restore_keys: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 512 }), { maxItems: 10, description: "prefixes tried in order after the key" }),
    ),
    version: Version,
  },
  { examples: [{ key: "npm-linux-3f1c", restore_keys: ["npm-linux-"], version: "a".repeat(64) }] },
);
export type CacheLookup = Static<typeof CacheLookup>;

export const CacheHit = Type.Object(
  {
    cache_id: Type.String(),
    cache_key: Type.String({ description: "the key of the entry found (a restore key's match differs from the key asked)" }),
    size: Type.Integer({ description: "bytes of the archive" }),
    exact: Type.Boolean({ description: "true only when the key asked matched exactly (GitHub's cache-hit)" }),
    scope: Type.String({ description: "the scope it came from: the job's ref, or the default branch's" }),
    download: Download,
  },
  {
    examples: [
      {
        cache_id: "k3v7q2m4a6c8e0g2",
        cache_key: "npm-linux-3f1c",
        size: 52_428_800,
        exact: true,
        scope: "refs/heads/main",
        download: { url: "/v1/runner/jobs/q2m4a6c8e0g2k3v7/caches/k3v7q2m4a6c8e0g2/content", headers: {} },
      },
    ],
  },
);
export type CacheHit = Static<typeof CacheHit>;

export const CacheReserve = Type.Object(
  {
    key: Key,
    version: Version,
    size: Type.Integer({ minimum: 0, description: "bytes of the archive to upload: at most SVC_CI_CACHE_MAX (on S3 also 5 GiB)" }),
    sha256: Type.Optional(
      Type.String({
        pattern: "^[0-9a-fA-F]{64}$",
        description: "SHA-256 of the archive (hex). Required on S3: the presigned PUT signs it as x-amz-checksum-sha256, so the bucket takes no other body",
      }),
    ),
  },
  { examples: [{ key: "npm-linux-3f1c", version: "a".repeat(64), size: 52_428_800, sha256: "b".repeat(64) }] },
);
export type CacheReserve = Static<typeof CacheReserve>;

export const CacheReserved = Type.Object(
  {
    cache_id: Type.String(),
    upload: Upload,
  },
  {
    examples: [
      { cache_id: "k3v7q2m4a6c8e0g2", upload: { url: "/v1/runner/jobs/q2m4a6c8e0g2k3v7/caches/k3v7q2m4a6c8e0g2/content", method: "PUT", headers: {} } },
    ],
  },
);
export type CacheReserved = Static<typeof CacheReserved>;

export const CacheCommitted = Type.Object(
  { cache_id: Type.String(), size: Type.Integer() },
  { examples: [{ cache_id: "k3v7q2m4a6c8e0g2", size: 52_428_800 }] },
);
export type CacheCommitted = Static<typeof CacheCommitted>;
