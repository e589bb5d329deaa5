// Stopping a helper child process (s3rver, the fault proxy) so that a test's afterAll never
// waits on it: SIGTERM, then SIGKILL if it has not exited within the grace period.
import type { Subprocess } from "bun";

export async function stopChild(child: Subprocess, graceMs = 2_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const graceOver = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), graceMs)));
  const outcome = await Promise.race([child.exited, graceOver]);
  clearTimeout(timer);
  if (outcome === "late") {
    child.kill("SIGKILL");
    await child.exited;
  }
}
