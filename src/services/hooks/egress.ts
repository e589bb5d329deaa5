// Moved to src/util/egress.ts (issue 26, domain order: webhooks and mirrors share it). Kept for
// importers in other work packages' files until the integrator removes the shims.
export * from "../../util/egress.ts";
