// Moved to services/mirrors/inbound.ts (issue 26: mirror triggers are a mirrors feature). Kept for
// src/http/app.ts (another work package's file) until the integrator removes the shims.
export * from "../mirrors/inbound.ts";
