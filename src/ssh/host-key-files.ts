// The data-dir files holding the SSH host keys, named without loading ssh2: `svc backup` and
// `svc restore` carry them (clients pin the keys), and cli/index.ts imports those commands into
// every process, `svc serve` with SSH off included. ssh2's crypto keeps a WebAssembly module
// alive that raises a server's RSS under load (bench/history/2026-11-21-api-repo-read.md), so
// only src/ssh/host-keys.ts and the SSH server, loaded on demand, import ssh2. The names are
// defined beside the database copy of the keys (services/ops/host-keys.ts: `node_secrets` rows
// carry the same names), so `svc migrate-db` finds the files without importing this layer.
export { HOST_KEY_FILES, HOST_KEY_NAMES } from "../services/ops/host-keys.ts";
