// Request and response shapes of CI artifacts (issue 30): the agent's reservation, confirmation
// and listing (job token), and the API's list of a run's artifacts.
import { Type, type Static } from "@sinclair/typebox";

const EXAMPLE_ID = "a7k2m9p4q1r8s3t6";
const CREATED = 1795248971422;
const EXPIRES = CREATED + 90 * 24 * 3600 * 1000;

export const ArtifactReserve = Type.Object(
  {
    name: Type.String({ description: 'unique per run; at most 256 characters, none of " : < > | * ? \\r \\n \\ /', maxLength: 1024 }),
    size: Type.Integer({ description: "bytes of the zip to upload (at most 5 GiB; on fs also at most SVC_GIT_MAX_PUSH)" }),
    sha256: Type.Optional(Type.String({ description: "the zip's SHA-256 (hex); on fs the upload must match it" })),
    overwrite: Type.Optional(Type.Boolean({ description: "replace an artifact of this name uploaded earlier in the same attempt (default false: 409)" })),
    retention_days: Type.Optional(Type.Integer({ description: "days to keep it, capped at SVC_CI_ARTIFACT_DAYS (default: that setting)" })),
  },
  { examples: [{ name: "dist", size: 48213, sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", retention_days: 7 }] },
);
export type ArtifactReserve = Static<typeof ArtifactReserve>;

const TransferBody = Type.Object({
  url: Type.String({ description: "a presigned URL of the bucket (S3: send no credential), or svc's own address (fs: the job token as bearer)" }),
  headers: Type.Record(Type.String(), Type.String(), { description: "headers to send with the request" }),
});

export const ArtifactReserved = Type.Object(
  {
    artifact_id: Type.String(),
    expires_at: Type.Integer({ description: "epoch milliseconds" }),
    upload: Type.Object({ url: TransferBody.properties.url, method: Type.Literal("PUT"), headers: TransferBody.properties.headers }),
  },
  {
    examples: [
      {
        artifact_id: EXAMPLE_ID,
        expires_at: EXPIRES,
        upload: {
          url: `https://svc.example/v1/runner/jobs/j4n8b2c6d0e5f1g3/artifacts/${EXAMPLE_ID}/content`,
          method: "PUT",
          headers: { "content-type": "application/zip" },
        },
      },
    ],
  },
);

const artifactFields = Object.freeze({
  id: Type.String(),
  name: Type.String(),
  size: Type.Integer({ description: "bytes of the zip" }),
  expires_at: Type.Integer({ description: "epoch milliseconds; the zip answers 410 from then on, and the sweep deletes it within the hour" }),
  created_at: Type.Integer({ description: "epoch milliseconds" }),
  expired: Type.Boolean(),
});
const EXAMPLE = Object.freeze({ id: EXAMPLE_ID, name: "dist", size: 48213, expires_at: EXPIRES, created_at: CREATED, expired: false });

export const Artifact = Type.Object(artifactFields, { examples: [EXAMPLE] });

export const ArtifactList = Type.Object({ artifacts: Type.Array(Artifact) }, { examples: [{ artifacts: [EXAMPLE] }] });

export const RunnerArtifactList = Type.Object(
  { artifacts: Type.Array(Type.Object({ ...artifactFields, download: TransferBody })) },
  {
    examples: [
      {
        artifacts: [{ ...EXAMPLE, download: { url: `https://svc.example/v1/runner/jobs/j4n8b2c6d0e5f1g3/artifacts/${EXAMPLE_ID}/content`, headers: {} } }],
      },
    ],
  },
);
