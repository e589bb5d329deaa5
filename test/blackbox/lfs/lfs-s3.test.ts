// Git LFS on S3 (s3rver in a child process): the batch answers presigned URLs of the bucket, and
// the real `git lfs` client moves the bytes to and from it; svc moves none. The bucket's address
// for clients is SVC_S3_PUBLIC_ENDPOINT (another host name for the same s3rver).
import { startS3rver } from "../../helpers/s3rver.ts";
import { lfsScenarios } from "./lfs-scenarios.ts";

lfsScenarios("s3", async () => {
  const s3 = await startS3rver();
  const publicEndpoint = s3.endpoint.replace("127.0.0.1", "localhost");
  return {
    env: {
      SVC_STORAGE: "s3",
      SVC_S3_ENDPOINT: s3.endpoint,
      SVC_S3_BUCKET: s3.bucket,
      SVC_S3_ACCESS_KEY: s3.accessKey,
      SVC_S3_SECRET_KEY: s3.secretKey,
      // Clients reach the bucket by another name than svc does: the hrefs are signed for that one.
      SVC_S3_PUBLIC_ENDPOINT: publicEndpoint,
    },
    endpoint: publicEndpoint,
    stop: () => s3.stop(),
  };
});
