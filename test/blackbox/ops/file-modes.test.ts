// Issue 11, finding "svc.db and its WAL are created world-readable (0644)": they hold password
// and token hashes. The data dir is 0700, the database files and host keys 0600, and files an
// older version (or a restore) left readable are tightened on the next start.
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSshServer } from "../../helpers/ssh.ts";
import { createUser } from "../../helpers/server.ts";

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** Modes of the data dir and of the files that hold secrets (those that exist). */
function modes(dataDir: string): Record<string, string> {
  const out: Record<string, string> = { "": mode(dataDir) };
  for (const f of ["svc.db", "svc.db-wal", "svc.db-shm", "ssh_host_ed25519_key", "ssh_host_rsa_key"])
    if (existsSync(join(dataDir, f))) out[f] = mode(join(dataDir, f));
  return out;
}

describe("file modes", () => {
  test("a new data dir is 0700; the database, its WAL and shared memory, and the host keys 0600", async () => {
    const root = mkdtempSync(join(tmpdir(), "svc-modes-"));
    const dataDir = join(root, "data");
    try {
      const server = await startSshServer({ dataDir });
      await createUser(server, { org: "acme", email: "owner@example.com" });
      expect(modes(dataDir)).toEqual({
        "": "700",
        "svc.db": "600",
        "svc.db-wal": "600",
        "svc.db-shm": "600",
        ssh_host_ed25519_key: "600",
        ssh_host_rsa_key: "600",
      });
      await server.stop();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);

  test("files left world-readable are tightened on the next start", async () => {
    const root = mkdtempSync(join(tmpdir(), "svc-modes-"));
    const dataDir = join(root, "data");
    try {
      const first = await startSshServer({ dataDir });
      await createUser(first, { org: "acme", email: "owner@example.com" });
      await first.stop();
      chmodSync(dataDir, 0o755);
      for (const f of ["svc.db", "svc.db-wal", "svc.db-shm", "ssh_host_ed25519_key", "ssh_host_rsa_key"])
        if (existsSync(join(dataDir, f))) chmodSync(join(dataDir, f), 0o644);
      const second = await startSshServer({ dataDir });
      const seen = modes(dataDir);
      expect(seen).toEqual(Object.fromEntries(Object.keys(seen).map((f) => [f, f === "" ? "700" : "600"])));
      expect(Object.keys(seen)).toContain("svc.db");
      await second.stop();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
