// `<dataDir>/serve.lock`: the pid of the `svc serve` running on this data dir, written at start
// and removed at exit (issue 27). Commands that need the installation stopped (`svc migrate-db`)
// refuse while it names a live process; a lock left by a killed server names a dead pid and is
// ignored.
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const NAME = "serve.lock";

/** Writes this process's pid into `<dataDir>/serve.lock` (0600); answers the remover for exit. */
export function writeServeLock(dataDir: string): () => void {
  const path = join(dataDir, NAME);
  const mine = String(process.pid);
  writeFileSync(path, `${mine}\n`, { mode: 0o600 });
  return () => {
    try {
      // Why the check: another server started on this data dir since owns the file now.
      if (readFileSync(path, "utf8").trim() === mine) unlinkSync(path);
    } catch {
      // Gone already.
    }
  };
}

/** The pid of a live `svc serve` on `dataDir`, or null (no lock, or its process is gone). */
export function runningServer(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dataDir, NAME), "utf8").trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: the process exists but is another user's.
    return (error as { code?: string }).code === "EPERM" ? pid : null;
  }
}
