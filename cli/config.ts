// Loading configuration for a command: a bad value exits 2 with one line naming the variable.
import { ConfigError, loadConfig, type Config } from "../src/config.ts";

/** The validated configuration, or exit 2 with a one-line reason on stderr. */
export function configOrExit(overrides: Record<string, string | undefined> = {}): Config {
  try {
    const env = { ...process.env };
    for (const [k, v] of Object.entries(overrides)) if (v !== undefined) env[k] = v;
    return loadConfig(env);
  } catch (e) {
    return exitOnConfigError(e);
  }
}

/** Exits 2 with one line on stderr for a ConfigError; rethrows anything else. */
export function exitOnConfigError(e: unknown): never {
  if (e instanceof ConfigError) {
    process.stderr.write(`svc: configuration error: ${e.message}\n`);
    process.exit(2);
  }
  throw e;
}
