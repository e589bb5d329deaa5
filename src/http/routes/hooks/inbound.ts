// Moved to src/http/routes/mirrors/inbound.ts (issue 26). Kept for src/http/app.ts (another work
// package's file) until the integrator removes the shims.
export * from "../mirrors/inbound.ts";
