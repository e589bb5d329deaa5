// What the benchmark ran on: CPU model, cores, memory, kernel, Bun version.
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, release } from "node:os";

export interface Machine {
  cpu: string;
  cores: number;
  memory_mb: number;
  kernel: string;
  bun: string;
}

/** The line value `key: value` from a /proc text file, or null. */
function procField(file: string, key: string): string | null {
  try {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const i = line.indexOf(":");
      if (i > 0 && line.slice(0, i).trim() === key) return line.slice(i + 1).trim();
    }
  } catch {
    // not Linux, or /proc unavailable
  }
  return null;
}

/** The machine the benchmark runs on. */
export function machine(): Machine {
  const memKb = Number((procField("/proc/meminfo", "MemTotal") ?? "0").replace(/\D/g, ""));
  return {
    cpu: procField("/proc/cpuinfo", "model name") ?? "unknown",
    cores: availableParallelism(),
    memory_mb: Math.round(memKb / 1024),
    kernel: release(),
    bun: Bun.version,
  };
}

/** Resident set size (and its peak) of a process, in MB, from /proc/<pid>/status. */
export function rssOf(pid: number): { rss_mb: number; peak_mb: number } {
  const kb = (key: string) => Number((procField(`/proc/${pid}/status`, key) ?? "0").replace(/\D/g, ""));
  return { rss_mb: Math.round((kb("VmRSS") / 1024) * 10) / 10, peak_mb: Math.round((kb("VmHWM") / 1024) * 10) / 10 };
}

/** Resets a process's peak RSS (VmHWM) to its current RSS; false when not permitted. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Polls VmRSS every `everyMs` until stopped; resolves with the largest value seen (MB). */
export function sampleRss(pid: number, everyMs = 100): { stop(): number } {
  let max = rssOf(pid).rss_mb;
  const timer = setInterval(() => {
    max = Math.max(max, rssOf(pid).rss_mb);
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(max, rssOf(pid).rss_mb);
    },
  };
}
