// Moved to services/git/purge.ts (issue 26: storage is git's). Kept for src/runtime.ts (another
// work package's file) until the integrator removes the shims.
export { purgeRepoStorage } from "../git/purge.ts";
