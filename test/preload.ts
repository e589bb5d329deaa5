// Loaded by Bun before any test file (bunfig.toml `[test] preload`). Why here: Bun 1.4.5 does not
// read a `timeout` from bunfig.toml's [test] table, so `npx bun test test/unit` ran at Bun's 5 s
// default and black-box suites (which spawn the server and real git) timed out on a loaded
// machine. A `--timeout` given on the command line still wins (npm test passes the same value).
import { setDefaultTimeout } from "bun:test";
import { readFileSync } from "node:fs";

/** The default timeout of every test and hook, in milliseconds. */
export const TEST_TIMEOUT_MS = 120_000;

function timeoutOnCommandLine(): boolean {
  try {
    return readFileSync("/proc/self/cmdline", "utf8").split("\0").some((a) => a === "--timeout" || a.startsWith("--timeout="));
  } catch {
    return false;
  }
}

if (!timeoutOnCommandLine()) setDefaultTimeout(TEST_TIMEOUT_MS);
