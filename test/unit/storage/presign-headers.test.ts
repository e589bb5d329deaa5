// The presigner that signs headers (Git LFS uploads: x-amz-checksum-sha256) against minio's own
// SigV4 presigner, which signs every header it is given: the same request gives the same URL.
// Why this test: s3rver, the S3 of the black-box tests, does not verify V4 signatures at all.
import { describe, expect, test } from "bun:test";
import { presignSignatureV4 } from "minio/dist/esm/signing.mjs";
import { presignWithHeaders } from "../../../src/storage/s3-store.ts";

describe("presignWithHeaders", () => {
  test("matches minio's SigV4 presigned URL for the same request and signed headers", () => {
    const date = new Date("2026-11-28T01:02:03.456Z");
    const headers = { "x-amz-checksum-sha256": Buffer.from("ab".repeat(32), "hex").toString("base64") };
    const ours = presignWithHeaders({
      origin: new URL("http://127.0.0.1:9000"),
      bucket: "svc-test",
      key: `lfs/net_1-x/ab/${"ab".repeat(32)}`,
      method: "PUT",
      expiry: 3600,
      headers,
      region: "us-east-1",
      accessKey: "AKIDEXAMPLE",
      secretKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
      date,
    });
    const theirs = presignSignatureV4(
      { method: "PUT", protocol: "http:", path: `/svc-test/lfs/net_1-x/ab/${"ab".repeat(32)}`, headers: { host: "127.0.0.1:9000", ...headers } },
      "AKIDEXAMPLE",
      "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
      undefined,
      "us-east-1",
      date,
      3600,
    );
    const sorted = (u: string) => {
      const url = new URL(u);
      return `${url.origin}${url.pathname}?${[...url.searchParams.entries()]
        .map(([k, v]) => `${k}=${v}`)
        .sort()
        .join("&")}`;
    };
    expect(sorted(ours)).toBe(sorted(theirs));
    expect(new URL(ours).searchParams.get("X-Amz-SignedHeaders")).toBe("host;x-amz-checksum-sha256");
  });

  test("signed query parameters (a GET's response-content-type) sign as minio signs them", () => {
    const date = new Date("2026-11-28T01:02:03Z");
    const query = { "response-content-type": "image/png", "response-content-disposition": 'attachment; filename="a b.png"' };
    const ours = presignWithHeaders({
      origin: new URL("https://s3.example.com"),
      bucket: "b",
      key: "lfs/n/ab/x",
      method: "GET",
      expiry: 300,
      headers: {},
      query,
      region: "eu-west-1",
      accessKey: "AK",
      secretKey: "SK",
      date,
    });
    const qs = Object.entries(query)
      .map(([k, v]) => `${k}=${encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`)
      .join("&");
    const theirs = presignSignatureV4(
      { method: "GET", protocol: "https:", path: `/b/lfs/n/ab/x?${qs}`, headers: { host: "s3.example.com" } },
      "AK",
      "SK",
      undefined,
      "eu-west-1",
      date,
      300,
    );
    expect(new URL(ours).searchParams.get("X-Amz-Signature")).toBe(new URL(theirs).searchParams.get("X-Amz-Signature"));
  });
});
