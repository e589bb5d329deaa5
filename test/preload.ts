// Loaded by Bun before any test file (bunfig.toml `[test] preload`). Why: Bun 1.4.5 reads the
// default test timeout only from the command line (`--timeout`); a `timeout` under bunfig.toml's
// [test] is not parsed (oven-sh/bun#7789), and setDefaultTimeout() applies to the file that calls
// it only, so from here it would cover the first file alone. So each test file, as Bun loads it,
// starts with that call (on its first line: line numbers stay the same), and `npx bun test
// test/unit` runs with the same default as `npm test` instead of Bun's 5 s, which black-box
// suites (they spawn the server and real git) and git-comparison unit tests exceed on a loaded
// machine. A `--timeout` given on the command line wins; a file's own setDefaultTimeout() too.
import { plugin } from "bun";
import { readFileSync } from "node:fs";

/** The default timeout of every test and hook, in milliseconds (what package.json's `npm test` passes too). */
export const TEST_TIMEOUT_MS = 120_000;

function timeoutOnCommandLine(): boolean {
  try {
    return readFileSync("/proc/self/cmdline", "utf8")
      .split("\0")
      .some((a) => a === "--timeout" || a.startsWith("--timeout="));
  } catch {
    return false;
  }
}

if (!timeoutOnCommandLine()) {
  plugin({
    name: "svc-test-timeout",
    setup(build) {
      build.onLoad({ filter: /\.test\.ts$/ }, async (args) => ({
        contents: `import { setDefaultTimeout as __svcDefaultTimeout } from "bun:test"; __svcDefaultTimeout(${TEST_TIMEOUT_MS}); ${await Bun.file(args.path).text()}`,
        loader: "ts",
      }));
    },
  });
}
