// Why a queued job waits (waiting.ts): the hint for a hosted job that only the org's own runners
// could take (`runs-on: linux` written for a self-hosted machine).
import { describe, expect, test } from "bun:test";
import { selfHostedHint, waitingMessage } from "../../../src/services/ci/waiting.ts";

const org = [["self-hosted", "linux", "x64"]];

describe("selfHostedHint", () => {
  test("a hosted job whose labels only an org runner carries says to add self-hosted", () => {
    const m = selfHostedHint({ runsOn: ["linux"], hosted: true }, [], org);
    expect(m).toBe(
      "runs-on names no self-hosted label, so this job waits for an instance runner, and none has linux; your organization's runners do: write runs-on: [self-hosted, linux] to run it on them",
    );
    expect(selfHostedHint({ runsOn: ["Linux", "X64"], hosted: true }, [], org)).toContain("[self-hosted, Linux, X64]");
  });
  test("no hint when an instance runner could take it, no org runner could, or the job is self-hosted", () => {
    expect(selfHostedHint({ runsOn: ["linux"], hosted: true }, [["self-hosted", "linux", "x64"]], org)).toBeNull();
    expect(selfHostedHint({ runsOn: ["gpu"], hosted: true }, [], org)).toBeNull();
    expect(selfHostedHint({ runsOn: ["self-hosted", "linux"], hosted: false }, [], org)).toBeNull();
    expect(selfHostedHint({ runsOn: [], hosted: true }, [], org)).toBeNull();
  });
  test("GitHub's hosted labels keep their own message", () => {
    expect(waitingMessage({ runsOn: ["ubuntu-latest"], hosted: true }, [])).toContain("GitHub's hosted runner label");
  });
});
