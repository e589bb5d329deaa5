// The data-dir files holding the SSH host keys, named without loading ssh2: `svc backup` and
// `svc restore` carry them (clients pin the keys), and cli/index.ts imports those commands into
// every process, `svc serve` with SSH off included. ssh2's crypto keeps a WebAssembly module
// alive that raises a server's RSS under load (bench/history/2026-11-21-api-repo-read.md), so
// only src/ssh/host-keys.ts and the SSH server, loaded on demand, import ssh2.

/** The private key files, one per host key kind (ed25519, RSA); each has a `.pub` beside it. */
export const HOST_KEY_NAMES = Object.freeze({ ed25519: "ssh_host_ed25519_key", rsa: "ssh_host_rsa_key" } as const);

/** Every host key file a backup carries. */
export const HOST_KEY_FILES: readonly string[] = Object.freeze(Object.values(HOST_KEY_NAMES).flatMap((f) => [f, `${f}.pub`]));
