// git smart HTTP against an S3-compatible store (s3rver in a child process): the shared scenarios.
import { startS3rver } from "../../helpers/s3rver.ts";
import { gitScenarios } from "./git-scenarios.ts";

gitScenarios("the s3 backend", async () => {
  const s3 = await startS3rver();
  return {
    env: {
      SVC_STORAGE: "s3",
      SVC_S3_ENDPOINT: s3.endpoint,
      SVC_S3_BUCKET: s3.bucket,
      SVC_S3_ACCESS_KEY: s3.accessKey,
      SVC_S3_SECRET_KEY: s3.secretKey,
    },
    stop: () => s3.stop(),
  };
});
