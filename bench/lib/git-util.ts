// Helpers for the git benchmarks: running and timing commands, CPU and RSS accounting from
// /proc, free ports, machine description.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";

/** Environment for client git commands: no system/global config, no prompts, no GIT_* leaks. */
export function gitEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("GIT_") && !k.startsWith("SVC_")) env[k] = v;
  return { ...env, HOME: home, XDG_CONFIG_HOME: home, GIT_CONFIG_NOSYSTEM: "1", GIT_TERMINAL_PROMPT: "0", ...extra };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Wall-clock seconds. */
  wall: number;
  /** CPU seconds (user + system) of the process and the children it waited for. */
  cpu: number;
  /** Peak RSS of the process in bytes (as reported by the kernel on exit). */
  maxRss: number;
}

/** Runs a command to completion; wall time measured from spawn to exit. */
export async function run(
  cmd: string[],
  opts: { cwd?: string; env?: Record<string, string>; stdin?: "ignore" | Blob | string; check?: boolean } = {},
): Promise<RunResult> {
  const stdin = typeof opts.stdin === "string" ? Bun.file(opts.stdin) : (opts.stdin ?? "ignore");
  const t0 = performance.now();
  const p = Bun.spawn(cmd, { cwd: opts.cwd, env: opts.env, stdin, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  const wall = (performance.now() - t0) / 1000;
  const ru = p.resourceUsage();
  const cpu = ru ? Number(ru.cpuTime.user + ru.cpuTime.system) / 1e6 : NaN;
  const res = { code, stdout, stderr, wall, cpu, maxRss: ru ? Number(ru.maxRSS) : NaN };
  if (opts.check !== false && code !== 0) throw new Error(`${cmd.join(" ")} → exit ${code}\n${stderr.slice(-4000)}`);
  return res;
}

export function median(xs: number[]): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Asks the kernel for a free TCP port on 127.0.0.1 (bind to 0, read, close). */
export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** Waits until something accepts TCP connections on host:port. */
export async function waitPort(port: number, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const sock = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
      sock.end();
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port}`);
      await Bun.sleep(50);
    }
  }
}

/** CPU seconds of a process from /proc/<pid>/stat: own (utime+stime) and waited children. */
export function procCpu(pid: number): { self: number; children: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // after the comm field: state=0, ..., utime=11, stime=12, cutime=13, cstime=14 (clock ticks)
  const hz = 100;
  return { self: (Number(f[11]) + Number(f[12])) / hz, children: (Number(f[13]) + Number(f[14])) / hz };
}

function statusKb(pid: number, key: string): number {
  try {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The pid and all its descendants (from /proc/<pid>/task/<tid>/children). */
export function processTree(pid: number): number[] {
  const out: number[] = [];
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop()!;
    out.push(p);
    try {
      for (const tid of readdirSync(`/proc/${p}/task`)) {
        const kids = readFileSync(`/proc/${p}/task/${tid}/children`, "utf8").trim();
        if (kids) for (const k of kids.split(" ")) stack.push(Number(k));
      }
    } catch {}
  }
  return out;
}

/** Sum of VmRSS over a process tree (the C git daemon forks upload-pack and pack-objects). */
export function treeRss(pid: number): number {
  let sum = 0;
  for (const p of processTree(pid)) {
    const v = statusKb(p, "VmRSS");
    if (!Number.isNaN(v)) sum += v;
  }
  return sum;
}

/**
 * Samples VmRSS of a process every `intervalMs` and keeps the peak. Also resets the kernel's
 * high-water mark (clear_refs 5) at start and reads VmHWM at stop, which catches peaks
 * between samples.
 */
export class RssSampler {
  private timer: ReturnType<typeof setInterval> | null = null;
  private peak = 0;
  private first = NaN;
  private samples = 0;
  private hwmReset = false;
  private t0 = 0;
  /** [milliseconds since start, bytes] for every sample. */
  readonly timeline: [number, number][] = [];

  /** With `tree`, sums VmRSS over the process and its descendants (no VmHWM then). */
  constructor(
    private readonly pid: number,
    private readonly intervalMs = 50,
    private readonly tree = false,
  ) {}

  private read(): number {
    return this.tree ? treeRss(this.pid) : statusKb(this.pid, "VmRSS");
  }

  start(): this {
    try {
      if (this.tree) throw new Error("tree");
      writeFileSync(`/proc/${this.pid}/clear_refs`, "5");
      this.hwmReset = true;
    } catch {
      this.hwmReset = false;
    }
    this.first = this.read();
    this.peak = this.first;
    this.t0 = performance.now();
    this.timeline.push([0, this.first]);
    const tick = () => {
      const v = this.read();
      this.samples++;
      this.timeline.push([Math.round(performance.now() - this.t0), v]);
      if (v > this.peak) this.peak = v;
    };
    this.timer = setInterval(tick, this.intervalMs);
    return this;
  }

  stop(): { startBytes: number; peakSampledBytes: number; peakHwmBytes: number | null; endBytes: number; samples: number } {
    if (this.timer) clearInterval(this.timer);
    const end = this.read();
    if (end > this.peak) this.peak = end;
    return {
      startBytes: this.first,
      peakSampledBytes: this.peak,
      peakHwmBytes: this.hwmReset ? statusKb(this.pid, "VmHWM") : null,
      endBytes: end,
      samples: this.samples,
    };
  }
}

export function mb(bytes: number): number {
  return round(bytes / 1048576, 1);
}

/** CPU model, cores, memory, kernel, git and bun versions, load average. */
export async function machineInfo(): Promise<Record<string, unknown>> {
  const cpuinfo = existsSync("/proc/cpuinfo") ? readFileSync("/proc/cpuinfo", "utf8") : "";
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? "unknown";
  const git = (await run(["git", "--version"])).stdout.trim();
  const kernel = (await run(["uname", "-sr"])).stdout.trim();
  return {
    cpu: model,
    cores: cpus().length,
    memoryGiB: round(totalmem() / 1073741824, 1),
    kernel,
    git,
    bun: Bun.version,
    loadavg: loadavg().map((x) => round(x, 2)),
  };
}
