// Moved to services/git/purge.ts (issue 26: storage is git's). Kept for src/wiring.ts (another
// work package's file) until the integrator removes the shims.
export { purgeRepoStorage, REPO_PURGE, type PurgePayload } from "../git/purge.ts";
