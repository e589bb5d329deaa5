// Moved to src/services/names.ts (issue 26, domain order). Kept for importers in other work
// packages' files until the integrator removes the shims.
export * from "../names.ts";
