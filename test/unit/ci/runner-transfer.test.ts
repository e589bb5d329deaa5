// Which byte-transfer addresses get the job token (issue 30): the server's own runner routes only,
// never a bucket, not even one reached through the server's host.
import { describe, expect, test } from "bun:test";
import type { ActionHost } from "../../../cli/runner/action-host.ts";
import { transferTarget } from "../../../cli/runner/builtins/transfer.ts";

const host = { base: "https://svc.example.com", token: "job-token" } as unknown as ActionHost;
const auth = (url: string) => transferTarget(host, url, { "x-a": "1" }).headers.authorization ?? null;

describe("transferTarget", () => {
  test("the server's runner routes (absolute or relative) get the token", () => {
    expect(auth("https://svc.example.com/v1/runner/jobs/j/caches/c/content")).toBe("Bearer job-token");
    expect(auth("/v1/runner/jobs/j/caches/c/content")).toBe("Bearer job-token");
    expect(transferTarget(host, "/v1/runner/jobs/j/caches/c/content", {}).url).toBe("https://svc.example.com/v1/runner/jobs/j/caches/c/content");
  });
  test("a bucket never does: another origin, another path on the same origin, or a presigned URL", () => {
    expect(auth("https://bucket.s3.example.com/repos/r/ci-caches/c?X-Amz-Signature=ab")).toBeNull();
    expect(auth("https://svc.example.com/bucket/repos/r/ci-caches/c?X-Amz-Signature=ab")).toBeNull();
    expect(auth("https://svc.example.com/v1/runner/x?X-Amz-Signature=ab")).toBeNull();
    expect(auth("http://svc.example.com/v1/runner/jobs/j/caches/c/content")).toBeNull();
    expect(transferTarget(host, "https://bucket.example.com/k", { "x-a": "1" }).headers).toEqual({ "x-a": "1" });
  });
});
